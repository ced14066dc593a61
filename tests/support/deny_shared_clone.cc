// Runs a command under a seccomp filter that refuses clone(2) with CLONE_VM (EPERM), as a
// restrictive profile around a runtime might: exec's tenant, which shares berth's memory
// where it can, must then fall back to a copy. clone3 stays allowed (a filter cannot read
// its flags), and so does every other clone.
#include <sched.h>
#include <seccomp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s COMMAND [ARG...]\n", argv[0]);
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                               SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_VM, CLONE_VM)) < 0 ||
      seccomp_load(ctx) < 0) {
    std::fprintf(stderr, "deny_shared_clone: cannot load the filter\n");
    return 2;
  }
  seccomp_release(ctx);
  ::execv(argv[1], argv + 1);
  std::perror("deny_shared_clone: execv");
  return 127;
}
