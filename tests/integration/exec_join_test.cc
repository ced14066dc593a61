// `exec` joins the container: the same namespaces as its init (/proc/<pid>/ns links), its
// cgroup or a sub-cgroup (--cgroup), a user namespace; and refuses stopped and paused
// containers with runc's texts. runc runs the same cases where it can.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "container/process/spawn.h"
#include "support/exec_helpers.h"
#include "support/cgroup2_root.h"

namespace berth::test {
namespace {

const char* const kNamespaces[] = {"mnt", "pid", "net", "ipc", "uts", "cgroup", "user", "time"};

// Starts `exec -d --pid-file` of a sleep and returns its host pid.
int detached_sleep(const Container& c, const std::string& pid_file) {
  auto r = c.exec({"-d", "--pid-file", pid_file}, {"sleep", "30"});
  EXPECT_EQ(r.code, 0) << r.err;
  return std::atoi(read_text(pid_file).c_str());
}

void expect_same_namespaces_and_cgroup(const Container& c) {
  TempDir d;
  int pid = detached_sleep(c, d.path() + "/pid");
  int init = c.pid();
  ASSERT_GT(pid, 0);
  ASSERT_GT(init, 0);
  for (const char* ns : kNamespaces) {
    std::string mine = link_of("/proc/" + std::to_string(pid) + "/ns/" + ns);
    EXPECT_FALSE(mine.empty()) << ns;
    EXPECT_EQ(mine, link_of("/proc/" + std::to_string(init) + "/ns/" + ns)) << ns << " namespace of " << c.id();
  }
  EXPECT_EQ(read_text("/proc/" + std::to_string(pid) + "/cgroup"), read_text("/proc/" + std::to_string(init) + "/cgroup"));
  EXPECT_NE(read_text("/proc/" + std::to_string(pid) + "/cgroup").find("/berth-test/" + c.id()), std::string::npos);
}

TEST(ExecJoin, SameNamespacesAndCgroupAsTheInit) {
  Runtime berth;
  auto with_cgroup_ns = [](spec::Spec& s) { s.linux->namespaces.push_back({"cgroup", ""}); };
  Container b(berth, "b-join", with_cgroup_ns);
  ASSERT_EQ(b.started().code, 0) << b.started().err;
  expect_same_namespaces_and_cgroup(b);
  // Inside: a pid of the container's namespace, its hostname, its root, and the cgroup
  // namespace's view ("/" for every hierarchy).
  auto r = b.exec({}, {"sh", "-c", "echo $$; hostname; readlink /proc/self/cwd; grep -vc ':/$' /proc/self/cgroup"});
  EXPECT_EQ(r.code, 1) << "grep -c counts no line outside \"/\": " << r.err;
  int inner_pid = std::atoi(r.out.c_str());
  EXPECT_TRUE(inner_pid > 1 && inner_pid < 10) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find('\n') + 1), "berth\n/\n0\n");
  if (have_runc()) {
    Runtime runc(runc_binary());
    Container rc(runc, "r-join", with_cgroup_ns);
    ASSERT_EQ(rc.started().code, 0) << rc.started().err;
    expect_same_namespaces_and_cgroup(rc);
  }
}

// On v1 and hybrid hosts the tenant shares berth's memory (CLONE_VM|CLONE_VFORK) and joins
// its v1 cgroups itself; on a hybrid host it is born in its unified cgroup (clone3,
// CLONE_INTO_CGROUP). Under a filter that refuses both clones it falls back to a copy that
// the parent joins. The process ends up the same either way.
TEST(ExecJoin, TenantInOurMemoryOrACopyJoinsTheSame) {
  if (!have_cgroup_v1("memory")) GTEST_SKIP() << "pure cgroup v2: the tenant is always a copy born in its cgroup";
  if (!container::process::kCanShareMemory) GTEST_SKIP() << "sanitizer build: the tenant is always a copy";
  Runtime berth;
  Container b(berth, "b-tenant");
  ASSERT_EQ(b.started().code, 0) << b.started().err;
  std::string cmd = "cat /proc/self/cgroup; readlink /proc/self/ns/net; readlink /proc/self/ns/mnt";
  auto shared = berth({"--debug", "exec", b.id(), "sh", "-c", cmd});
  ASSERT_EQ(shared.code, 0) << shared.err;
  bool unified = !test::cgroup2_root().empty() && container::process::kCanShareMemoryIntoCgroup;
  EXPECT_NE(shared.err.find(unified ? "born in its cgroup (CLONE_INTO_CGROUP), in our memory"
                                    : "joined its cgroups itself (in our memory)"),
            std::string::npos)
      << shared.err;
  auto copy = run_cmd({BERTH_DENY_SHARED_CLONE, "--clone3", "EPERM", berth.binary(), "--root", berth.root(), "--debug",
                       "exec", b.id(), "sh", "-c", cmd});
  ASSERT_EQ(copy.code, 0) << copy.err;
  EXPECT_NE(copy.err.find("moved into its cgroups"), std::string::npos) << copy.err;
  EXPECT_EQ(copy.err.find("in our memory"), std::string::npos) << copy.err;
  EXPECT_EQ(copy.out, shared.out);
  EXPECT_NE(shared.out.find(":/berth-test/b-tenant"), std::string::npos) << shared.out;
}

TEST(ExecJoin, UserNamespace) {
  Runtime berth;
  // The rootfs belongs to the container's root, host uid 100000.
  Container b(berth, "b-userns", [](spec::Spec& s) {
    s.linux->namespaces.push_back({"user", ""});
    s.linux->uid_mappings = {{0, 100000, 65536}};
    s.linux->gid_mappings = {{0, 100000, 65536}};
  }, [](Bundle& b) { run_cmd({"chown", "-R", "100000:100000", b.rootfs()}); });
  ASSERT_EQ(b.started().code, 0) << b.started().err;
  expect_same_namespaces_and_cgroup(b);
  auto r = b.exec({"-u", "1000"}, {"sh", "-c", "id -u; cat /proc/self/uid_map"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 5), "1000\n") << r.out;
  EXPECT_NE(r.out.find("100000"), std::string::npos) << r.out;
  TempDir d;
  int pid = detached_sleep(b, d.path() + "/pid");
  struct stat st;
  ASSERT_EQ(::stat(("/proc/" + std::to_string(pid)).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 100000u) << "container root is host uid 100000";
}

TEST(ExecJoin, SubCgroups) {
  Runtime berth;
  Container b(berth, "b-subcg");
  ASSERT_EQ(b.started().code, 0) << b.started().err;
  std::string mem = "/sys/fs/cgroup/memory/berth-test/b-subcg";
  struct stat st;
  if (::stat(mem.c_str(), &st) != 0) GTEST_SKIP() << "no cgroup v1 memory hierarchy on this host";
  ASSERT_EQ(::mkdir((mem + "/sub").c_str(), 0755), 0);
  auto r = b.exec({"--cgroup", "memory:sub"}, {"cat", "/proc/self/cgroup"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(":memory:/berth-test/b-subcg/sub\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(":pids:/berth-test/b-subcg\n"), std::string::npos) << "other controllers stay: " << r.out;
  auto top = b.exec({"--cgroup", "/"}, {"cat", "/proc/self/cgroup"});
  EXPECT_NE(top.out.find(":memory:/berth-test/b-subcg\n"), std::string::npos) << top.out;
  auto escape = b.exec({"--cgroup", "../b-other"}, {"true"});
  EXPECT_EQ(escape.code, 255);
  EXPECT_NE(escape.err.find("sub cgroup path"), std::string::npos) << escape.err;
  auto missing = b.exec({"--cgroup", "memory:nosuch"}, {"true"});
  EXPECT_EQ(missing.code, 255);
  EXPECT_NE(missing.err.find("no such file or directory"), std::string::npos) << missing.err;
  auto unknown = b.exec({"--cgroup", "nosuchctl:x"}, {"true"});
  EXPECT_EQ(unknown.code, 255);
  EXPECT_NE(unknown.err.find("unknown controller nosuchctl"), std::string::npos) << unknown.err;
  auto twice = b.exec({"--cgroup", "memory:a", "--cgroup", "memory:b"}, {"true"});
  EXPECT_NE(twice.err.find("controller memory specified multiple times"), std::string::npos) << twice.err;
  EXPECT_EQ(berth({"delete", "--force", "b-subcg"}).code, 0);
  ::rmdir((mem + "/sub").c_str());
  if (have_runc()) {
    Runtime runc(runc_binary());
    Container rc(runc, "r-subcg");
    ASSERT_EQ(rc.started().code, 0);
    std::string rmem = "/sys/fs/cgroup/memory/berth-test/r-subcg";
    ASSERT_EQ(::mkdir((rmem + "/sub").c_str(), 0755), 0);
    auto rr = rc.exec({"--cgroup", "memory:sub"}, {"cat", "/proc/self/cgroup"});
    EXPECT_NE(rr.out.find(":memory:/berth-test/r-subcg/sub\n"), std::string::npos) << rr.out;
    EXPECT_NE(rc.exec({"--cgroup", "../b-other"}, {"true"}).err.find("sub cgroup path"), std::string::npos);
    EXPECT_EQ(runc({"delete", "--force", "r-subcg"}).code, 0);
    ::rmdir((rmem + "/sub").c_str());
  }
}

void expect_stopped_refused(const Runtime& rt, const std::string& id) {
  Container c(rt, id, [](spec::Spec& s) { s.process->args = {"true"}; });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  ASSERT_TRUE(eventually([&] { return rt({"state", id}).out.find("\"stopped\"") != std::string::npos; }));
  auto r = c.exec({}, {"true"});
  EXPECT_EQ(r.code, 255) << rt.binary();
  EXPECT_NE(r.err.find("cannot exec in a stopped container"), std::string::npos) << r.err;
}

TEST(ExecJoin, StoppedContainerIsRefused) {
  Runtime berth;
  expect_stopped_refused(berth, "b-stopped");
  auto none = berth({"exec", "nosuch", "true"});
  EXPECT_EQ(none.code, 255);
  EXPECT_NE(none.err.find("container does not exist"), std::string::npos) << none.err;
  if (have_runc()) expect_stopped_refused(Runtime(runc_binary()), "r-stopped");
}

// Paused by freezing the container's cgroup; resumed a second later while an
// --ignore-paused exec waits in the frozen cgroup.
void expect_paused_behaviour(const Runtime& rt, const std::string& id) {
  Container c(rt, id);
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  ASSERT_TRUE(set_frozen(id, true));
  auto refused = c.exec({}, {"echo", "ok"});
  EXPECT_EQ(refused.code, 255) << rt.binary();
  EXPECT_NE(refused.err.find("cannot exec in a paused container (use --ignore-paused to override)"), std::string::npos)
      << refused.err;
  std::thread thaw([&] {
    ::sleep(1);
    set_frozen(id, false);
  });
  auto allowed = c.exec({"--ignore-paused"}, {"echo", "ok"});
  thaw.join();
  EXPECT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_EQ(allowed.out, "ok\n");
}

TEST(ExecJoin, PausedContainerNeedsIgnorePaused) {
  Runtime berth;
  expect_paused_behaviour(berth, "b-paused");
  if (have_runc()) expect_paused_behaviour(Runtime(runc_binary()), "r-paused");
}

TEST(ExecJoin, CreatedContainerAcceptsExec) {
  Runtime berth;
  Bundle b;
  b.spec().process->args = {"sleep", "1000"};
  b.spec().linux->cgroups_path = "/berth-test/b-created";
  b.write();
  ASSERT_EQ(berth({"create", "--bundle", b.path(), "b-created"}).code, 0);
  auto r = berth({"exec", "b-created", "echo", "hi"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "hi\n");
  EXPECT_NE(berth({"state", "b-created"}).out.find("\"created\""), std::string::npos);
}

// create records its init while the init still sets up: in its new mount namespace but
// before pivot_root, the host's filesystem still its root. An exec joining it there would
// run on the host's files. A createRuntime hook (run in that window) tries: the container
// is "creating", with its pid, and exec refuses.
TEST(ExecJoin, ContainerStillSettingUpIsRefused) {
  Runtime berth;
  Bundle b;
  std::string out = b.path() + "/from-the-hook";
  std::string cli = "'" + berth.binary() + "' --root '" + berth.root() + "' ";
  spec::Hook h;
  h.path = "/bin/sh";
  h.args = {"sh", "-c", cli + "exec b-setting-up ls / > " + out + ".exec 2>&1; echo $? > " + out + ".rc; " + cli +
                            "state b-setting-up > " + out + ".state 2>&1"};
  b.spec().hooks = spec::Hooks{};
  b.spec().hooks->create_runtime = {h};
  b.spec().process->args = {"sleep", "1000"};
  b.spec().linux->cgroups_path = "/berth-test/b-setting-up";
  b.write();
  auto created = berth({"create", "--bundle", b.path(), "b-setting-up"});
  ASSERT_EQ(created.code, 0) << created.err;
  EXPECT_EQ(read_text(out + ".rc"), "255\n") << read_text(out + ".exec");
  EXPECT_NE(read_text(out + ".exec").find("container not running"), std::string::npos) << read_text(out + ".exec");
  std::string state = read_text(out + ".state");
  EXPECT_NE(state.find("\"status\": \"creating\""), std::string::npos) << state;
  EXPECT_EQ(state.find("\"pid\": 0,"), std::string::npos) << state;
  // Once create is done: created, and exec works.
  EXPECT_NE(berth({"state", "b-setting-up"}).out.find("\"created\""), std::string::npos);
  auto r = berth({"exec", "b-setting-up", "echo", "hi"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "hi\n");
}

}  // namespace
}  // namespace berth::test
