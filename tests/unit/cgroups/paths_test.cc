// linux.cgroupsPath placement: cleaning, runc's relative rules per layout, systemd refusal.
#include "cgroups/paths.h"

#include <gtest/gtest.h>

#include "unit/cgroups/fake_tree.h"

namespace berth::cgroups {
namespace {

TEST(CgroupsPaths, CleanPathLikeRunc) {
  EXPECT_EQ(clean_path(""), "");
  EXPECT_EQ(clean_path("/a/b/../c/"), "/a/c");
  EXPECT_EQ(clean_path("/../../x"), "/x");
  EXPECT_EQ(clean_path("a/./b"), "a/b");
  EXPECT_EQ(clean_path("../../x"), "x");  // a relative path cannot climb out
  EXPECT_EQ(clean_path("a/../../b"), "b");
  EXPECT_EQ(clean_path(".."), "");
}

TEST(CgroupsPaths, SystemdPathsNeedTheFlag) {
  EXPECT_TRUE(is_systemd_path("system.slice:docker:abc"));
  EXPECT_FALSE(is_systemd_path("/system.slice:docker:abc"));
  EXPECT_FALSE(is_systemd_path("a:b"));
  testing::FakeTree tree(Layout::kV1);
  Host host = tree.host();
  auto r = container_path(host, "system.slice:docker:abc", "abc", false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "systemd cgroup driver requires a running systemd");
  host.systemd_running = true;
  r = container_path(host, "system.slice:docker:abc", "abc", false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(),
            "linux.cgroupsPath \"system.slice:docker:abc\" has the systemd form slice:prefix:name: use --systemd-cgroup");
  // The systemd driver resolves its paths itself (cgroups/systemd); never through here.
  EXPECT_FALSE(container_path(host, "", "abc", true));
}

TEST(CgroupsPaths, EmptyPathMeansTheId) {
  testing::FakeTree tree(Layout::kV1);
  EXPECT_EQ(container_path(tree.host(), "", "c1", false).value(), "c1");
  EXPECT_EQ(container_path(tree.host(), "/x/../y", "c1", false).value(), "/y");
  EXPECT_FALSE(container_path(tree.host(), "", "", false));
  EXPECT_FALSE(container_path(tree.host(), "/", "c1", false));
}

TEST(CgroupsPaths, V1RelativeJoinsTheCallersCgroup) {
  Hierarchy h{{"memory"}, "/sys/fs/cgroup/memory", "/", "/system.slice/ssh.service"};
  Host host;
  EXPECT_EQ(hierarchy_path(host, h, "c1", false), "/system.slice/ssh.service/c1");
  EXPECT_EQ(hierarchy_path(host, h, "/abs/c1", false), "/abs/c1");
  // A mount of a subtree: /proc/self/cgroup paths are relative to the hierarchy's root.
  Hierarchy sub{{"pids"}, "/sys/fs/cgroup/pids", "/sub", "/sub/b"};
  EXPECT_EQ(hierarchy_path(host, sub, "c1", false), "/b/c1");
}

TEST(CgroupsPaths, V2RelativeJoinsTheParentOfTheCallersCgroup) {
  Hierarchy h{{}, "/sys/fs/cgroup", "/", "/user.slice/session-1.scope"};
  Host host;
  EXPECT_EQ(hierarchy_path(host, h, "c1", true), "/user.slice/c1");
  EXPECT_EQ(hierarchy_path(host, h, "a/b", true), "/user.slice/a/b");
  Hierarchy top{{}, "/sys/fs/cgroup", "/", "/"};
  EXPECT_EQ(hierarchy_path(host, top, "c1", true), "/c1");
}

}  // namespace
}  // namespace berth::cgroups
