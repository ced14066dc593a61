// The Applier against the recording fake, where the golden shapes do not reach: failing the
// Nth call of a name stops the phase with an error naming the step, fallbacks taken on
// EPERM/EEXIST, and the exact calls of the security-relevant steps.
#include <gtest/gtest.h>

#include "unit/linux/rootfs/fixture.h"

namespace berth::linux::rootfs::testing {
namespace {

struct Run {
  std::string log;
  std::string error;  // "" when every phase succeeded
};

// The fake with the image in place; tests add or replace nodes afterwards.
struct Image : test::RecordingSys {
  Image() { add_image(*this); }
};

Run run(spec::Spec s, test::RecordingSys& sys, PlanContext c = base_context()) {
  auto plan = plan_rootfs(s, c);
  if (!plan) return {"", "plan: " + plan.error().message()};
  std::string text = apply_all(sys, *plan);
  auto pos = text.find("error: ");
  if (pos == std::string::npos) return {text, ""};
  return {text.substr(0, pos), text.substr(pos + 7, text.size() - pos - 8)};
}

spec::Spec with_mounts(std::vector<spec::Mount> m) {
  spec::Spec s = minimal_spec();
  s.mounts = std::move(m);
  return s;
}

bool has_line(const std::string& log, const std::string& line) { return log.find(line + "\n") != std::string::npos; }
bool has(const std::string& log, const std::string& part) { return log.find(part) != std::string::npos; }

TEST(RootfsApply, FailingTheSecondMountNamesTheMount) {
  Image sys;
  sys.fail("mount", 4, EPERM);  // 1 propagation, 2 rootfs bind, 3 /proc, 4 /tmp
  auto r = run(with_mounts({mnt("/proc", "proc", "proc", {}), mnt("/tmp", "tmpfs", "tmpfs", {"size=1m"})}), sys);
  EXPECT_EQ(r.error, "mount /tmp: mount: operation not permitted");
  EXPECT_TRUE(has(r.log, "\"tmpfs\", 0, \"size=1m\") = -EPERM\n")) << r.log;
}

TEST(RootfsApply, FailingTheRootfsBindStopsBeforeAnyMount) {
  Image sys;
  sys.fail("mount", 2, EINVAL);
  auto r = run(with_mounts({mnt("/proc", "proc", "proc", {})}), sys);
  EXPECT_EQ(r.error, "bind rootfs: mount: invalid argument");
  EXPECT_EQ(r.log.find("\"proc\""), std::string::npos) << r.log;
}

TEST(RootfsApply, FailingMoveMountOfABindNamesTheDestination) {
  Image sys;
  sys.fail("move_mount", 1, ENOENT);
  auto r = run(with_mounts({mnt("/data", "bind", "/etc", {"rbind", "nosuid"})}), sys);
  EXPECT_EQ(r.error, "mount /data: move_mount: no such file or directory");
}

TEST(RootfsApply, FailingSetattrOfReadonlyBind) {
  Image sys;
  sys.fail("mount_setattr", 1, EPERM);
  auto r = run(with_mounts({mnt("/data", "bind", "/etc", {"rbind", "ro"})}), sys);
  EXPECT_EQ(r.error, "mount /data: mount_setattr: operation not permitted");
}

TEST(RootfsApply, ProcMustBeProcfsThere) {
  // A failed statfs after mounting proc is an error, not a pass.
  Image sys2;
  sys2.fail("fstatfs", 1, EIO);
  auto r = run(with_mounts({mnt("/proc", "proc", "proc", {})}), sys2);
  EXPECT_EQ(r.error, "mount /proc: fstatfs: input/output error");
}

TEST(RootfsApply, ProcOnASymlinkIsRefused) {
  Image sys;
  sys.add_symlink(std::string(kRootfs) + "/proc", "/tmp");
  auto r = run(with_mounts({mnt("/proc", "proc", "proc", {})}), sys);
  EXPECT_EQ(r.error, "mount /proc: filesystem \"proc\" must be mounted on ordinary directory: too many levels of symbolic links");
}

TEST(RootfsApply, MknodRefusedFallsBackToHostBind) {
  Image sys;
  sys.fail("mknodat", 1, EPERM);
  auto r = run(minimal_spec(), sys);
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(has_line(r.log, "mknodat(5, \"null\", chr 0666 1:3) = -EPERM")) << r.log;
  EXPECT_TRUE(has_line(r.log, "mknodat(5, \"null\", reg 0644)")) << r.log;
  EXPECT_TRUE(has_line(r.log, "open_tree(AT_FDCWD, \"/dev/null\", OPEN_TREE_CLONE) = 6")) << r.log;
  EXPECT_TRUE(has_line(r.log, "move_mount(6, \"\", 5, \"null\", F_EMPTY_PATH)")) << r.log;
  EXPECT_TRUE(has_line(r.log, "mknodat(5, \"random\", chr 0666 1:8)")) << "only the refused node is bound";
}

TEST(RootfsApply, ExistingMatchingDeviceIsKeptAndFixed) {
  Image sys;
  sys.add_node(std::string(kRootfs) + "/dev/null", 'c', 1, 3, 0600);
  auto r = run(minimal_spec(), sys);
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(has_line(r.log, "fstatat(5, \"null\", AT_SYMLINK_NOFOLLOW) = c 0600")) << r.log;
  EXPECT_TRUE(has_line(r.log, "fchmodat(5, \"null\", 0666)")) << r.log;
}

TEST(RootfsApply, ExistingDifferentFileAtDevicePathIsAnError) {
  Image sys;
  sys.add_file(std::string(kRootfs) + "/dev/null", "not a device");
  auto r = run(minimal_spec(), sys);
  EXPECT_EQ(r.error, "device /dev/null: a different file already exists at /dev/null");
}

// A device module's node while /dev is a bind mount (of the host's /dev, mostly): looked
// up, never made, chmod'ed or chowned in the bind's source.
std::string with_bound_dev(test::RecordingSys& sys, DeviceStep d) {
  sys.add_dir("/dev");
  auto plan = plan_rootfs(with_mounts({mnt("/dev", "bind", "/dev", {"rbind"})}), base_context());
  if (!plan) return "plan: " + plan.error().message();
  EXPECT_FALSE(plan->setup_dev);
  d.existing = true;
  plan->devices.push_back(d);
  return apply_all(sys, *plan);
}

TEST(RootfsApply, ExtensionNodesInABoundDevAreCheckedNotMade) {
  Image sys;
  sys.add_node(std::string(kRootfs) + "/dev/nvidia0", 'c', 195, 0, 0600);
  DeviceStep d{"/dev/nvidia0", 'c', 195, 0, 0666, 0, 0, false, "/dev/nvidia0"};
  std::string log = with_bound_dev(sys, d);
  EXPECT_FALSE(has(log, "error: ")) << log;
  EXPECT_TRUE(has(log, "\"dev/nvidia0\", O_PATH|O_NOFOLLOW, RESOLVE_IN_ROOT")) << log;
  for (const char* call : {"mknodat(", "fchmodat(", "fchownat(", "open_tree("}) EXPECT_FALSE(has(log, call)) << call << "\n" << log;
}

TEST(RootfsApply, ExtensionNodesMissingOrDifferentInABoundDevAreErrors) {
  Image other;
  other.add_node(std::string(kRootfs) + "/dev/nvidia0", 'c', 195, 7);
  std::string log = with_bound_dev(other, {"/dev/nvidia0", 'c', 195, 0, 0666, 0, 0, false, "/dev/nvidia0"});
  EXPECT_TRUE(has(log, "error: device /dev/nvidia0: /dev is a bind mount, where berth makes no device nodes, and its "
                       "/dev/nvidia0 is not c 195:0\n")) << log;
  Image missing;
  log = with_bound_dev(missing, {"/dev/nvidia-caps/nvidia-cap1", 'c', 235, 1, 0444, 0, 0, true, "/dev/nvidia-caps/nvidia-cap1"});
  EXPECT_TRUE(has(log, "error: device /dev/nvidia-caps/nvidia-cap1: /dev is a bind mount, where berth makes no device "
                       "nodes, and it has no /dev/nvidia-caps/nvidia-cap1\n")) << log;
  EXPECT_FALSE(has(log, "mkdirat(")) << "not even its directory\n" << log;
}

TEST(RootfsApply, UmaskRestoredAfterAFailedDevice) {
  Image sys;
  sys.fail("mknodat", 2, EIO);
  auto r = run(minimal_spec(), sys);
  EXPECT_EQ(r.error, "device /dev/random: mknodat: input/output error");
  EXPECT_TRUE(has_line(r.log, "umask(022) = 0")) << r.log;
}

TEST(RootfsApply, MaskUsesTheContainersVerifiedDevNull) {
  Image sys;
  sys.add_file(std::string(kRootfs) + "/etc/secret");
  spec::Spec s = minimal_spec();
  s.linux->masked_paths = {"/etc/secret"};
  auto r = run(s, sys);
  ASSERT_EQ(r.error, "");
  // After the pivot: the container's own /dev/null, reached without symlinks, checked on
  // the very fd that is cloned over the masked file, fd to fd.
  EXPECT_TRUE(has(r.log, "openat2(4, \"dev/null\", O_PATH, RESOLVE_IN_ROOT|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS) = 7\n"
                         "fstat(7) = c 0666 1:3\n"
                         "openat2(4, \"etc/secret\", O_PATH, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = 8\n"
                         "fstat(8) = f 0644\n"
                         "open_tree(7, \"\", OPEN_TREE_CLONE|AT_EMPTY_PATH) = 9\n"
                         "move_mount(9, \"\", 8, \"\", F_EMPTY_PATH|T_EMPTY_PATH)\n"))
      << r.log;
}

// A joined pid namespace's /proc, made from outside it: procfs for that namespace (the
// mount flags as attributes of the detached mount), and masked directories covered by a
// detached tmpfs, since no /proc/thread-self path exists for us there.
TEST(RootfsApply, ProcForAJoinedPidNamespaceIsMadeForThatNamespace) {
  Image sys;
  sys.add_dir(std::string(kRootfs) + "/etc/secrets");
  int pidns = sys.fake_fd("/proc/77/ns/pid");
  spec::Spec s = with_mounts({mnt("/proc", "proc", "proc", {"nosuid", "noexec", "nodev", "hidepid=2"})});
  s.linux->masked_paths = {"/etc/secrets"};
  auto plan = plan_rootfs(s, base_context());
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  std::string log = apply_all(sys, *plan, pidns);
  ASSERT_EQ(log.find("error: "), std::string::npos) << log;
  std::string n = std::to_string(pidns);
  EXPECT_TRUE(has(log, "fsopen(\"proc\", 0) = ")) << log;
  EXPECT_TRUE(has(log, ", FSCONFIG_SET_FD, \"pidns\", \"" + n + "\")\n")) << log;
  EXPECT_TRUE(has(log, ", FSCONFIG_SET_STRING, \"hidepid\", \"2\")\n")) << log;
  EXPECT_FALSE(has(log, "mount(\"proc\"")) << "no mount(2) of proc: " << log;
  EXPECT_TRUE(has(log, "fsopen(\"tmpfs\", 0) = ")) << log;
  EXPECT_FALSE(has(log, "mount(\"tmpfs\"")) << "the mask uses no /proc/thread-self path: " << log;
}

TEST(RootfsApply, ContainersDevNullThatIsNotNullIsRefused) {
  Image sys;
  spec::Spec s = minimal_spec();
  // linux.devices may put any node at /dev/null; masking must not bind that one over files.
  spec::Device zero;
  zero.path = "/dev/null";
  zero.type = "c";
  zero.major = 1;
  zero.minor = 5;
  s.linux->devices.push_back(zero);
  s.linux->masked_paths = {"/proc/kcore"};
  auto r = run(s, sys);
  EXPECT_EQ(r.error, "/dev/null in the container is not the null device (1:3)");
}

TEST(RootfsApply, ConsoleSymlinkIsRefused) {
  Image sys;
  sys.add_symlink(std::string(kRootfs) + "/dev/console", "/proc/sysrq-trigger");
  spec::Spec s = minimal_spec();
  PlanContext c = base_context();
  c.terminal = true;
  auto r = run(s, sys, c);
  EXPECT_EQ(r.error, "/dev/console in the rootfs is a symlink");
}

TEST(RootfsApply, DeferredReadOnlyFailureNamesIt) {
  Image sys;
  sys.fail("mount_setattr", 1, EBUSY);
  auto r = run(with_mounts({mnt("/scratch", "tmpfs", "tmpfs", {"ro"})}), sys);
  EXPECT_EQ(r.error, "make a mount read-only: mount_setattr: device or resource busy");
}

TEST(RootfsApply, IdmapUserNamespaceFailureNamesTheMount) {
  Image sys;
  sys.fail("make_userns", 1, EPERM);
  spec::Spec s = minimal_spec();
  spec::Mount m = mnt("/data", "bind", "/etc", {"rbind"});
  m.uid_mappings = {{0, 1000, 1}};
  m.gid_mappings = {{0, 1000, 1}};
  s.mounts = {m};
  auto r = run(s, sys);
  EXPECT_EQ(r.error, "idmapped mount /data: make_userns: operation not permitted");
}

TEST(RootfsApply, PivotFailureStopsBeforeAfterPivot) {
  Image sys;
  sys.fail("pivot_root", 1, EINVAL);
  spec::Spec s = minimal_spec();
  s.linux->readonly_paths = {"/proc/sys"};
  auto r = run(s, sys);
  EXPECT_EQ(r.error, "pivot_root: invalid argument");
  EXPECT_EQ(r.log.find("proc/sys"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace berth::linux::rootfs::testing

namespace berth::linux::rootfs::testing {
namespace {

TEST(RootfsApply, SymlinkedDestinationIsCreatedInsideTheRoot) {
  Image sys;
  sys.add_dir("/host");
  sys.add_dir(std::string(kRootfs) + "/host");
  sys.add_symlink(std::string(kRootfs) + "/escape", "/../../../../host");
  auto r = run(with_mounts({mnt("/escape/sub", "tmpfs", "tmpfs", {})}), sys);
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(sys.exists(std::string(kRootfs) + "/host/sub"));
  EXPECT_FALSE(sys.exists("/host/sub")) << "the image's link reached the host";
}

TEST(RecordingSys, FailsOnlyTheNthCallOfThatName) {
  test::RecordingSys sys;
  sys.fail("mkdirat", 2, ENOSPC);
  int root = sys.fake_fd("/");
  EXPECT_TRUE(sys.mkdirat(root, "a", 0755));
  EXPECT_TRUE(sys.symlinkat("a", root, "l"));
  auto second = sys.mkdirat(root, "b", 0700);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().err(), ENOSPC);
  EXPECT_TRUE(sys.mkdirat(root, "c", 0755));
  EXPECT_FALSE(sys.mkdirat(root, "a", 0755)) << "the model knows a exists";
  EXPECT_EQ(sys.log_text(),
            "mkdirat(3, \"a\", 0755)\n"
            "symlinkat(\"a\", 3, \"l\")\n"
            "mkdirat(3, \"b\", 0700) = -ENOSPC\n"
            "mkdirat(3, \"c\", 0755)\n"
            "mkdirat(3, \"a\", 0755) = -EEXIST\n");
}

}  // namespace
}  // namespace berth::linux::rootfs::testing
