// A container process (uid 1000, without CAP_SYS_ADMIN) makes itself a user namespace (`unshare -U`, allowed
// to any process where unprivileged user namespaces are on) and is root with every
// capability there. Those capabilities belong to the new namespace: the host's sysctls and
// a mount in the container's mount namespace (owned by the host's user namespace) stay out
// of reach, and the host's core_pattern is unchanged.
#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using UserNamespaces = RootfsTest;

TEST_F(UserNamespaces, CapabilitiesOfANewUserNamespaceReachNothingOfTheHost) {
  std::string core_pattern = slurp("/proc/sys/kernel/core_pattern");
  Runtime rt;
  Bundle b;
  // Not as root: mapping the host's uid 0 into a new namespace needs CAP_SETFCAP (the
  // kernel's own rule since 5.12); any other uid maps itself without a capability.
  b.spec().process->user.uid = 1000;
  b.spec().process->user.gid = 1000;
  b.script(
      "unshare -Ur sh -c '"
      "[ \"$(grep ^CapEff: /proc/self/status | cut -f2)\" != 0000000000000000 ] && echo caps; "
      "echo \"|/tmp/pwn\" > /proc/sys/kernel/core_pattern 2>/dev/null && echo WROTE-CORE-PATTERN; "
      "mount -t tmpfs x /mnt 2>/dev/null && echo MOUNTED; "
      "echo done'");
  if (slurp("/proc/sys/user/max_user_namespaces") == "0\n")
    GTEST_SKIP() << "user namespaces are off on this host (user.max_user_namespaces = 0)";
  auto r = run_container(rt, b, "sec-userns");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "caps\ndone\n");
  EXPECT_EQ(slurp("/proc/sys/kernel/core_pattern"), core_pattern);
}

}  // namespace
}  // namespace berth::test
