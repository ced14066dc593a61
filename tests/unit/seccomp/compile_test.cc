// seccomp::compile: the Docker default profile compiled and loaded for real, the ENOSYS
// prologue, unknown syscall names, and the errors that name the offending property.
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "seccomp/seccomp.h"
#include "unit/seccomp/seccomp_test_util.h"

namespace berth::seccomp {
namespace {

using namespace testing;

// Returns 0 when the call failed with errno `want`, else a distinct code per check.
int expect_errno(long rc, int want, int code) { return rc == -1 && errno == want ? 0 : code; }

int docker_profile_child(const Program& prog, const spec::Seccomp& profile, const std::string& dir) {
  if (!load(prog, profile)) return kChildLoadFailed;
  // What every container does: files, pipes, processes, sockets, time.
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  char buf[256];
  if (fd < 0 || read(fd, buf, sizeof buf) <= 0 || close(fd) != 0) return 1;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0 || write(p[1], "x", 1) != 1 || read(p[0], buf, 1) != 1) return 2;
  std::string sub = dir + "/made-under-seccomp";
  if (mkdir(sub.c_str(), 0700) != 0 || rmdir(sub.c_str()) != 0) return 3;
  pid_t pid = fork();
  if (pid == 0) _exit(7);
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 7) return 4;
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || close(s) != 0) return 5;
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0 || getpid() <= 0) return 6;
  // What the profile denies: default errno (EPERM), the argument filter on socket(2)
  // (AF_VSOCK is the one family refused), clone3's explicit ENOSYS.
  if (int r = expect_errno(syscall(SYS_unshare, 0), EPERM, 10)) return r;
  if (int r = expect_errno(syscall(SYS_syslog, 10, nullptr, 0), EPERM, 11)) return r;
  if (int r = expect_errno(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0), EPERM, 12)) return r;
  if (int r = expect_errno(syscall(SYS_clone3, nullptr, 0), ENOSYS, 13)) return r;
  // personality(2) only for the listed personas.
  if (syscall(SYS_personality, 0xffffffffUL) < 0) return 14;
  if (int r = expect_errno(syscall(SYS_personality, 0x0040000UL /* ADDR_NO_RANDOMIZE */), EPERM, 15)) return r;
#if defined(__x86_64__)
  // Newer than anything the profile names: ENOSYS (the prologue), not EPERM. The fixture
  // lists x86 architectures only, so elsewhere the native arch gets no prologue (as runc).
  if (int r = expect_errno(syscall(1000), ENOSYS, 16)) return r;
#endif
  return 0;
}

TEST(SeccompCompile, DockerDefaultProfileLoadsAndFilters) {
  spec::Seccomp docker = fixture("docker-default-seccomp.json");
  ASSERT_EQ(docker.syscalls.size(), 13u);
  auto prog = compile(docker);
  ASSERT_TRUE(prog) << prog.error().message();
  EXPECT_GT(prog->insns.size(), 100u);
  EXPECT_LE(prog->insns.size(), size_t{BPF_MAXINSNS});
  TempDir dir;
  int status = run_child([&] { return docker_profile_child(*prog, docker, dir.path()); });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_status(status);
}

TEST(SeccompCompile, IsDeterministic) {
  spec::Seccomp docker = fixture("docker-default-seccomp.json");
  auto a = compile(docker), b = compile(docker);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(*a == *b);
}

#if defined(__x86_64__)
// Syscall numbers and AUDIT_ARCH values below are x86_64's.
TEST(SeccompCompile, PrologueOnlyWhenTheDefaultDenies) {
  spec::Seccomp deny = profile("SCMP_ACT_ERRNO", {rule({"getpid"}, "SCMP_ACT_ALLOW")});
  deny.architectures = {"SCMP_ARCH_X86_64"};
  spec::Seccomp allow = deny;
  allow.default_action = "SCMP_ACT_ALLOW";
  allow.syscalls[0].action = "SCMP_ACT_ERRNO";
  spec::Seccomp enosys = deny;
  enosys.default_errno_ret = ENOSYS;
  auto d = compile(deny), a = compile(allow), e = compile(enosys);
  ASSERT_TRUE(d && a && e);
  // With one arch the prologue reads: ld arch; jeq x86_64 → section; ja → libseccomp's
  // program. libseccomp's own program loads the syscall number third instead.
  auto has_prologue = [](const Program& p) { return p.insns.size() > 2 && p.insns[2].code == (BPF_JMP | BPF_JA); };
  EXPECT_TRUE(has_prologue(*d));
  EXPECT_FALSE(has_prologue(*a));
  EXPECT_FALSE(has_prologue(*e));  // ENOSYS is already the default: nothing to add
  EXPECT_EQ(d->insns[0].k, offsetof(seccomp_data, arch));
  EXPECT_EQ(d->insns[1].k, uint32_t{AUDIT_ARCH_X86_64});
}

TEST(SeccompCompile, PrologueSplitsAtTheLargestNamedSyscall) {
  // pipe2 (293) is the largest named: 294 (inotify_init1) counts as new, 292 (dup3) is
  // merely not allowed.
  spec::Seccomp p = profile("SCMP_ACT_ERRNO", {child_runtime_rule()}, 42);
  p.architectures = {"SCMP_ARCH_X86_64"};
  auto prog = compile(p);
  ASSERT_TRUE(prog) << prog.error().message();
  int status = run_child([&] {
    if (!load(*prog, p)) return kChildLoadFailed;
    if (int r = expect_errno(syscall(294, 0), ENOSYS, 1)) return r;
    if (int r = expect_errno(syscall(292, -1, -1, 0), 42, 2)) return r;
    return getpid() > 0 ? 0 : 3;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_status(status);
}

#endif  // __x86_64__

TEST(SeccompCompile, UnknownSyscallNamesAreSkippedWithADebugLine) {
  spec::Seccomp p = profile("SCMP_ACT_ALLOW", {rule({"no_such_syscall_xyz", "mkdir"}, "SCMP_ACT_ERRNO", 42)});
  LogCapture log;
  auto prog = compile(p);
  ASSERT_TRUE(prog) << prog.error().message();
  EXPECT_NE(log.text().find("unknown seccomp syscall \\\"no_such_syscall_xyz\\\" ignored"), std::string::npos)
      << log.text();
  TempDir dir;
  int status = run_child([&] {
    if (!load(*prog, p)) return kChildLoadFailed;
    return expect_errno(mkdir((dir.path() + "/x").c_str(), 0700), 42, 1);
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_status(status);
}

TEST(SeccompCompile, RuleRepeatingTheDefaultIsSkipped) {
  // libseccomp would refuse it (EACCES); runc drops it silently, and so does berth.
  spec::Seccomp p = profile("SCMP_ACT_ERRNO", {rule({"mkdir"}, "SCMP_ACT_ERRNO"), rule({"getpid"}, "SCMP_ACT_ALLOW")});
  auto prog = compile(p);
  EXPECT_TRUE(prog) << prog.error().message();
}

TEST(SeccompCompile, FilterLargerThanTheKernelTakesIsRefused) {
  spec::Seccomp p = profile("SCMP_ACT_ALLOW", {});
  for (uint64_t v = 0; v < 4200; ++v)
    p.syscalls.push_back(rule({"getpriority"}, "SCMP_ACT_ERRNO", 1, {arg(1, "SCMP_CMP_EQ", v)}));
  auto prog = compile(p);
  ASSERT_FALSE(prog) << prog->insns.size();
  EXPECT_EQ(prog.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(prog.error().message().find("the kernel takes at most 4096"), std::string::npos) << prog.error().message();
}

void expect_invalid(const spec::Seccomp& p, const std::string& fragment) {
  auto prog = compile(p);
  ASSERT_FALSE(prog);
  EXPECT_EQ(prog.error().kind(), ErrorKind::kInvalidSpec) << prog.error().message();
  EXPECT_NE(prog.error().message().find(fragment), std::string::npos) << prog.error().message();
}

TEST(SeccompCompile, ErrorsNameTheProperty) {
  expect_invalid(profile("SCMP_ACT_BOGUS", {}), "linux.seccomp.defaultAction: unknown action");
  expect_invalid(profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_NOPE")}),
                 "linux.seccomp.syscalls[0].action: unknown action");
  expect_invalid(profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_ERRNO", 70000)}),
                 "linux.seccomp.syscalls[0].errnoRet");
  expect_invalid(profile("SCMP_ACT_ERRNO", {}, 70000), "linux.seccomp.defaultErrnoRet");
  expect_invalid(profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_ERRNO", 1, {arg(6, "SCMP_CMP_EQ", 1)})}),
                 "linux.seccomp.syscalls[0].args[0].index");
  expect_invalid(profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_ERRNO", 1, {arg(0, "SCMP_CMP_SIMILAR", 1)})}),
                 "linux.seccomp.syscalls[0].args[0].op");
  spec::Seccomp arch = profile("SCMP_ACT_ALLOW", {});
  arch.architectures = {"SCMP_ARCH_VAX"};
  expect_invalid(arch, "linux.seccomp.architectures[0]: unknown architecture");
  // runc's limits on SCMP_ACT_NOTIFY, with runc's wording.
  expect_invalid(profile("SCMP_ACT_NOTIFY", {}), "SCMP_ACT_NOTIFY cannot be used as default action");
  expect_invalid(profile("SCMP_ACT_ALLOW", {rule({"read", "write"}, "SCMP_ACT_NOTIFY")}),
                 "SCMP_ACT_NOTIFY cannot be used for the write syscall");
}

}  // namespace
}  // namespace berth::seccomp
