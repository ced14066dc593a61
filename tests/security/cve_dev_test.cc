// The /dev CVE classes, attempted against berth:
// CVE-2025-31133: the /dev/null used to mask paths swapped for a symlink (to a procfs
// file), turning masking into exposing. berth masks with the container's /dev/null opened
// without following any symlink and checked to be 1:3 on that very fd; anything else is
// refused. CVE-2025-52565: /dev/console a symlink in the
// image, so that the pty bind covers its target. berth refuses a /dev/console reached
// through any symlink.
#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using CVE_2025_31133 = RootfsTest;
using CVE_2025_52565 = RootfsTest;

TEST_F(CVE_2025_31133, ContainersDevNullIsASymlinkToProcfs) {
  // /dev is the host directory the attacker prepared: its null is a link to core_pattern.
  // Masking with it would bind core_pattern over the masked files; berth refuses instead.
  TempDir dev("berth-rt-31133");
  run_cmd({"ln", "-s", "/proc/sys/kernel/core_pattern", dev.path() + "/null"});
  std::string core_pattern = slurp("/proc/sys/kernel/core_pattern");
  Runtime rt;
  Bundle b;
  b.spec().mounts[1] = {"/dev", "bind", dev.path(), {"rbind"}, {}, {}};
  b.spec().mounts.erase(b.spec().mounts.begin() + 2, b.spec().mounts.begin() + 5);
  b.spec().linux->masked_paths = {"/proc/timer_list", "/proc/keys"};
  b.script("echo '|/tmp/pwn' > /proc/timer_list; echo '|/tmp/pwn' > /proc/sys/kernel/core_pattern");
  auto r = run_container(rt, b, "cve-31133");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("/dev/null in the container is a symlink, not the null device"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(slurp("/proc/sys/kernel/core_pattern"), core_pattern);
}

TEST_F(CVE_2025_31133, ContainersDevNullIsAnotherDevice) {
  // /dev/null swapped for /dev/zero's numbers: not bound over masked files either.
  TempDir dev("berth-rt-31133b");
  run_cmd({"mknod", dev.path() + "/null", "c", "1", "5"});
  Runtime rt;
  Bundle b;
  b.spec().mounts[1] = {"/dev", "bind", dev.path(), {"rbind"}, {}, {}};
  b.spec().mounts.erase(b.spec().mounts.begin() + 2, b.spec().mounts.begin() + 5);
  b.spec().linux->masked_paths = {"/proc/timer_list"};
  b.script("true");
  auto r = run_container(rt, b, "cve-31133b");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("/dev/null in the container is not the null device (1:3)"), std::string::npos) << r.err;
}

TEST_F(CVE_2025_52565, ConsoleIsASymlinkInTheImage) {
  Runtime rt;
  Bundle b;
  b.spec().process->terminal = true;
  // No /dev tmpfs: the image's /dev, with its /dev/console pointing at a file to cover.
  b.spec().mounts.erase(b.spec().mounts.begin() + 1, b.spec().mounts.begin() + 2);
  run_cmd({"ln", "-s", "/etc/passwd", b.rootfs() + "/dev/console"});
  std::string passwd = slurp(b.rootfs() + "/etc/passwd");
  auto r = run_container(rt, b, "cve-52565");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("/dev/console in the rootfs is a symlink"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(b.rootfs() + "/etc/passwd"), passwd);
}

TEST_F(CVE_2025_52565, ConsoleIsThePtyAndNothingElse) {
  Runtime rt;
  Bundle b;
  b.spec().process->terminal = true;
  b.spec().mounts.erase(b.spec().mounts.begin() + 1, b.spec().mounts.begin() + 2);  // image /dev
  run_cmd({"sh", "-c", "echo not-a-tty > " + b.rootfs() + "/dev/console"});
  b.script("stat -c '%F %t' /dev/console");
  auto r = run_container(rt, b, "cve-52565-file");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "character special file 88\r\n");
  EXPECT_EQ(slurp(b.rootfs() + "/dev/console"), "not-a-tty\n") << "the bind covers the file, never writes it";
}

}  // namespace
}  // namespace berth::test
