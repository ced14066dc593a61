// linux.sysctl key traversal (the CVE-2022-0811 class, CRI-O's "net.x=y+kernel.core_pattern"):
// a key that passes the namespace check by its prefix ("net.", "fs.mqueue.") but whose
// path under /proc/sys climbs out with ".." ("net/../kernel/...", "net.//.kernel...": '.' and
// '/' swap between the dotted and the slashed form) reaches a host-global kernel.* sysctl.
// Each hostile key must be refused by name, with the host's value unchanged and nothing left.
#include <dirent.h>

#include <algorithm>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using CVE_2022_0811 = RootfsTest;

// A host-global sysctl that is harmless to change and easy to read back.
const char* const kTarget = "/proc/sys/kernel/printk_ratelimit_burst";

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    ::closedir(d);
  }
  return out;
}

TEST_F(CVE_2022_0811, TraversingKeysAreRefusedByName) {
  const std::string before = slurp(kTarget);
  ASSERT_FALSE(before.empty()) << kTarget << " is not readable";
  // A value the host surely does not have already: the old one plus 7.
  const std::string hostile = std::to_string(std::stoi(before) + 7);
  const std::vector<std::string> keys = {
      "net/../kernel/printk_ratelimit_burst",              // slashed form
      "net/ipv4/../../kernel/printk_ratelimit_burst",      // slashed, deeper
      "net.//.kernel.printk_ratelimit_burst",              // dotted form: "//" is ".." in the path
      "fs.mqueue.//.//.kernel.printk_ratelimit_burst",     // the ipc prefix
      "fs/mqueue/../../kernel/printk_ratelimit_burst",     // the ipc prefix, slashed
      "net/./../kernel/printk_ratelimit_burst",            // "." then ".."
      "net//kernel/printk_ratelimit_burst",                // an empty component
  };
  int n = 0;
  for (const auto& key : keys) {
    SCOPED_TRACE(key);
    Runtime rt;
    Bundle b;
    b.spec().linux->sysctl = {{key, hostile}};
    std::string id = "cve-0811-" + std::to_string(n++);
    auto r = run_container(rt, b, id);
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << "the error names the key: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_EQ(slurp(kTarget), before) << "the host's kernel.printk_ratelimit_burst was changed";
    EXPECT_TRUE(entries(rt.root()).empty()) << "a state directory was left behind";
    EXPECT_FALSE(host_exists(std::string("/sys/fs/cgroup/memory") + kTestCgroupParent + "/" + id)) << "a cgroup was left";
    EXPECT_FALSE(host_exists(std::string("/sys/fs/cgroup/unified") + kTestCgroupParent + "/" + id)) << "a cgroup was left";
  }
  // Restore the host's value should a refusal ever fail, so one failing run harms nothing.
  if (slurp(kTarget) != before) run_cmd({"sh", "-c", "echo " + before.substr(0, before.size() - 1) + " > " + kTarget});
}

TEST_F(CVE_2022_0811, ANetworkSysctlInANewNetworkNamespaceStillWorks) {
  Runtime rt;
  Bundle b;
  b.spec().linux->sysctl = {{"net.ipv4.ip_forward", "1"}, {"net/ipv4/conf/lo/forwarding", "1"}};
  b.script("cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv4/conf/lo/forwarding");
  auto r = run_container(rt, b, "cve-0811-legit");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n1\n");
}

// Joining the runtime's own network namespace by path is the host's (runc's isHostNetNS):
// a net.* key there would change the host. Refused under berth and runc alike.
TEST_F(CVE_2022_0811, NetKeysInTheJoinedHostNetworkNamespaceAreRefused) {
  std::vector<std::string> binaries = {berth_binary()};
  if (have_runc()) binaries.push_back(runc_binary());
  for (const auto& bin : binaries) {
    SCOPED_TRACE(bin);
    Runtime rt(bin);
    Bundle b;
    auto& nss = b.spec().linux->namespaces;
    std::erase_if(nss, [](const spec::Namespace& ns) { return ns.type == "network"; });
    spec::Namespace host_net;
    host_net.type = "network";
    host_net.path = "/proc/self/ns/net";
    nss.push_back(host_net);
    b.spec().linux->sysctl = {{"net.ipv4.ip_forward", "1"}};
    auto r = run_container(rt, b, "cve-0811-hostnet");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("sysctl \\\"net.ipv4.ip_forward\\\" not allowed in host network namespace"), std::string::npos)
        << r.err;
    EXPECT_TRUE(entries(rt.root()).empty()) << "a state directory was left behind";
  }
}

// A well-formed key the kernel does not have fails in the init, at the write: the create
// is undone like any other init error.
TEST_F(CVE_2022_0811, AMissingKeyFailsTheCreateAndLeavesNothing) {
  Runtime rt;
  Bundle b;
  b.spec().linux->sysctl = {{"net.ipv4.no_such_key", "1"}};
  auto r = run_container(rt, b, "cve-0811-missing");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("write sysctl key net.ipv4.no_such_key"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no such file or directory"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  EXPECT_TRUE(entries(rt.root()).empty()) << "a state directory was left behind";
  EXPECT_FALSE(host_exists(std::string("/sys/fs/cgroup/memory") + kTestCgroupParent + "/cve-0811-missing"));
}

}  // namespace
}  // namespace berth::test
