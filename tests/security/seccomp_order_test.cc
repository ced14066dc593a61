// The container's own seccomp filter against berth (docs/security.md, "the container's
// filter is the payload's alone"): a profile may deny, make fail with any errno, or kill
// every call berth makes on the way to execve (close_range, fcntl, the sync socket, the
// exec.fifo read, prctl). berth loads it last, right before execve (without
// noNewPrivileges, one capset follows), so a container whose profile allows only what its
// payload needs runs, by run, create + start and exec alike. Before that order, an
// SCMP_ACT_ERRNO default with ENXIO (runc's seccomp.bats "defaultErrnoRet=ENXIO") failed
// every container: "berth: close_range: no such device or address".
#include <gtest/gtest.h>
#include <unistd.h>

#include "support/exec_helpers.h"

namespace berth::test {
namespace {

constexpr uint32_t kEnxio = 6;
constexpr uint64_t kPrGetName = 16;  // PR_GET_NAME: busybox asks its own name

// What busybox's `touch` and `sleep` need, and nothing of berth's: no close_range, fcntl,
// read, write, sendmsg, recvmsg, prctl but PR_GET_NAME, setgroups or setres[ug]id.
// faccessat2 (439) lifts the -ENOSYS prologue above close_range (436), so that it too gets
// the default errno, as with runc's own test profile. Without noNewPrivileges the one
// capset that follows the load must pass.
spec::Seccomp payload_only_profile(bool nnp) {
  spec::Seccomp p;
  p.default_action = "SCMP_ACT_ERRNO";
  p.default_errno_ret = kEnxio;
  spec::Syscall allow;
  allow.action = "SCMP_ACT_ALLOW";
  allow.names = {"execve",   "exit",       "exit_group",      "arch_prctl",      "brk",      "mmap",
                 "munmap",   "mprotect",   "getrandom",       "getuid",          "geteuid",  "getpid",
                 "readlink", "prlimit64",  "rseq",            "set_robust_list", "set_tid_address",
                 "openat",   "close",      "utimensat",       "rt_sigaction",    "rt_sigprocmask",
                 "nanosleep", "clock_nanosleep", "faccessat2"};
  if (!nnp) allow.names.push_back("capset");
  spec::Syscall get_name;
  get_name.action = "SCMP_ACT_ALLOW";
  get_name.names = {"prctl"};
  get_name.args = {{0, kPrGetName, 0, "SCMP_CMP_EQ"}};
  p.syscalls = {allow, get_name};
  return p;
}

// Kills the whole container process on the calls berth used to make under the filter.
spec::Seccomp kill_berths_calls_profile() {
  spec::Seccomp p;
  p.default_action = "SCMP_ACT_ALLOW";
  spec::Syscall kill;
  kill.action = "SCMP_ACT_KILL_PROCESS";
  kill.names = {"close_range", "fcntl", "read"};
  p.syscalls = {kill};
  return p;
}

struct Case {
  const char* name;
  spec::Seccomp profile;
  bool nnp;
  uint32_t uid;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

void configure(spec::Spec& s, const Case& c, const std::string& id) {
  s.linux->seccomp = c.profile;
  s.process->no_new_privileges = c.nnp;
  s.process->user.uid = c.uid;
  s.process->user.gid = c.uid;
  s.linux->cgroups_path = "/berth-test/" + id;
}

// The payload leaves a file behind: it ran, and exited 0 (run and exec report that too).
void expect_run_works(const Case& c) {
  Runtime rt;
  Bundle b;
  std::string id = std::string("sec-filter-run-") + c.name;
  configure(b.spec(), c, id);
  b.spec().process->args = {"touch", "/tmp/ran"};
  b.write();
  auto r = rt({"run", "--bundle", b.path(), id});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(::access((b.rootfs() + "/tmp/ran").c_str(), F_OK), 0) << "run: the payload did not run";
}

void expect_create_start_works(const Case& c) {
  Runtime rt;
  Bundle b;
  std::string id = std::string("sec-filter-start-") + c.name;
  configure(b.spec(), c, id);
  b.spec().process->args = {"touch", "/tmp/ran"};
  b.write();
  auto created = rt({"create", "--bundle", b.path(), id});
  ASSERT_EQ(created.code, 0) << created.err;
  auto started = rt({"start", id});
  EXPECT_EQ(started.code, 0) << started.err;
  EXPECT_TRUE(eventually([&] { return ::access((b.rootfs() + "/tmp/ran").c_str(), F_OK) == 0; }))
      << "create + start: the payload did not run";
  EXPECT_EQ(rt({"delete", "--force", id}).code, 0);
}

void expect_exec_works(const Case& c) {
  Runtime rt;
  std::string id = std::string("sec-filter-exec-") + c.name;
  Container box(rt, id, [&](spec::Spec& s) { configure(s, c, id); });
  ASSERT_EQ(box.started().code, 0) << box.started().err;
  auto r = box.exec({}, {"touch", "/tmp/ran"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(::access((box.bundle().rootfs() + "/tmp/ran").c_str(), F_OK), 0) << "exec: the payload did not run";
}

class FilterIsThePayloads : public ::testing::TestWithParam<Case> {};

TEST_P(FilterIsThePayloads, RunCreateStartAndExecStillWork) {
  {
    SCOPED_TRACE("run");
    expect_run_works(GetParam());
  }
  {
    SCOPED_TRACE("create + start");
    expect_create_start_works(GetParam());
  }
  {
    SCOPED_TRACE("exec");
    expect_exec_works(GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, FilterIsThePayloads,
    ::testing::Values(Case{"enxio-nnp", payload_only_profile(true), true, 0},
                      Case{"enxio-no-nnp", payload_only_profile(false), false, 0},
                      Case{"enxio-no-nnp-user", payload_only_profile(false), false, 1000},
                      Case{"kill-nnp", kill_berths_calls_profile(), true, 0},
                      Case{"kill-no-nnp", kill_berths_calls_profile(), false, 0}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (auto& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

}  // namespace
}  // namespace berth::test
