// Every SCMP_ACT_* observed in a forked child, argument filters (each operator, 64-bit
// values, MASKED_EQ, several conditions on one index), multi-arch profiles, and load()
// with and without no_new_privs.
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "seccomp/seccomp.h"
#include "unit/seccomp/seccomp_test_util.h"

namespace berth::seccomp {
namespace {

using namespace testing;

// Loads p in a child (no_new_privs set) and runs body there; returns the wait status.
int with_filter(const spec::Seccomp& p, const std::function<int()>& body, bool nnp = true) {
  auto prog = compile(p);
  if (!prog) {
    ADD_FAILURE() << prog.error().message();
    return -1;
  }
  return run_child(
      [&] {
        auto fd = load(*prog, p);
        if (!fd) {
          fprintf(stderr, "load: %s\n", fd.error().message().c_str());
          return kChildLoadFailed;
        }
        return body();
      },
      nnp);
}

// mkdir under a fresh directory: the errno it failed with, 0 on success.
class SeccompActions : public ::testing::Test {
 protected:
  int try_mkdir() {
    int rc = mkdir(target_.c_str(), 0700);
    return rc == 0 ? 0 : errno;
  }
  TempDir dir_;
  std::string target_ = dir_.path() + "/d";
};

spec::Seccomp mkdir_rule(std::string action, std::optional<uint32_t> errno_ret = std::nullopt) {
  return profile("SCMP_ACT_ALLOW", {rule({"mkdir", "mkdirat"}, std::move(action), errno_ret)});
}

void expect_exit(int status, int code) {
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == code) << describe_status(status) << ", want exit " << code;
}

void expect_killed_by_sigsys(int status) {
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) << describe_status(status);
}

TEST_F(SeccompActions, ErrnoReturnsErrnoRet) {
  expect_exit(with_filter(mkdir_rule("SCMP_ACT_ERRNO", 42), [&] { return try_mkdir(); }), 42);
}

TEST_F(SeccompActions, ErrnoDefaultsToEperm) {
  expect_exit(with_filter(mkdir_rule("SCMP_ACT_ERRNO"), [&] { return try_mkdir(); }), EPERM);
}

TEST_F(SeccompActions, DefaultErrnoRet) {
  spec::Seccomp p = profile("SCMP_ACT_ERRNO", {child_runtime_rule()}, 43);
  expect_exit(with_filter(p, [&] { return try_mkdir(); }), 43);
}

TEST_F(SeccompActions, KillEndsTheProcessWithSigsys) {
  for (const char* action : {"SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_KILL_PROCESS"}) {
    SCOPED_TRACE(action);
    expect_killed_by_sigsys(with_filter(mkdir_rule(action), [&] { try_mkdir(); return 0; }));
  }
}

// si_code of a SIGSYS raised by SECCOMP_RET_TRAP (asm-generic/siginfo.h; glibc lacks it).
constexpr int kSysSeccomp = 1;
volatile sig_atomic_t g_trapped_nr = -1;
volatile sig_atomic_t g_trapped_code = -1;
void on_sigsys(int, siginfo_t* info, void*) {
  g_trapped_nr = info->si_syscall;
  g_trapped_code = info->si_code;
}

TEST_F(SeccompActions, TrapDeliversSigsys) {
  int status = with_filter(mkdir_rule("SCMP_ACT_TRAP"), [&] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGSYS, &sa, nullptr) != 0) return kChildSetupFailed;
    syscall(SYS_mkdir, target_.c_str(), 0700);
    if (g_trapped_code != kSysSeccomp) return 1;
    return g_trapped_nr == SYS_mkdir ? 0 : 2;
  });
  expect_exit(status, 0);
}

TEST_F(SeccompActions, LogAndAllowLetTheCallThrough) {
  for (const char* action : {"SCMP_ACT_LOG", "SCMP_ACT_ALLOW"}) {
    SCOPED_TRACE(action);
    // Under a denying default, so that ALLOW is a real rule and not the default.
    spec::Seccomp p = profile("SCMP_ACT_ERRNO", {rule({"mkdir", "mkdirat"}, action), child_runtime_rule()});
    expect_exit(with_filter(p, [&] { return try_mkdir(); }), 0);
    struct stat st {};
    EXPECT_EQ(stat(target_.c_str(), &st), 0) << "mkdir did not happen";
    rmdir(target_.c_str());
  }
}

TEST_F(SeccompActions, TraceWithoutTracerIsEnosys) {
  expect_exit(with_filter(mkdir_rule("SCMP_ACT_TRACE"), [&] { return try_mkdir(); }), ENOSYS);
  expect_exit(with_filter(mkdir_rule("SCMP_ACT_TRACE", 7), [&] { return try_mkdir(); }), ENOSYS);
}

TEST_F(SeccompActions, FlagsAreAccepted) {
  spec::Seccomp p = mkdir_rule("SCMP_ACT_ERRNO", 42);
  p.flags = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
             "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"};
  expect_exit(with_filter(p, [&] { return try_mkdir(); }), 42);
}

TEST_F(SeccompActions, UnknownFlagIsRefused) {
  spec::Seccomp p = mkdir_rule("SCMP_ACT_ERRNO", 42);
  p.flags = {"SECCOMP_FILTER_FLAG_FROBNICATE"};
  auto prog = compile(p);
  ASSERT_TRUE(prog);
  auto fd = load(*prog, p);  // refused before the kernel is asked: nothing loaded here
  ASSERT_FALSE(fd);
  EXPECT_NE(fd.error().message().find("linux.seccomp.flags[0]"), std::string::npos) << fd.error().message();
}

bool has_cap_sys_admin() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("CapEff:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> 21) & 1;
  return false;
}

TEST_F(SeccompActions, LoadWithoutNoNewPrivs) {
  // The kernel takes a filter from a process without no_new_privs only with CAP_SYS_ADMIN.
  spec::Seccomp p = mkdir_rule("SCMP_ACT_ERRNO", 42);
  auto prog = compile(p);
  ASSERT_TRUE(prog);
  bool admin = has_cap_sys_admin();
  int status = run_child(
      [&] {
        auto fd = load(*prog, p);
        if (admin) return fd ? try_mkdir() : kChildLoadFailed;
        return !fd && fd.error().err() == EACCES && fd.error().message().find("no_new_privs") != std::string::npos
                   ? 42
                   : 1;
      },
      /*no_new_privs=*/false);
  expect_exit(status, 42);
}

// getpriority(which, who) has no side effects and returns -1/ESRCH (or a priority) for any
// `who`, which makes it a convenient probe for argument filters; matches return 42.
bool matched(long which, long who) { return syscall(SYS_getpriority, which, who) == -1 && errno == 42; }

spec::Seccomp getpriority_rule(std::vector<spec::SeccompArg> args) {
  return profile("SCMP_ACT_ALLOW", {rule({"getpriority"}, "SCMP_ACT_ERRNO", 42, std::move(args))});
}

int probe_bits(const std::vector<long>& whos) {
  int bits = 0;
  for (size_t i = 0; i < whos.size(); ++i)
    if (matched(0, whos[i])) bits |= 1 << i;
  return bits;
}

TEST(SeccompArgs, EveryOperator) {
  struct Case {
    const char* op;
    int want;  // bit 0: who=99, bit 1: who=100, bit 2: who=101
  } cases[] = {{"SCMP_CMP_EQ", 0b010}, {"SCMP_CMP_NE", 0b101}, {"SCMP_CMP_LT", 0b001},
               {"SCMP_CMP_LE", 0b011}, {"SCMP_CMP_GT", 0b100}, {"SCMP_CMP_GE", 0b110}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.op);
    expect_exit(with_filter(getpriority_rule({arg(1, c.op, 100)}), [] { return probe_bits({99, 100, 101}); }), c.want);
  }
}

TEST(SeccompArgs, ComparesAll64Bits) {
  // 0x1_0000_0064 has 100 in its low half; an EQ 100 must not match it.
  expect_exit(with_filter(getpriority_rule({arg(1, "SCMP_CMP_EQ", 100)}),
                          [] { return probe_bits({100, 0x100000064L}); }),
              0b01);
  expect_exit(with_filter(getpriority_rule({arg(1, "SCMP_CMP_GT", 0xffffffffUL)}),
                          [] { return probe_bits({0xffffffffL, 0x100000000L}); }),
              0b10);
}

TEST(SeccompArgs, MaskedEqualUsesValueAsMaskAndValueTwoAsResult) {
  auto p = getpriority_rule({arg(1, "SCMP_CMP_MASKED_EQ", 0xff00, 0x1200)});
  expect_exit(with_filter(p, [] { return probe_bits({0x12ab, 0x1234, 0x13ab, 0x2200}); }), 0b0011);
}

TEST(SeccompArgs, ConditionsOnDifferentIndexesAreAnded) {
  auto p = getpriority_rule({arg(0, "SCMP_CMP_EQ", 0), arg(1, "SCMP_CMP_EQ", 100)});
  int status = with_filter(p, [] {
    return (matched(0, 100) ? 1 : 0) | (matched(1, 100) ? 2 : 0) | (matched(0, 101) ? 4 : 0);
  });
  expect_exit(status, 0b001);
}

TEST(SeccompArgs, ConditionsOnOneIndexBecomeSeparateRules) {
  // As runc: libseccomp cannot AND two conditions on one argument, so each becomes a rule
  // of its own and any of them matches.
  auto p = getpriority_rule({arg(1, "SCMP_CMP_EQ", 100), arg(1, "SCMP_CMP_EQ", 200)});
  expect_exit(with_filter(p, [] { return probe_bits({100, 200, 300}); }), 0b011);
}

#if defined(__x86_64__)
// A 32-bit syscall from a 64-bit process: int $0x80 enters the i386 table, which seccomp
// sees as AUDIT_ARCH_I386. r8-r11 are zeroed by the kernel on this path.
long int80(long nr, long a1, long a2) {
  long ret;
  asm volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a1), "c"(a2) : "memory", "r8", "r9", "r10", "r11");
  return ret;
}
constexpr long kI386Mkdir = 39;
constexpr long kI386Getpid = 20;

// Whether this kernel takes i386 syscalls from a 64-bit process at all. Kernels built
// without CONFIG_IA32_EMULATION, or booted with ia32_emulation=0, answer int $0x80 with
// SIGSEGV before any filter runs: there is nothing to test then. Probed in a child, once.
bool i386_entry_works() {
  static const bool works = [] {
    pid_t pid = ::fork();
    if (pid == 0) _exit(int80(kI386Getpid, 0, 0) == ::getpid() ? 0 : 1);
    int status = 0;
    return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }();
  return works;
}
#define SKIP_WITHOUT_I386_ENTRY()                                                                  \
  if (!i386_entry_works())                                                                        \
  GTEST_SKIP() << "this kernel has no 32-bit syscall entry (int $0x80 gets SIGSEGV: no "           \
                  "CONFIG_IA32_EMULATION, or ia32_emulation=0)"
constexpr long kX32Bit = 0x40000000;
constexpr long kX32Mkdir = kX32Bit | 83;

spec::Seccomp multi_arch(std::vector<std::string> archs) {
  spec::Seccomp p = profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_ERRNO", 42)});
  p.architectures = std::move(archs);
  return p;
}

// x32 numbers enter through the 64-bit entry with bit 30 set; seccomp sees them before the
// kernel looks the number up, so these checks hold whether or not CONFIG_X86_X32_ABI is set.
TEST(SeccompArch, X86_64WithX86AndX32) {
  auto p = multi_arch({"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"});
  int status = with_filter(p, [] {
    if (!(syscall(SYS_mkdir, "/nonexistent/a", 0700) == -1 && errno == 42)) return 1;
    if (!(syscall(kX32Mkdir, "/nonexistent/a", 0700) == -1 && errno == 42)) return 3;
    return 0;
  });
  expect_exit(status, 0);
}

TEST(SeccompArch, X86ThroughInt80WithX86Listed) {
  SKIP_WITHOUT_I386_ENTRY();
  auto p = multi_arch({"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"});
  // The pointer is truncated to 32 bits, but the filter answers before it is read.
  expect_exit(with_filter(p, [] { return static_cast<int>(int80(kI386Mkdir, 0, 0700)) == -42 ? 0 : 2; }), 0);
}

TEST(SeccompArch, UnlistedX32GetsTheBadArchAction) {
  expect_killed_by_sigsys(with_filter(multi_arch({"SCMP_ARCH_X86_64"}), [] { syscall(kX32Mkdir, 0, 0700); return 0; }));
}

TEST(SeccompArch, UnlistedX86GetsTheBadArchAction) {
  SKIP_WITHOUT_I386_ENTRY();
  // Without SCMP_ARCH_X86, libseccomp's filter kills a 32-bit syscall outright.
  expect_killed_by_sigsys(with_filter(multi_arch({"SCMP_ARCH_X86_64"}), [] { int80(kI386Mkdir, 0, 0700); return 0; }));
}

// Largest named: pipe2 on x86_64 (293) and i386 (331), sigaltstack on x32 (525|bit, in
// x32's own 512+ range). Above: ENOSYS; below and not named (100): the default errno 7.
spec::Seccomp enosys_profile() {
  spec::Seccomp p = profile("SCMP_ACT_ERRNO", {child_runtime_rule()}, 7);
  p.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
  return p;
}

TEST(SeccompArch, EnosysPrologueCoversX86_64AndX32) {
  int status = with_filter(enosys_profile(), [] {
    auto err = [](long rc) { return rc == -1 ? errno : 0; };
    if (err(syscall(380)) != ENOSYS || err(syscall(100)) != 7) return 1;
    if (err(syscall(kX32Bit | 600)) != ENOSYS || err(syscall(kX32Bit | 100)) != 7) return 3;
    return 0;
  });
  expect_exit(status, 0);
}

TEST(SeccompArch, EnosysPrologueCoversX86) {
  SKIP_WITHOUT_I386_ENTRY();
  int status = with_filter(enosys_profile(), [] {
    return static_cast<int>(int80(380, 0, 0)) == -ENOSYS && static_cast<int>(int80(100, 0, 0)) == -7 ? 0 : 2;
  });
  expect_exit(status, 0);
}
#endif  // __x86_64__

}  // namespace
}  // namespace berth::seccomp
