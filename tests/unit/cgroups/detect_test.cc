// Layout detection from mountinfo and /proc/self/cgroup.
#include "cgroups/detect.h"

#include <gtest/gtest.h>

#include "unit/cgroups/fake_tree.h"

namespace berth::cgroups {
namespace {

// This development host's mountinfo (hybrid: v1 controllers + controller-less cgroup2).
constexpr const char* kHybrid =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr const char* kHybridSelf = "9:name=systemd:/\n4:memory:/system.slice/ssh.service\n2:cpuacct:/\n1:cpu:/\n0::/\n";

TEST(CgroupsDetect, Hybrid) {
  auto h = parse_host(kHybrid, kHybridSelf);
  ASSERT_TRUE(h) << h.error().message();
  EXPECT_EQ(h->layout, Layout::kHybrid);
  ASSERT_EQ(h->v1.size(), 4u);
  ASSERT_TRUE(h->unified);
  EXPECT_EQ(h->unified->mountpoint, "/sys/fs/cgroup/unified");
  const auto* mem = h->find_v1("memory");
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->own, "/system.slice/ssh.service");
  EXPECT_NE(h->find_v1("name=systemd"), nullptr);
  EXPECT_EQ(h->find_v1("pids"), nullptr);
}

TEST(CgroupsDetect, V1CoMountedAndEscaped) {
  auto h = parse_host(
      "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "33 31 0:29 / /mnt/bind\\040dir rw - cgroup cgroup rw,cpu,cpuacct\n"
      "34 31 0:30 /sub /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids,clone_children\n",
      "3:cpu,cpuacct:/a\n2:pids:/sub/b\n");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->layout, Layout::kV1);
  ASSERT_EQ(h->v1.size(), 2u);  // the bind mount of the same hierarchy counts once
  EXPECT_EQ(h->v1[0].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ(h->v1[1].controllers, (std::vector<std::string>{"pids"}));
  EXPECT_EQ(h->v1[1].root, "/sub");
  EXPECT_FALSE(h->unified);
}

// Found by fuzz_mountinfo (tests/fuzz/corpus/mountinfo/regression-separator-in-fixed-fields):
// the "-" separator was searched from the first field, so a fixed field of "-" made the
// next fields look like the filesystem type. parse_mountinfo (and the kernel's
// format) put it after the six fixed fields.
TEST(CgroupsDetect, SeparatorComesAfterTheFixedFields) {
  auto h = parse_host("30 1 0:26 / /sys/fs/cgroup - cgroup2 cgroup2 rw - ext4 /dev/vda rw\n"
                      "31 1 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
                      "0::/\n2:pids:/p\n");
  ASSERT_TRUE(h) << h.error().message();
  EXPECT_EQ(h->layout, Layout::kV1) << "the first line is an ext4 mount with odd options, not cgroup2";
  ASSERT_EQ(h->v1.size(), 1u);
  EXPECT_EQ(h->v1[0].own, "/p");
  EXPECT_FALSE(parse_host("30 1 0:26 / - cgroup2 cgroup2 rw - ext4 /dev/vda rw\n", "0::/\n"));
}

// Found by fuzz_mountinfo: detection decoded "\\755" as a byte (0xed) where
// parse_mountinfo keeps it; both use unescape_mountinfo now.
TEST(CgroupsDetect, EscapesAsParseMountinfoReadsThem) {
  auto h = parse_host("32 31 0:29 /x\\755 /sys/fs/cgroup/cpu\\040a rw - cgroup cgroup rw,cpu\n", "1:cpu:/\n");
  ASSERT_TRUE(h) << h.error().message();
  ASSERT_EQ(h->v1.size(), 1u);
  EXPECT_EQ(h->v1[0].root, "/x\\755");
  EXPECT_EQ(h->v1[0].mountpoint, "/sys/fs/cgroup/cpu a");
}

TEST(CgroupsDetect, PureV2EvenWithANamedV1Mount) {
  auto h = parse_host(
      "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n"
      "31 30 0:40 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n",
      "0::/user.slice/user-1000.slice/session-2.scope\n");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->layout, Layout::kV2);
  EXPECT_TRUE(h->v1.empty());
  EXPECT_EQ(h->unified->own, "/user.slice/user-1000.slice/session-2.scope");
}

TEST(CgroupsDetect, NoCgroupsIsAnError) {
  EXPECT_FALSE(parse_host("22 1 0:5 / /proc rw - proc proc rw\n", ""));
}

TEST(CgroupsDetect, ProbesAFakeRoot) {
  for (auto layout : {Layout::kV1, Layout::kV2, Layout::kHybrid}) {
    testing::FakeTree tree(layout);
    auto got = detect(tree.root());
    ASSERT_TRUE(got) << got.error().message();
    EXPECT_EQ(*got, layout) << to_string(layout);
    EXPECT_FALSE(tree.host().systemd_running);
  }
  testing::FakeTree tree(Layout::kV2);
  tree.write("run/systemd/system/.keep", "");
  EXPECT_TRUE(tree.host().systemd_running);
}

TEST(CgroupsDetect, RealHostIsReadOnce) {
  const auto& a = host();
  const auto& b = host();
  EXPECT_EQ(&a, &b);
  if (!a) GTEST_SKIP() << "no cgroup mounts here: " << a.error().message();
  EXPECT_FALSE(to_string(a->layout).empty());
}

}  // namespace
}  // namespace berth::cgroups
