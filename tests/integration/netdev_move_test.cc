// linux.netDevices with veth pairs (this host has no dummy driver): the interface moves into
// the container's network namespace during create, renamed or not, keeps its permanent
// global addresses (not its link-scope one), is up inside, and goes away with the
// namespace after delete (a veth is destroyed; the spec forbids moving it back). Errors
// name the interface; a container without its own network namespace is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include "support/exec_helpers.h"

namespace berth::test {
namespace {

bool link_exists(const std::string& name, const std::string& netns = "") {
  std::vector<std::string> argv = {"ip", "link", "show", "dev", name};
  if (!netns.empty()) argv.insert(argv.begin() + 1, {"-n", netns});
  return run_cmd(argv).code == 0;
}

// A veth pair in the host's namespace; `a` carries a permanent global IPv4 and IPv6 address
// and a link-scope one. Both ends are deleted at the end, wherever they went.
class Veth {
 public:
  explicit Veth(const std::string& tag) {
    std::string n = std::to_string(::getpid() % 100000);
    a_ = "bv" + tag + n + "a";
    b_ = "bv" + tag + n + "b";
    sub_ = std::to_string(::getpid() % 200 + 10);
    ok_ = ip({"link", "add", a_, "type", "veth", "peer", "name", b_}) &&
          ip({"addr", "add", v4(), "dev", a_}) && ip({"addr", "add", v6(), "dev", a_, "nodad"}) &&
          ip({"addr", "add", "169.254." + sub_ + ".9/16", "dev", a_, "scope", "link"}) &&
          ip({"link", "set", a_, "up"}) && ip({"link", "set", b_, "up"});
  }
  ~Veth() {
    run_cmd({"ip", "link", "del", a_});
    run_cmd({"ip", "link", "del", b_});
  }
  bool ok() const { return ok_; }
  const std::string& a() const { return a_; }
  const std::string& b() const { return b_; }
  std::string v4() const { return "10.213." + sub_ + ".1/24"; }
  std::string v6() const { return "fd00:213::" + sub_ + "/64"; }
  std::string link_local() const { return "169.254." + sub_ + ".9/16"; }

 private:
  static bool ip(std::vector<std::string> args) {
    args.insert(args.begin(), "ip");
    auto r = run_cmd(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0;
  }
  std::string a_, b_, sub_;
  bool ok_ = false;
};

void expect_moved(const CmdResult& r, const Veth& v, const std::string& inside) {
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("inet " + v.v4() + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("inet6 " + v.v6() + " "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(v.link_local()), std::string::npos) << "link-scope addresses stay behind: " << r.out;
  EXPECT_NE(r.out.find(": " + inside + "@"), std::string::npos) << "named " << inside << " inside: " << r.out;
  EXPECT_NE(r.out.find(",UP"), std::string::npos) << "set up inside: " << r.out;
}

TEST(NetDevices, MovedRenamedAddressesKeptAndGoneAfterRun) {
  Veth v("r");
  ASSERT_TRUE(v.ok());
  Runtime rt;
  Bundle b;
  b.spec().linux->net_devices[v.a()] = {"ctr0"};
  b.script("ip addr show dev ctr0; ip link show dev lo >/dev/null").write();
  auto r = rt({"run", "--bundle", b.path(), "nd-run"});
  expect_moved(r, v, "ctr0");
  // run deleted the container: the namespace is freed (asynchronously) and a veth pair
  // dies with it, both ends.
  EXPECT_TRUE(eventually([&] { return !link_exists(v.a()) && !link_exists(v.b()) && !link_exists("ctr0"); }))
      << "veth pair still present after delete";
}

TEST(NetDevices, MovedDuringCreateKeepingItsName) {
  Veth v("c");
  ASSERT_TRUE(v.ok());
  Runtime rt;
  Bundle b;
  b.spec().linux->net_devices[v.a()] = {};
  b.script("ip addr show dev " + v.a()).write();
  auto c = rt({"create", "--bundle", b.path(), "nd-create"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_FALSE(link_exists(v.a())) << "gone from the host namespace once create returns";
  int pid = state_pid(rt, "nd-create");
  ASSERT_GT(pid, 0);
  auto seen = run_cmd({"nsenter", "--net=/proc/" + std::to_string(pid) + "/ns/net", "ip", "-o", "addr", "show", "dev", v.a()});
  EXPECT_EQ(seen.code, 0) << seen.err;
  EXPECT_NE(seen.out.find(v.v4()), std::string::npos) << seen.out;
  ASSERT_EQ(rt({"start", "nd-create"}).code, 0);
  EXPECT_TRUE(eventually([&] { return rt({"state", "nd-create"}).out.find("stopped") != std::string::npos; }));
  ASSERT_EQ(rt({"delete", "nd-create"}).code, 0);
  EXPECT_TRUE(eventually([&] { return !link_exists(v.a()) && !link_exists(v.b()); }));
}

TEST(NetDevices, CreateRuntimeHookSeesTheMovedInterface) {
  Veth v("k");
  ASSERT_TRUE(v.ok());
  Runtime rt;
  Bundle b;
  std::string seen = b.path() + "/hook.out";
  b.spec().linux->net_devices[v.a()] = {"ctr2"};
  b.spec().hooks.emplace();
  b.spec().hooks->create_runtime.push_back(
      {"/bin/sh",
       {"sh", "-c", "pid=$(sed -n 's/.*\"pid\": *\\([0-9]*\\).*/\\1/p'); "
                    "nsenter --net=/proc/$pid/ns/net ip -o addr show dev ctr2 > " + seen + " 2>&1"},
       {},
       {}});
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "nd-hook"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::string out = read_text(seen);
  EXPECT_NE(out.find(v.v4()), std::string::npos) << "the hook runs after the move: " << out;
}

TEST(NetDevices, TemplateNameIsNumberedByTheKernel) {
  Veth v("t");
  ASSERT_TRUE(v.ok());
  Runtime rt;
  Bundle b;
  b.spec().linux->net_devices[v.a()] = {"net%d"};
  b.script("ip addr show dev net0").write();
  expect_moved(rt({"run", "--bundle", b.path(), "nd-tmpl"}), v, "net0");
}

TEST(NetDevices, JoinedNamespaceKeepsTheInterfaceAfterDelete) {
  Veth v("j");
  ASSERT_TRUE(v.ok());
  std::string ns = "berth-it-nd" + std::to_string(::getpid());
  ASSERT_EQ(run_cmd({"ip", "netns", "add", ns}).code, 0);
  Runtime rt;
  Bundle b;
  for (auto& n : b.spec().linux->namespaces)
    if (n.type == "network") n.path = "/run/netns/" + ns;
  b.spec().linux->net_devices[v.a()] = {"eth7"};
  b.script("ip addr show dev eth7").write();
  expect_moved(rt({"run", "--bundle", b.path(), "nd-join"}), v, "eth7");
  // The namespace outlives the container: so does the interface in it (not moved back).
  auto after = run_cmd({"ip", "-n", ns, "addr", "show", "dev", "eth7"});
  EXPECT_EQ(after.code, 0) << after.err;
  EXPECT_NE(after.out.find(v.v4()), std::string::npos) << after.out;
  EXPECT_FALSE(link_exists(v.a()));
  EXPECT_EQ(run_cmd({"ip", "netns", "del", ns}).code, 0);
  EXPECT_TRUE(eventually([&] { return !link_exists(v.b()); }));
}

TEST(NetDevices, NameTakenInsideIsAnErrorNamingTheInterface) {
  Veth v("e");
  ASSERT_TRUE(v.ok());
  Runtime rt;
  Bundle b;
  b.spec().linux->net_devices[v.a()] = {"lo"};
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "nd-clash"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("linux.netDevices: interface " + v.a() + ": move it into the container network namespace as lo"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("file exists"), std::string::npos) << r.err;
  EXPECT_TRUE(link_exists(v.a())) << "the kernel refused the move: the interface stays on the host";
  EXPECT_EQ(rt({"list", "-q"}).out, "");
}

TEST(NetDevices, MissingInterfaceIsAnError) {
  Runtime rt;
  Bundle b;
  b.spec().linux->net_devices["bvnosuch0"] = {};
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "nd-missing"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("linux.netDevices: interface bvnosuch0: not found in the runtime network namespace"),
            std::string::npos) << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "");
}

TEST(NetDevices, RefusedWithoutANetworkNamespace) {
  Veth v("h");
  ASSERT_TRUE(v.ok());
  Runtime rt;
  Bundle b;
  std::erase_if(b.spec().linux->namespaces, [](const spec::Namespace& n) { return n.type == "network"; });
  b.spec().linux->net_devices[v.a()] = {};
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "nd-host"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("linux.netDevices: unable to move network devices without a private NET namespace"),
            std::string::npos) << r.err;
  EXPECT_TRUE(link_exists(v.a()));
  // A path to the runtime's own namespace is no private namespace either.
  b.spec().linux->namespaces.push_back({"network", "/proc/self/ns/net"});
  b.write();
  auto self = rt({"run", "--bundle", b.path(), "nd-self"});
  EXPECT_EQ(self.code, 1);
  EXPECT_NE(self.err.find("unable to move network devices without a private NET namespace"), std::string::npos)
      << self.err;
  EXPECT_TRUE(link_exists(v.a()));
}

TEST(NetDevices, UserNamespaceContainer) {
  Veth v("u");
  ASSERT_TRUE(v.ok());
  Runtime rt;
  Bundle b;
  b.spec().linux->namespaces.push_back({"user", ""});
  b.spec().linux->uid_mappings = {{0, 100000, 65536}};
  b.spec().linux->gid_mappings = {{0, 100000, 65536}};
  run_cmd({"chown", "-R", "100000:100000", b.rootfs()});
  b.spec().linux->net_devices[v.a()] = {"ctr1"};
  b.script("ip addr show dev ctr1").write();
  expect_moved(rt({"run", "--bundle", b.path(), "nd-userns"}), v, "ctr1");
}

TEST(NetDevices, FeaturesReportThem) {
  Runtime rt;
  auto f = rt({"features"});
  ASSERT_EQ(f.code, 0) << f.err;
  size_t at = f.out.find("\"netDevices\"");
  ASSERT_NE(at, std::string::npos) << f.out;
  EXPECT_EQ(f.out.find("\"enabled\": true", at), f.out.find("\"enabled\"", at)) << f.out.substr(at, 60);
}

}  // namespace
}  // namespace berth::test
