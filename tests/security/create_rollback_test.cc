// A create that fails after its init exists must leave nothing behind and signal nothing
// but its own init: the init is killed first, through its pidfd (after kPid, stage one is
// reaped and the forked init is not the runtime's child, so either pid number may already
// belong to another process), then the cgroups and the state directory go. Each case forces
// a failure at one late step (a prestart or createRuntime hook, the pid file written after
// the init is ready), with and without a joined pid namespace (where the init is forked
// last), and traces the create's own system calls: no kill(2) by number, at least one
// pidfd_send_signal(SIGKILL), and no rmdir before it. The joined namespace's own process is
// the foreign one that must survive.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <sstream>

#include "security/security_support.h"

namespace berth::test {
namespace {

bool have_strace() { return ::access("/usr/bin/strace", X_OK) == 0; }

bool cgroup_left(const std::string& path) {
  for (const char* h : {"cpu", "memory", "devices", "freezer", "pids", "systemd", "unified", ""})
    if (::access((std::string("/sys/fs/cgroup/") + h + path).c_str(), F_OK) == 0) return true;
  return false;
}

struct Case {
  const char* name;
  bool join_pidns;
  bool fail_prestart, fail_create_runtime, fail_pid_file;
};

// Creates `id` under strace, failing as `k` says; checks the trace and that nothing is left.
void expect_clean_rollback(const Runtime& rt, Bundle& b, const std::string& id, const Case& k) {
  TempDir trace_dir("berth-rollback");
  std::string trace = trace_dir.path() + "/trace";
  std::string cgroup = "/berth-test/rollback-" + id;
  b.spec().linux->cgroups_path = cgroup;
  spec::Hooks hooks;
  spec::Hook fail{"/bin/false", {"false"}, {}, {}};
  if (k.fail_prestart) hooks.prestart = {fail};
  if (k.fail_create_runtime) hooks.create_runtime = {fail};
  b.spec().hooks = hooks;
  b.write();
  std::vector<std::string> argv = {"strace", "-qq", "-o", trace, "-e",
                                   "trace=kill,tgkill,pidfd_send_signal,rmdir,unlinkat",
                                   rt.binary(), "--root", rt.root(), "create", "--bundle", b.path()};
  if (k.fail_pid_file) argv.insert(argv.end(), {"--pid-file", trace_dir.path() + "/no/such/dir/pid"});
  argv.push_back(id);
  auto start = std::chrono::steady_clock::now();
  auto r = run_cmd(argv);
  std::printf("%s: create failed in %lld ms\n", k.name, static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count()));
  EXPECT_EQ(r.code, 1) << k.name << ": " << r.err;
  std::string log = read_text(trace);
  std::istringstream lines(log);
  bool killed = false, rmdir_before_kill = false, kill_by_number = false;
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("pidfd_send_signal(", 0) == 0 && l.find("SIGKILL") != std::string::npos) killed = true;
    if (l.rfind("kill(", 0) == 0 || l.rfind("tgkill(", 0) == 0) kill_by_number = true;
    if (l.rfind("rmdir(\"/sys/fs/cgroup", 0) == 0 && !killed) rmdir_before_kill = true;
  }
  EXPECT_TRUE(killed) << k.name << ": the init was not killed through a pidfd\n" << log;
  EXPECT_FALSE(kill_by_number) << k.name << ": a signal went to a pid number\n" << log;
  EXPECT_FALSE(rmdir_before_kill) << k.name << ": a cgroup was removed before the init was killed\n" << log;
  EXPECT_FALSE(cgroup_left(cgroup)) << k.name << ": cgroup " << cgroup << " left";
  EXPECT_NE(rt({"state", id}).code, 0) << k.name << ": the state directory was left";
}

const Case kCases[] = {
    {"prestart hook fails", false, true, false, false},
    {"createRuntime hook fails", false, false, true, false},
    {"pid file cannot be written", false, false, false, true},
    {"prestart hook fails, pid namespace joined", true, true, false, false},
    {"createRuntime hook fails, pid namespace joined", true, false, true, false},
    {"pid file cannot be written, pid namespace joined", true, false, false, true},
};

TEST(CreateRollback, LateFailuresKillTheInitThroughItsPidfdFirstAndLeaveNothing) {
  if (!have_strace()) GTEST_SKIP() << "strace is not installed: the test reads the create's system calls";
  Runtime rt;
  // The foreign process: the only process of the pid namespace the failing creates join.
  Container pod(rt, "rollback-pod");
  ASSERT_EQ(pod.started().code, 0) << pod.started().err;
  int pod_pid = pod.pid();
  std::string pidns = link_of("/proc/" + std::to_string(pod_pid) + "/ns/pid");
  ASSERT_EQ(live_in_pidns(pidns), 1);
  int i = 0;
  for (const auto& k : kCases) {
    Bundle b;
    b.spec().process->args = {"sleep", "1000"};
    if (k.join_pidns)
      for (auto& ns : b.spec().linux->namespaces)
        if (ns.type == "pid") ns.path = "/proc/" + std::to_string(pod_pid) + "/ns/pid";
    expect_clean_rollback(rt, b, "rb" + std::to_string(i++), k);
    EXPECT_EQ(::kill(pod_pid, 0), 0) << k.name << ": the joined namespace's process was signalled";
    EXPECT_EQ(live_in_pidns(pidns), 1) << k.name << ": a process of the failed create lives on in the pod";
  }
}

}  // namespace
}  // namespace berth::test
