// The plan's refusals (each names the field and says why) and the decisions that do not
// show in a golden file: default device order, runc's deferred read-only mounts, links.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include "unit/linux/rootfs/fixture.h"

namespace berth::linux::rootfs::testing {
namespace {

std::string plan_error(const spec::Spec& s, PlanContext c = base_context()) {
  auto p = plan_rootfs(s, c);
  return p ? "<planned>" : p.error().message();
}

TEST(RootfsPlan, RelativeBindSourceIsInTheBundle) {
  spec::Spec s = minimal_spec();
  s.mounts = {mnt("/data", "bind", "../etc/./", {"bind"}), mnt("/abs", "bind", "/usr", {"rbind"})};
  PlanContext c = base_context();
  c.bundle = "/usr";
  auto p = plan_rootfs(s, c);
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->mounts.size(), 2u);
  // Relative to the bundle, whatever berth's working directory; ".." may leave it, as an
  // absolute source may point anywhere.
  EXPECT_EQ(p->mounts[0].source, "/etc");
  EXPECT_EQ(p->mounts[1].source, "/usr");
}

TEST(RootfsPlan, BindSourceMustBeGiven) {
  spec::Spec s = minimal_spec();
  s.mounts = {mnt("/data", "bind", "", {"bind"})};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0].source: a bind mount needs a source path");
  s.mounts = {mnt("/data", "bind", "relative/dir", {"bind"})};
  PlanContext c = base_context();
  c.bundle.clear();
  EXPECT_EQ(plan_error(s, c), "config.json: mounts[0].source: \"relative/dir\" is relative, and there is no bundle "
                              "directory to resolve it against");
}

TEST(RootfsPlan, BindSourceMustExist) {
  spec::Spec s = minimal_spec();
  s.mounts = {mnt("/data", "bind", "/nonexistent/berth-test-source", {"rbind"})};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0]: source /nonexistent/berth-test-source: no such file or directory");
}

TEST(RootfsPlan, NonBindNeedsType) {
  spec::Spec s = minimal_spec();
  s.mounts = {mnt("/data", "", "tmpfs", {})};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0].type: missing for a non-bind mount");
}

TEST(RootfsPlan, OnlyProcfsMayCoverProc) {
  spec::Spec s = minimal_spec();
  s.mounts = {mnt("/proc", "tmpfs", "tmpfs", {})};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0]: \"/proc\" cannot be mounted because it is not of type proc");
  s.mounts = {mnt("/proc", "bind", "/etc", {"rbind"})};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0]: \"/proc\" cannot be mounted because it is not of type proc");
  s.mounts = {mnt("/proc", "bind", "/proc", {"rbind"})};  // the host's procfs: allowed, as runc
  EXPECT_EQ(plan_error(s), "<planned>");
}

TEST(RootfsPlan, NothingInsideProcButLxcfsFiles) {
  spec::Spec s = minimal_spec();
  s.mounts = {mnt("/proc/sys/kernel", "bind", "/tmp", {"rbind"})};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0]: \"/proc/sys/kernel\" cannot be mounted because it is inside /proc");
  s.mounts = {mnt("/proc/sys/kernel", "devpts", "devpts", {})};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0]: \"/proc/sys/kernel\" cannot be mounted because it is inside /proc");
  s.mounts = {mnt("/proc/driver", "tmpfs", "tmpfs", {})};  // fresh and empty, like a masked directory
  EXPECT_EQ(plan_error(s), "<planned>");
  s.mounts = {mnt("/proc/sys/kernel/ns_last_pid", "bind", "/etc/passwd", {"bind"})};
  EXPECT_EQ(plan_error(s), "<planned>");
  s.mounts = {mnt("/proc/../proc/self/attr", "bind", "/etc", {"bind"})};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0]: \"/proc/self/attr\" cannot be mounted because it is inside /proc");
  s.mounts = {mnt("/proc/meminfo", "bind", "/etc/passwd", {"bind"})};
  EXPECT_EQ(plan_error(s), "<planned>");
  s.mounts = {mnt("/proc/sub", "proc", "proc", {})};  // proc and sysfs are checked after mounting
  EXPECT_EQ(plan_error(s), "<planned>");
}

TEST(RootfsPlan, IdmapOnlyForBinds) {
  spec::Spec s = minimal_spec();
  spec::Mount m = mnt("/data", "tmpfs", "tmpfs", {"idmap"});
  s.mounts = {m};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0]: idmapped mounts are only supported for bind mounts");
}

TEST(RootfsPlan, IdmapMappingsGoTogether) {
  spec::Spec s = minimal_spec();
  spec::Mount m = mnt("/data", "bind", "/etc", {"rbind"});
  m.uid_mappings = {{0, 1000, 1}};
  s.mounts = {m};
  EXPECT_EQ(plan_error(s), "config.json: mounts[0]: uidMappings and gidMappings must be given together");
}

TEST(RootfsPlan, BareIdmapNeedsTheContainersMappings) {
  spec::Spec s = minimal_spec();
  s.mounts = {mnt("/data", "bind", "/etc", {"rbind", "idmap"})};
  EXPECT_EQ(plan_error(s),
            "config.json: mounts[0].options: \"idmap\" without uidMappings/gidMappings needs the container's user "
            "namespace mappings (linux.uidMappings/gidMappings)");
}

TEST(RootfsPlan, MappingsAloneMakeAnIdmappedMount) {
  spec::Spec s = minimal_spec();
  spec::Mount m = mnt("/data", "bind", "/etc", {"bind"});
  m.uid_mappings = {{0, 1000, 10}};
  m.gid_mappings = {{0, 2000, 10}};
  s.mounts = {m};
  auto p = plan_rootfs(s, base_context());
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_TRUE(p->mounts[0].idmap);
  EXPECT_EQ(p->mounts[0].uid_mappings, m.uid_mappings);
  EXPECT_FALSE(p->mounts[0].opts.idmap_recursive);
}

TEST(RootfsPlan, DefaultDevicesInRuncOrder) {
  std::vector<std::string> paths;
  for (const auto& d : default_devices(false)) paths.push_back(d.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/dev/null", "/dev/random", "/dev/full", "/dev/tty", "/dev/zero",
                                              "/dev/urandom"}));
  for (const auto& d : default_devices(true)) EXPECT_TRUE(d.bind) << d.path;
}

// Rootless podman runs the runtime inside its own user namespace and gives a config without
// one: the nodes are still bound from the host (mknod is refused there; a node podman already
// bound must not be chmod'ed), as runc decides with userns.RunningInUserNS.
TEST(RootfsPlan, RuntimeInUserNamespaceBindsDevices) {
  spec::Spec s = minimal_spec();
  s.linux->devices = {spec::Device{"/dev/fuse", "c", 10, 229, 0600u, 0u, 0u}};
  PlanContext c = base_context();
  c.new_user_ns = false;
  auto host = plan_rootfs(s, c);
  ASSERT_TRUE(host) << host.error().message();
  for (const auto& d : host->devices) EXPECT_FALSE(d.bind) << d.path;
  c.runtime_in_user_ns = true;
  auto p = plan_rootfs(s, c);
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_FALSE(p->devices.empty());
  for (const auto& d : p->devices) {
    EXPECT_TRUE(d.bind) << d.path;
    EXPECT_EQ(d.host_path, d.path);
  }
  EXPECT_FALSE(p->user_ns) << "no user namespace of its own to enter";
}

TEST(RootfsPlan, SpecDeviceReplacesDefaultAtSamePath) {
  spec::Spec s = minimal_spec();
  s.linux->devices = {spec::Device{"/dev/null", "c", 1, 3, 0600u, 7u, 8u}};
  auto p = plan_rootfs(s, base_context());
  ASSERT_TRUE(p);
  int count = 0;
  for (const auto& d : p->devices)
    if (d.path == "/dev/null") {
      ++count;
      EXPECT_EQ(d.mode, 0600u);
      EXPECT_EQ(d.uid, 7u);
    }
  EXPECT_EQ(count, 1);
}

TEST(RootfsPlan, NoKcoreNoCoreLink) {
  PlanContext c = base_context();
  c.host_has_kcore = false;
  auto p = plan_rootfs(minimal_spec(), c);
  ASSERT_TRUE(p);
  for (const auto& l : p->links) EXPECT_NE(l.path, "/dev/core");
}

TEST(RootfsPlan, ReadOnlyTmpfsAndDevAreDeferred) {
  spec::Spec s = minimal_spec();
  s.mounts = {mnt("/dev", "tmpfs", "tmpfs", {"ro"}), mnt("/t", "tmpfs", "tmpfs", {"ro"}),
              mnt("/s", "sysfs", "sysfs", {"ro"}), mnt("/b", "bind", "/etc", {"bind", "ro"})};
  auto p = plan_rootfs(s, base_context());
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->mounts[0].defer_ro);
  EXPECT_TRUE(p->mounts[1].defer_ro);
  EXPECT_FALSE(p->mounts[1].opts.flags & MS_RDONLY);
  EXPECT_FALSE(p->mounts[2].defer_ro) << "sysfs is mounted read-only directly, as runc";
  EXPECT_FALSE(p->mounts[3].defer_ro) << "a bind is remounted read-only at once";
}

TEST(RootfsPlan, SharedRootMakesParentPrivateOnlyWhenShared) {
  spec::Spec s = minimal_spec();
  s.linux->rootfs_propagation = "shared";
  PlanContext c = base_context();
  c.rootfs = "/var/lib/x/rootfs";
  c.mountinfo = "27 1 254:0 / / rw - ext4 /dev/vda rw\n30 27 0:5 / /var/lib rw - ext4 /dev/vdb rw\n";
  auto p = plan_rootfs(s, c);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->private_parent, "") << "a private /var/lib stays as it is under a non-recursive \"shared\"";
  s.linux->rootfs_propagation = "rshared";
  p = plan_rootfs(s, c);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->private_parent, "/var/lib");
}

}  // namespace
}  // namespace berth::linux::rootfs::testing
