// Runs a command under a seccomp filter that refuses clone(2) with CLONE_VM (EPERM), as a
// restrictive profile around a runtime might: exec's tenant and run's direct init, which
// share berth's memory where they can, must then fall back to a copy. clone3 stays allowed
// (a filter cannot read its flags), and so does every other clone, unless
// `--clone3 ENOSYS|EPERM` comes first: then every clone3 is refused with that errno (as
// Docker's profile answered ENOSYS for a while), the clone3 of a child in berth's memory on
// pure cgroup v2 included, and berth must make its copies with clone(2).
#include <sched.h>
#include <seccomp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  int clone3_errno = 0;
  int first = 1;
  if (argc > 2 && std::strcmp(argv[1], "--clone3") == 0) {
    if (std::strcmp(argv[2], "ENOSYS") == 0) clone3_errno = ENOSYS;
    if (std::strcmp(argv[2], "EPERM") == 0) clone3_errno = EPERM;
    if (clone3_errno == 0) {
      std::fprintf(stderr, "deny_shared_clone: --clone3 takes ENOSYS or EPERM\n");
      return 2;
    }
    first = 3;
  }
  if (argc <= first) {
    std::fprintf(stderr, "usage: %s [--clone3 ENOSYS|EPERM] COMMAND [ARG...]\n", argv[0]);
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  bool built = ctx && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                       SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_VM, CLONE_VM)) == 0;
  if (built && clone3_errno) built = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(clone3_errno), SCMP_SYS(clone3), 0) == 0;
  if (!built || seccomp_load(ctx) < 0) {
    std::fprintf(stderr, "deny_shared_clone: cannot load the filter\n");
    return 2;
  }
  seccomp_release(ctx);
  ::execv(argv[first], argv + first);
  std::perror("deny_shared_clone: execv");
  return 127;
}
