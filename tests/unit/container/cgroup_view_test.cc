// cgroup_mount_view: what a "cgroup" mount shows for the container's cgroups, and for the
// hierarchies where it has none (rootless without a writable cgroup): berth's own, as runc.
#include <gtest/gtest.h>

#include "cgroups/detect.h"
#include "container/cgroup_setup.h"

namespace berth::container {
namespace {

constexpr const char* kHybrid =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "40 31 0:37 /sub /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr const char* kSelf = "5:pids:/sub/u\n4:memory:/user.slice/user-1000.slice\n2:cpu,cpuacct:/\n0::/user\n";

struct View {
  std::vector<linux::rootfs::CgroupDir> dirs;
  std::vector<linux::rootfs::LinkStep> links;
};

View view(const std::map<std::string, std::string>& paths) {
  auto host = cgroups::parse_host(kHybrid, kSelf);
  EXPECT_TRUE(host) << host.error().message();
  View v;
  if (host) cgroup_mount_view(*host, paths, &v.dirs, &v.links);
  return v;
}

TEST(CgroupMountView, ContainerCgroupsWhenItHasThem) {
  View v = view({{"cpu", "/sys/fs/cgroup/cpu,cpuacct/c1"},
                 {"cpuacct", "/sys/fs/cgroup/cpu,cpuacct/c1"},
                 {"memory", "/sys/fs/cgroup/memory/c1"},
                 {"pids", "/sys/fs/cgroup/pids/c1"},
                 {"", "/sys/fs/cgroup/unified/c1"}});
  ASSERT_EQ(v.dirs.size(), 4u);
  EXPECT_EQ(v.dirs[0].name, "cpu,cpuacct");
  EXPECT_EQ(v.dirs[0].host_dir, "/sys/fs/cgroup/cpu,cpuacct/c1");
  EXPECT_EQ(v.dirs[3].name, "unified");
  EXPECT_EQ(v.links.size(), 2u);
}

// Rootless on a hybrid host: no v1 hierarchy is the user's. The init stays in berth's own
// cgroups, and the mount shows those (runc binds its init's /proc/self/cgroup paths), the
// path taken relative to each mount's root. The unified hierarchy appears only with a
// cgroup of the container's own there (runc mounts no cgroup2 on a hybrid host).
TEST(CgroupMountView, CallerOwnWhereTheContainerHasNone) {
  View v = view({});
  ASSERT_EQ(v.dirs.size(), 3u);
  EXPECT_EQ(v.dirs[0].host_dir, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(v.dirs[0].options, "cpu,cpuacct");
  EXPECT_EQ(v.dirs[1].host_dir, "/sys/fs/cgroup/memory/user.slice/user-1000.slice");
  EXPECT_EQ(v.dirs[2].host_dir, "/sys/fs/cgroup/pids/u") << "relative to the mount's root /sub";
  EXPECT_EQ(v.links.size(), 2u) << "cpu and cpuacct still link to cpu,cpuacct";
}

TEST(CgroupMountView, DelegatedUnifiedWithCallerOwnV1) {
  View v = view({{"", "/sys/fs/cgroup/unified/user/c1"}});
  ASSERT_EQ(v.dirs.size(), 4u);
  EXPECT_EQ(v.dirs[1].host_dir, "/sys/fs/cgroup/memory/user.slice/user-1000.slice");
  EXPECT_EQ(v.dirs[3].name, "unified");
  EXPECT_EQ(v.dirs[3].host_dir, "/sys/fs/cgroup/unified/user/c1");
}

}  // namespace
}  // namespace berth::container
