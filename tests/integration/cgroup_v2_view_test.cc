// run and exec on pure cgroup v2, on this (hybrid) host too: berth runs in a private mount
// namespace with cgroup2 mounted at /sys/fs/cgroup, which berth (as runc) takes for a pure v2
// host. No controller is enabled in that hierarchy here, so the containers set no limits.
// run's direct init and exec's tenant share berth's memory and are born in the container's
// cgroup (clone3 onto berth's stack, CLONE_INTO_CGROUP): the kernel's cgroup_attach_task
// tracepoint, which every move of a process between cgroups fires and a birth does not,
// records no move into the container's cgroup. Under a filter that refuses clone3 (ENOSYS,
// EPERM) berth takes its copies, made by clone(2) and moved by berth: the same container,
// and the tracepoint sees those moves (which shows it would have seen the others).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <string>

#include "container/process/spawn.h"
#include "support/exec_helpers.h"
#include "support/harness.h"
#include "support/cgroup2_root.h"

namespace berth::test {
namespace {

std::string sh_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Outcome {
  CmdResult shell;  // the script's own output: "tracing" or "no-tracefs"
  std::string run_out, run_err, exec_out, exec_err, moves;
  int run_code = -1, exec_code = -1;
};

// In the view, from a cgroup of its own there (the caller's): `run` of `direct` (which
// prints its v2 cgroup and exits 7), `run -d` of `sleeper`, an `exec` into it that prints
// its v2 cgroup, `delete -f`; each berth call under `wrap` (the clone3 filter, or nothing).
// The tracepoint's records of moves into /berth-test/v2view-* cgroups (other tests' are
// not ours) go to `moves`.
Outcome in_v2_view(const Runtime& rt, const Bundle& direct, const Bundle& sleeper, const std::string& wrap) {
  TempDir out("berth-v2view");
  std::string o = out.path(), berth = wrap + " " + rt.binary() + " --root " + rt.root();
  std::string caller = cgroup2_root() + "/berth-v2view-caller-" + std::to_string(::getpid());
  ::mkdir(caller.c_str(), 0755);
  std::string inner =
      "mount -t cgroup2 cgroup2 /sys/fs/cgroup || exit 90\n"
      "T=/sys/kernel/tracing/instances/berth-v2view-$$\n"
      // tracefs may be mounted there already (systemd mounts it at boot; perf does too)
      "if { [ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; } &&\n"
      "   mkdir $T; then\n"
      "  echo 1 > $T/events/cgroup/cgroup_attach_task/enable; echo tracing\n"
      "else echo no-tracefs; T=; fi\n" +
      berth + " --debug run --bundle " + direct.path() + " v2view-direct >" + o + "/run.out 2>" + o + "/run.err\n" +
      "echo $? >" + o + "/run.code\n" + berth + " run -d --bundle " + sleeper.path() +
      " v2view-sleeper </dev/null >/dev/null 2>&1\n" + berth +
      " --debug exec v2view-sleeper sh -c 'grep ^0:: /proc/self/cgroup' >" + o + "/exec.out 2>" + o + "/exec.err\n" +
      "echo $? >" + o + "/exec.code\n" + rt.binary() + " --root " + rt.root() + " delete -f v2view-sleeper\n" +
      "if [ -n \"$T\" ]; then echo 0 > $T/events/cgroup/cgroup_attach_task/enable;\n"
      "  grep -o 'dst_path=/berth-test/v2view-[^ ]*' $T/trace >" + o + "/moves; rmdir $T; fi\n";
  std::string outer = "echo $$ > " + caller + "/cgroup.procs && exec unshare --mount --propagation private sh -c " +
                      sh_quoted(inner);
  Outcome r;
  r.shell = run_cmd({"sh", "-c", outer}, "", 60);
  ::rmdir(caller.c_str());
  r.run_out = read_text(o + "/run.out");
  r.run_err = read_text(o + "/run.err");
  r.exec_out = read_text(o + "/exec.out");
  r.exec_err = read_text(o + "/exec.err");
  r.moves = read_text(o + "/moves");
  r.run_code = std::atoi(read_text(o + "/run.code").c_str());
  r.exec_code = std::atoi(read_text(o + "/exec.code").c_str());
  return r;
}

struct Bundles {
  Bundle direct, sleeper;
  explicit Bundles(const std::string& tag) {
    direct.spec().linux->cgroups_path = "/berth-test/v2view-" + tag + "-run";
    direct.script("grep ^0:: /proc/self/cgroup; exit 7").write();
    sleeper.spec().linux->cgroups_path = "/berth-test/v2view-" + tag + "-exec";
    sleeper.script("sleep 300").write();
  }
};

#define SKIP_WITHOUT_V2_VIEW()                                                                        \
  if (cgroup2_root().empty()) GTEST_SKIP() << "no cgroup2 hierarchy on this host";                  \
  if (run_cmd({"unshare", "--mount", "true"}).code != 0) GTEST_SKIP() << "unshare --mount is not available here"

TEST(CgroupV2View, RunAndExecShareOurMemoryAndAreBornInTheirCgroup) {
  SKIP_WITHOUT_V2_VIEW();
  bool shares = container::process::kCanShareMemoryIntoCgroup;
  Runtime rt;
  Bundles b("born");
  auto r = in_v2_view(rt, b.direct, b.sleeper, "");
  ASSERT_EQ(r.shell.code, 0) << r.shell.out << r.shell.err;
  EXPECT_EQ(r.run_code, 7) << r.run_err;
  EXPECT_EQ(r.run_out, "0::/berth-test/v2view-born-run\n") << r.run_err;
  EXPECT_EQ(r.exec_code, 0) << r.exec_err;
  EXPECT_EQ(r.exec_out, "0::/berth-test/v2view-born-exec\n") << r.exec_err;
  EXPECT_EQ(r.run_err.find("init set up and started, in our memory, born in its cgroup (CLONE_INTO_CGROUP)") !=
                std::string::npos,
            shares)
      << r.run_err;
  EXPECT_EQ(r.exec_err.find("born in its cgroup (CLONE_INTO_CGROUP), in our memory") != std::string::npos, shares)
      << r.exec_err;
  for (const char* id : {"v2view-direct", "v2view-sleeper"}) EXPECT_NE(rt({"state", id}).code, 0) << id << " was deleted";
  if (r.shell.out.find("no-tracefs") != std::string::npos) GTEST_SKIP() << "no tracefs: the moves were not traced";
  EXPECT_EQ(r.moves, "") << "processes moved into the containers' cgroups instead of born there";
}

// The same under a filter that refuses every clone3: the copies, made by clone(2) and moved
// into the cgroup by berth (the tracepoint sees those moves), run the same containers.
TEST(CgroupV2View, UnderAFilterRefusingClone3TheCopiesRunTheSame) {
  SKIP_WITHOUT_V2_VIEW();
  bool traced = true;
  for (const char* err : {"ENOSYS", "EPERM"}) {
    SCOPED_TRACE(err);
    Runtime rt;
    Bundles b(std::string("refused-") + (err[1] == 'N' ? "enosys" : "eperm"));
    auto r = in_v2_view(rt, b.direct, b.sleeper, std::string(BERTH_DENY_SHARED_CLONE) + " --clone3 " + err);
    ASSERT_EQ(r.shell.code, 0) << r.shell.out << r.shell.err;
    std::string run_cg = b.direct.spec().linux->cgroups_path, exec_cg = b.sleeper.spec().linux->cgroups_path;
    EXPECT_EQ(r.run_code, 7) << r.run_err;
    EXPECT_EQ(r.run_out, "0::" + run_cg + "\n") << r.run_err;
    EXPECT_EQ(r.exec_code, 0) << r.exec_err;
    EXPECT_EQ(r.exec_out, "0::" + exec_cg + "\n") << r.exec_err;
    EXPECT_EQ(r.run_err.find("in our memory"), std::string::npos) << r.run_err;
    EXPECT_NE(r.exec_err.find("moved into its cgroups"), std::string::npos) << r.exec_err;
    EXPECT_EQ(r.exec_err.find("in our memory"), std::string::npos) << r.exec_err;
    if (r.shell.out.find("no-tracefs") != std::string::npos) {
      traced = false;
      continue;
    }
    EXPECT_NE(r.moves.find("dst_path=" + run_cg + "\n"), std::string::npos) << r.moves;
    EXPECT_NE(r.moves.find("dst_path=" + exec_cg + "\n"), std::string::npos) << r.moves;
  }
  if (!traced) GTEST_SKIP() << "no tracefs: the moves were not traced";
}

}  // namespace
}  // namespace berth::test
