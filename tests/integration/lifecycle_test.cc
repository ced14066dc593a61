// Container lifecycle through the CLI: run, create/start/state/kill/delete, exit status,
// runc's texts for each wrong-state call, and nothing left behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "container/process/spawn.h"
#include "linux/selinux.h"
#include "support/exec_helpers.h"
#include "support/harness.h"

namespace berth::test {
namespace {

TEST(Lifecycle, RunPassesExitStatusAndOutput) {
  Runtime rt;
  Bundle b;
  b.script("echo hello; exit 42").write();
  auto r = rt({"run", "--bundle", b.path(), "c1"});
  EXPECT_EQ(r.code, 42) << r.err;
  EXPECT_EQ(r.out, "hello\n");
  EXPECT_EQ(rt({"list", "-q"}).out, "") << "run deletes the container afterwards";
}

// `run` of a container that needs nothing of berth before its payload starts: its init
// shares berth's memory while berth sleeps, joins its cgroups, records its pid and starts
// the payload itself (on v1 and hybrid hosts). With a poststart hook it takes the usual
// create-then-start way, and so it does where the shared clone is refused. All give the
// same container.
TEST(Lifecycle, RunWithoutAnythingForBerthToDoStartsFromTheInit) {
  Runtime rt;
  std::string script = "grep -c berth-test/run- /proc/self/cgroup; echo $$; readlink /proc/self/ns/pid | cut -c1-5; exit 7";
  Bundle direct;
  direct.spec().linux->cgroups_path = "/berth-test/run-direct";
  direct.script(script).write();
  auto d = rt({"--debug", "run", "--bundle", direct.path(), "run-direct"});
  EXPECT_EQ(d.code, 7) << d.err;
  bool shares = have_cgroup_v1("memory") && container::process::kCanShareMemory;
  EXPECT_EQ(d.err.find("in our memory") != std::string::npos, shares) << d.err;
  Bundle usual;
  usual.spec().linux->cgroups_path = "/berth-test/run-usual";
  usual.spec().hooks = spec::Hooks{};
  usual.spec().hooks->poststart.push_back({"/bin/true", {"true"}, std::nullopt, std::nullopt});
  usual.script(script).write();
  auto u = rt({"--debug", "run", "--bundle", usual.path(), "run-usual"});
  EXPECT_EQ(u.code, 7) << u.err;
  EXPECT_EQ(u.err.find("in our memory"), std::string::npos) << u.err;
  EXPECT_EQ(d.out, u.out);
  // Where the shared clone is refused (a filter around berth: clone with CLONE_VM, and
  // clone3, which a hybrid host's direct init is born in its unified cgroup by), the usual
  // way again.
  Bundle refused;
  refused.spec().linux->cgroups_path = "/berth-test/run-refused";
  refused.script(script).write();
  auto r = run_cmd({BERTH_DENY_SHARED_CLONE, "--clone3", "EPERM", rt.binary(), "--root", rt.root(), "--debug", "run",
                    "--bundle", refused.path(), "run-refused"});
  EXPECT_EQ(r.code, 7) << r.err;
  EXPECT_EQ(r.err.find("in our memory"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, u.out);
  EXPECT_NE(d.out.find("\n1\npid:[\n"), std::string::npos) << d.out;  // pid 1 of its own namespace
  for (const char* id : {"run-direct", "run-usual", "run-refused"}) EXPECT_NE(rt({"state", id}).code, 0) << id << " was deleted";
}

TEST(Lifecycle, CreateStartStateDelete) {
  Runtime rt;
  Bundle b;
  b.script("sleep 30").write();
  auto c = rt({"create", "--bundle", b.path(), "c2"});
  ASSERT_EQ(c.code, 0) << c.err;
  auto st = rt({"state", "c2"});
  EXPECT_NE(st.out.find("\"status\": \"created\""), std::string::npos) << st.out;
  ASSERT_EQ(rt({"start", "c2"}).code, 0);
  EXPECT_NE(rt({"state", "c2"}).out.find("\"status\": \"running\""), std::string::npos);
  auto again = rt({"start", "c2"});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("cannot start an already running container"), std::string::npos) << again.err;
  auto del = rt({"delete", "c2"});
  EXPECT_EQ(del.code, 1);
  EXPECT_NE(del.err.find("cannot delete container c2 that is not stopped: running"), std::string::npos) << del.err;
  EXPECT_EQ(rt({"kill", "c2", "KILL"}).code, 0);
  for (int i = 0; i < 100 && rt({"state", "c2"}).out.find("stopped") == std::string::npos; ++i) ::usleep(20000);
  auto stopped = rt({"state", "c2"});
  EXPECT_NE(stopped.out.find("\"status\": \"stopped\""), std::string::npos) << stopped.out;
  EXPECT_NE(stopped.out.find("\"pid\": 0"), std::string::npos);
  auto k = rt({"kill", "c2"});
  EXPECT_EQ(k.code, 1);
  EXPECT_NE(k.err.find("container not running"), std::string::npos);
  EXPECT_EQ(rt({"delete", "c2"}).code, 0);
  auto gone = rt({"state", "c2"});
  EXPECT_EQ(gone.code, 1);
  EXPECT_NE(gone.err.find("container does not exist"), std::string::npos);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Without a pid namespace of its own, a container's background process outlives its init.
// `delete` then finds the cgroup busy (empty cgroups go with one rmdir each, nothing
// listed), kills what is left and removes the cgroups, as before that shortcut.
TEST(Lifecycle, DeleteKillsWhatASharedPidNamespaceLeftBehind) {
  Runtime rt;
  Bundle b;
  b.spec().linux->cgroups_path = "/berth-test/lc-leftover";
  auto& ns = b.spec().linux->namespaces;
  ns.erase(std::remove_if(ns.begin(), ns.end(), [](const spec::Namespace& n) { return n.type == "pid"; }), ns.end());
  b.script("sleep 300 & exit 0").write();
  std::string dir = "/sys/fs/cgroup/pids/berth-test/lc-leftover";
  if (!exists("/sys/fs/cgroup/pids/cgroup.procs")) dir = "/sys/fs/cgroup/berth-test/lc-leftover";
  ASSERT_EQ(rt({"create", "--bundle", b.path(), "lc-left"}).code, 0);
  ASSERT_EQ(rt({"start", "lc-left"}).code, 0);
  for (int i = 0; i < 250 && rt({"state", "lc-left"}).out.find("stopped") == std::string::npos; ++i) ::usleep(20000);
  ASSERT_NE(rt({"state", "lc-left"}).out.find("\"status\": \"stopped\""), std::string::npos);
  std::string procs = read_text(dir + "/cgroup.procs");
  ASSERT_FALSE(procs.empty()) << "the background sleep should still be in " << dir;
  pid_t left = static_cast<pid_t>(std::stol(procs));
  auto del = rt({"delete", "lc-left"});
  EXPECT_EQ(del.code, 0) << del.err;
  EXPECT_FALSE(exists(dir)) << "the cgroup is removed";
  // Killed: gone, or a zombie of a parent that does not reap (PID 1 here).
  std::string stat = read_text("/proc/" + std::to_string(left) + "/stat");
  EXPECT_TRUE(stat.empty() || stat.find(") Z ") != std::string::npos) << stat;
}

// `start` returns once the init has executed the user's process, after the startContainer
// hooks (runc reads exec.fifo to EOF, which comes at the init's execve; berth waits on it
// for the init's close at that execve): poststart hooks then run after the process is
// executed, as the runtime spec orders them.
TEST(Lifecycle, StartReturnsAfterStartContainerHooksFinish) {
  for_each_runtime([](const Runtime& rt, const std::string& name) {
    Bundle b;
    spec::Hooks h;
    spec::Hook sc;
    sc.path = "/bin/sh";
    sc.args = {"sh", "-c", "sleep 4; touch /dev/shm/hook-done"};
    h.start_container = {sc};
    b.spec().hooks = h;
    b.script("sleep 1000").write();
    ASSERT_EQ(rt({"create", "--bundle", b.path(), "sh1"}).code, 0) << name;
    std::string marker = "/proc/" + std::to_string(state_pid(rt, "sh1")) + "/root/dev/shm/hook-done";
    auto st = rt({"start", "sh1"});
    EXPECT_EQ(st.code, 0) << name << ": " << st.err;
    EXPECT_TRUE(exists(marker)) << name << ": start returned before its startContainer hook finished";
    EXPECT_EQ(rt({"delete", "--force", "sh1"}).code, 0) << name;
  });
}

// `delete --force` returns once the killed init has exited (pidfd) and, without a pid
// namespace, once every process left in the container's cgroup has (their pidfds): no
// process of the container is still running and its cgroup is gone, on both runtimes.
TEST(Lifecycle, DeleteForceLeavesNoProcessAndNoCgroup) {
  for_each_runtime([](const Runtime& rt, const std::string& name) {
    for (bool pid_ns : {true, false}) {
      Bundle b;
      auto& ns = b.spec().linux->namespaces;
      if (!pid_ns) ns.erase(std::remove_if(ns.begin(), ns.end(), [](const spec::Namespace& n) { return n.type == "pid"; }), ns.end());
      b.script("sleep 1000 & sleep 1000").write();
      std::string what = name + (pid_ns ? ", own pid namespace" : ", host pid namespace");
      std::string procs;
      for (const char* root : {"/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
        std::string dir = root + b.spec().linux->cgroups_path;
        if (procs.empty() && exists(std::string(root) + "/cgroup.procs")) procs = dir + "/cgroup.procs";
      }
      auto r = rt({"run", "-d", "--bundle", b.path(), "df1"});
      ASSERT_EQ(r.code, 0) << what << ": " << r.err;
      std::vector<int> pids;
      ASSERT_TRUE(eventually([&] {
        pids.clear();
        std::istringstream in(read_text(procs));
        for (int p; in >> p;) pids.push_back(p);
        return pids.size() >= 2;
      })) << what << ": " << read_text(procs);
      auto d = rt({"delete", "--force", "df1"});
      EXPECT_EQ(d.code, 0) << what << ": " << d.err;
      for (int p : pids) {
        std::string state = status_field(read_text("/proc/" + std::to_string(p) + "/status"), "State");
        EXPECT_TRUE(state.empty() || state[0] == 'Z') << what << ": pid " << p << " is " << state;
      }
      EXPECT_FALSE(exists(procs)) << what << ": the cgroup is left";
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    }
  });
}


TEST(Lifecycle, DeleteForceOfMissingSucceeds) {
  Runtime rt;
  EXPECT_EQ(rt({"delete", "--force", "nosuch"}).code, 0);
  EXPECT_EQ(rt({"delete", "nosuch"}).code, 1);
}

TEST(Lifecycle, MissingExecutableUsesRuncWording) {
  Runtime rt;
  Bundle b;
  b.spec().process->args = {"nosuchcmd"};
  b.write();
  auto before = mount_lines();
  auto r = rt({"run", "--bundle", b.path(), "c3"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("exec: \\\"nosuchcmd\\\": executable file not found in $PATH"), std::string::npos) << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "") << "a failed create leaves no state";
  EXPECT_EQ(mount_lines(), before) << "a failed create leaves no mount";
}

// What berth does not apply is refused by name, on every host, never silently dropped.
TEST(Lifecycle, FieldsBerthDoesNotApplyAreRefusedByName) {
  Runtime rt;
  Bundle b;
  b.spec().linux->intel_rdt = spec::IntelRdt{};
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "c-rdt"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("linux.intelRdt: Intel RDT is not supported by berth"), std::string::npos) << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "");
}

// A config written for an SELinux host (podman sets linux.mountLabel there) runs on a host
// without SELinux, as with crun, with one warning; the mounts carry no context= (the kernel
// would refuse it: runc's EINVAL).
TEST(Lifecycle, MountLabelWithoutSelinuxRunsWithOneWarning) {
  if (linux::selinux_enabled()) GTEST_SKIP() << "this host has SELinux: the label is applied, not dropped";
  Runtime rt;
  Bundle b;
  b.spec().linux->mount_label = "system_u:object_r:container_file_t:s0:c1,c2";
  spec::Mount tmp;
  tmp.destination = "/scratch";
  tmp.type = "tmpfs";
  tmp.source = "tmpfs";
  tmp.options = {"nosuid", "size=1m"};
  b.spec().mounts.push_back(tmp);
  b.script("grep ' /scratch ' /proc/self/mounts").write();
  auto r = rt({"run", "--bundle", b.path(), "c-label"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("tmpfs /scratch tmpfs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("context="), std::string::npos) << r.out;
  const std::string warning = "linux.mountLabel: ignored: SELinux is not enabled on this host";
  size_t at = r.err.find(warning);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("level=warning"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(warning, at + 1), std::string::npos) << "one warning per create\n" << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "");
}

TEST(Lifecycle, PidFileIsWritten) {
  Runtime rt;
  Bundle b;
  b.script("sleep 30").write();
  std::string pid_file = b.path() + "/pid";
  ASSERT_EQ(rt({"create", "--bundle", b.path(), "--pid-file", pid_file, "c4"}).code, 0);
  auto state = rt({"state", "c4"});
  auto r = run_cmd({"cat", pid_file});
  EXPECT_NE(state.out.find("\"pid\": " + r.out + ","), std::string::npos) << state.out << " vs " << r.out;
  EXPECT_EQ(rt({"delete", "--force", "c4"}).code, 0);
}

}  // namespace
}  // namespace berth::test
