// Symlinks in the image that try to lead the runtime's mounts and directory creation out of
// the rootfs, each attempted with the link already in place (a deterministic stand-in for
// the races of the originals):
// CVE-2021-30465 (a mount destination that is a symlink out of the rootfs), CVE-2024-45310
// (directories created through symlinks), CVE-2026-41579 and crun's CVE-2026-47766 (/dev
// entries, or the rootfs's /dev itself, replaced by symlinks). Every path is resolved
// inside the rootfs and created dirfd-relative: nothing appears on the host.
#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using CVE_2021_30465 = RootfsTest;
using CVE_2024_45310 = RootfsTest;
using CVE_2026_41579 = RootfsTest;
using CVE_2026_47766 = RootfsTest;

std::string listing(const std::string& dir) { return run_cmd({"ls", "-A", dir}).out; }

TEST_F(CVE_2021_30465, MountDestinationIsASymlinkOutOfTheRootfs) {
  TempDir host("berth-rt-30465");
  run_cmd({"mkdir", host.path() + "/target"});
  Runtime rt;
  Bundle b;
  // Inside the rootfs the same path exists too: the link must resolve there.
  run_cmd({"sh", "-c", "mkdir -p " + b.rootfs() + host.path() + "/target && ln -s " + host.path() + "/target " + b.rootfs() + "/vol"});
  b.spec().mounts.push_back({"/vol", "tmpfs", "tmpfs", {"size=64k"}, {}, {}});
  b.script("grep -c ' " + host.path() + "/target .* - tmpfs ' /proc/self/mountinfo");
  auto r = run_container(rt, b, "cve-30465");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n") << "the tmpfs is at the link's target inside the container";
  EXPECT_EQ(listing(host.path() + "/target"), "");
}

TEST_F(CVE_2021_30465, DotDotLinkCannotClimbOut) {
  TempDir host("berth-rt-30465b");
  Runtime rt;
  Bundle b;
  run_cmd({"ln", "-s", "../../../../../../../../../.." + host.path(), b.rootfs() + "/up"});
  run_cmd({"mkdir", "-p", b.rootfs() + host.path()});
  b.spec().mounts.push_back({"/up/x", "tmpfs", "tmpfs", {"size=64k"}, {}, {}});
  auto r = run_container(rt, b, "cve-30465-dotdot");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(listing(host.path()), "") << "a directory was made on the host";
  EXPECT_TRUE(host_exists(b.rootfs() + host.path() + "/x"));
}

TEST_F(CVE_2024_45310, DirectoriesAreNotCreatedThroughALink) {
  TempDir host("berth-rt-45310");
  Runtime rt;
  Bundle b;
  // The link's target exists on the host only: inside the rootfs it dangles.
  run_cmd({"ln", "-s", host.path(), b.rootfs() + "/data"});
  b.spec().mounts.push_back({"/data/a/b/c", "tmpfs", "tmpfs", {"size=64k"}, {}, {}});
  auto r = run_container(rt, b, "cve-45310");
  EXPECT_EQ(r.code, 1) << "a dangling link is not followed out of the rootfs";
  EXPECT_NE(r.err.find("mount /data/a/b/c: create /data/a/b/c"), std::string::npos) << r.err;
  EXPECT_EQ(listing(host.path()), "") << "directories were created on the host";
}

TEST_F(CVE_2026_41579, RootfsDevIsASymlinkToTheHost) {
  TempDir host("berth-rt-41579");
  Runtime rt;
  Bundle b;
  // No /dev tmpfs: the device nodes go into the image's /dev, which leads to the host.
  b.spec().mounts.erase(b.spec().mounts.begin() + 1, b.spec().mounts.begin() + 5);
  run_cmd({"sh", "-c", "rmdir " + b.rootfs() + "/dev && ln -s " + host.path() + " " + b.rootfs() + "/dev"});
  auto r = run_container(rt, b, "cve-41579-dev");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("create /dev"), std::string::npos) << r.err;
  EXPECT_EQ(listing(host.path()), "") << "device nodes or links were made on the host";
}

TEST_F(CVE_2026_41579, DevEntriesAreSymlinksInTheImage) {
  TempDir host("berth-rt-41579b");
  run_cmd({"sh", "-c", "echo keep > " + host.path() + "/ptmx-target"});
  Runtime rt;
  Bundle b;
  b.spec().mounts.erase(b.spec().mounts.begin() + 1, b.spec().mounts.begin() + 5);
  run_cmd({"sh", "-c", "cd " + b.rootfs() + "/dev && ln -s " + host.path() + "/ptmx-target ptmx && ln -s " + host.path() +
                           "/fd-target fd && ln -s " + host.path() + "/null-target null"});
  auto r = run_container(rt, b, "cve-41579-entries");
  // /dev/null must be the null device: a link there is "a different file".
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("a different file already exists at /dev/null"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(host.path() + "/ptmx-target"), "keep\n");
  EXPECT_EQ(listing(host.path()), "ptmx-target\n");
}

TEST_F(CVE_2026_41579, PtmxLinkOfTheImageIsReplaced) {
  TempDir host("berth-rt-41579c");
  run_cmd({"sh", "-c", "echo keep > " + host.path() + "/target"});
  Runtime rt;
  Bundle b;
  b.spec().mounts.erase(b.spec().mounts.begin() + 1, b.spec().mounts.begin() + 5);
  run_cmd({"ln", "-s", host.path() + "/target", b.rootfs() + "/dev/ptmx"});
  b.script("readlink /dev/ptmx");
  auto r = run_container(rt, b, "cve-41579-ptmx");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "pts/ptmx\n");
  EXPECT_EQ(slurp(host.path() + "/target"), "keep\n");
}

TEST_F(CVE_2026_47766, DevShmIsASymlinkOutOfTheRootfs) {
  // crun's case: a tmpfs for /dev/shm mounted where the image's /dev/shm link points.
  TempDir host("berth-rt-47766");
  Runtime rt;
  Bundle b;
  b.spec().mounts.erase(b.spec().mounts.begin() + 1, b.spec().mounts.begin() + 5);
  b.spec().mounts.push_back({"/dev/shm", "tmpfs", "shm", {"size=64k"}, {}, {}});
  run_cmd({"sh", "-c", "mkdir -p " + b.rootfs() + host.path() + " && ln -s " + host.path() + " " + b.rootfs() + "/dev/shm"});
  b.script("grep -c ' " + host.path() + " .* - tmpfs shm ' /proc/self/mountinfo");
  auto r = run_container(rt, b, "cve-47766");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(listing(host.path()), "");
}

}  // namespace
}  // namespace berth::test
