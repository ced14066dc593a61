// CVE-2021-30465 as it was exploited: a racing loop swaps a mount destination between a
// directory and a symlink out of the rootfs (renameat2 RENAME_EXCHANGE) while containers
// are created. A runtime that checks the path and then mounts onto the string loses the race
// sometimes and mounts onto the host's directory, where the container never sees it. berth
// resolves once to an fd inside the root and mounts onto that fd: each run either fails with
// a clear error or shows its tmpfs inside the container, and no host path is ever covered.
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using CVE_2021_30465 = RootfsTest;

TEST_F(CVE_2021_30465, RacingSymlinkSwapNeverMountsOutsideTheRootfs) {
  TempDir host("berth-rt-30465-race");
  Runtime rt;
  Bundle b;
  std::string dir = b.rootfs() + "/mnt/x", link = b.rootfs() + "/mnt/y";
  ASSERT_EQ(run_cmd({"mkdir", "-p", dir}).code, 0);
  ASSERT_EQ(::symlink(host.path().c_str(), link.c_str()), 0);
  // A tmpfs with a mode no other mount has, so the container can find it in its mountinfo.
  b.spec().mounts.push_back({"/mnt/x", "tmpfs", "tmpfs", {"mode=713", "size=64k"}, {}, {}});
  b.script("grep -c 'mode=713' /proc/self/mountinfo");
  std::atomic<bool> stop{false};
  std::atomic<long> swaps{0};
  std::thread racer([&] {
    while (!stop)
      if (::syscall(SYS_renameat2, AT_FDCWD, dir.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE) == 0) ++swaps;
  });
  int ran = 0, refused = 0;
  std::vector<std::string> host_mounts;
  for (int i = 0; i < 40; ++i) {
    auto r = run_container(rt, b, "cve-30465-race");
    for (const auto& l : mount_lines(host.path())) host_mounts.push_back(l);
    if (r.code == 0) {
      ++ran;
      EXPECT_EQ(r.out, "1\n") << "run " << i << ": the tmpfs is not inside the container";
    } else {
      ++refused;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    rt({"delete", "--force", "cve-30465-race"});
  }
  stop = true;
  racer.join();
  std::printf("40 creates against %ld swaps: %d ran with the tmpfs inside, %d refused\n", swaps.load(), ran, refused);
  EXPECT_GT(swaps.load(), 40) << "the race never ran";
  EXPECT_TRUE(host_mounts.empty()) << host_mounts[0];
  EXPECT_EQ(run_cmd({"ls", "-A", host.path()}).out, "") << "something was made in the host directory";
}

}  // namespace
}  // namespace berth::test
