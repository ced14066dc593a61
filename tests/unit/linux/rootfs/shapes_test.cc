// Golden tests of the rootfs engine: for each spec shape, the plan (to_text) and the
// application of every phase against the recording fake, call by call, compared with
// tests/unit/linux/rootfs/golden/<shape>.txt. BERTH_UPDATE_GOLDEN=1 rewrites the files
// (review the diff before committing them).
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "unit/linux/rootfs/fixture.h"

namespace berth::linux::rootfs::testing {
namespace {

using Setup = std::function<void(spec::Spec&, PlanContext&, test::RecordingSys&)>;
using Extend = std::function<void(RootfsPlan&)>;

struct Shape {
  const char* name;
  Setup setup;
  Extend extend = nullptr;
};

void add_mount(spec::Spec& s, spec::Mount m) { s.mounts.push_back(std::move(m)); }

void user_ns(spec::Spec& s, PlanContext& c) {
  s.linux->namespaces.push_back({"user", ""});
  s.linux->uid_mappings = {{0, 100000, 65536}};
  s.linux->gid_mappings = {{0, 100000, 65536}};
  c.new_user_ns = true;
}

std::vector<CgroupDir> hybrid_dirs() {
  return {{"cpu,cpuacct", "/sys/fs/cgroup/cpu,cpuacct/berth/c1", "cgroup", "cpu,cpuacct"},
          {"memory", "/sys/fs/cgroup/memory/berth/c1", "cgroup", "memory"},
          {"systemd", "/sys/fs/cgroup/systemd/berth/c1", "cgroup", "name=systemd"},
          {"unified", "/sys/fs/cgroup/unified/berth/c1", "cgroup2", ""}};
}

const spec::Mount kCgroupMount = mnt("/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro"});

// procfs at /proc whose kernel shows `dir` (a directory of the model below the mount).
Setup proc_with(const std::string& dir) {
  return [dir](spec::Spec& s, PlanContext&, test::RecordingSys& sys) {
    add_mount(s, mnt("/proc", "proc", "proc", {}));
    sys.add_dir(std::string(kRootfs) + dir);
    sys.add_dir("/hostproc/gpus/0000:06:00.0");
  };
}

void nvidia_overlay(RootfsPlan& p) {
  p.overlays.push_back({"/proc/driver/nvidia", {{"params", "ModifyDeviceFiles: 0\n", 0444}},
                        {{"/hostproc/gpus/0000:06:00.0", "gpus/0000:06:00.0"}}});
}

// Root, propagation and whole-spec shapes.
std::vector<Shape> root_shapes() {
  return {
      {"minimal", [](auto&, auto&, auto&) {}},
      {"default_spec", [](spec::Spec& s, PlanContext& c, auto&) {
         s = spec::default_spec(false);
         c.new_net_ns = c.new_ipc_ns = true;
         c.cgroups = hybrid_dirs();
         c.cgroup_links = {{"cpu,cpuacct", "/cpu"}, {"cpu,cpuacct", "/cpuacct"}};
       }},
      {"rootless_spec", [](spec::Spec& s, PlanContext& c, auto&) {
         s = spec::default_spec(true);
         s.linux->uid_mappings = {{0, 1000, 1}};
         s.linux->gid_mappings = {{0, 1000, 1}};
         c.new_user_ns = true;  // no network/ipc namespace: sysfs and mqueue become binds
         c.cgroups = hybrid_dirs();
       }},
      {"root_readonly", [](spec::Spec& s, auto&, auto&) { s.root->readonly = true; }},
      {"propagation_shared", [](spec::Spec& s, auto&, auto&) { s.linux->rootfs_propagation = "shared"; }},
      {"propagation_rshared", [](spec::Spec& s, auto&, auto&) { s.linux->rootfs_propagation = "rshared"; }},
      {"propagation_private", [](spec::Spec& s, auto&, auto&) { s.linux->rootfs_propagation = "private"; }},
      {"propagation_runbindable", [](spec::Spec& s, auto&, auto&) { s.linux->rootfs_propagation = "runbindable"; }},
  };
}

// Binds and their options.
std::vector<Shape> bind_shapes() {
  return {
      {"bind_dir", [](spec::Spec& s, auto&, auto&) { add_mount(s, mnt("/data", "bind", "/etc", {"bind"})); }},
      {"rbind_ro", [](spec::Spec& s, auto&, auto&) { add_mount(s, mnt("/data", "none", "/etc", {"rbind", "ro"})); }},
      {"bind_file", [](spec::Spec& s, auto&, auto&) { add_mount(s, mnt("/etc/hostname", "bind", "/etc/passwd", {"bind", "ro"})); }},
      {"bind_propagation", [](spec::Spec& s, auto&, auto&) {
         add_mount(s, mnt("/a", "bind", "/etc", {"rbind", "rslave"}));
         add_mount(s, mnt("/b", "bind", "/etc", {"bind", "shared", "unbindable"}));
       }},
      {"bind_recursive_attrs", [](spec::Spec& s, auto&, auto&) {
         add_mount(s, mnt("/data", "bind", "/etc", {"rbind", "rro", "rnosuid", "rnodev", "rnoexec", "rnoatime", "rnosymfollow"}));
       }},
      {"bind_flags", [](spec::Spec& s, auto&, auto&) {
         add_mount(s, mnt("/a", "bind", "/etc", {"bind", "nosuid", "nodev", "noexec", "noatime", "nosymfollow", "nodiratime"}));
         add_mount(s, mnt("/b", "bind", "/etc", {"bind", "suid", "dev", "exec", "rw", "strictatime"}));
       }},
      {"bind_remount", [](spec::Spec& s, auto&, auto&) {
         add_mount(s, mnt("/data", "bind", "/etc", {"rbind"}));
         add_mount(s, mnt("/data", "bind", "/etc", {"bind", "remount", "ro"}));
       }},
  };
}

// tmpfs, proc, sysfs, cgroup and other filesystems; destinations through symlinks.
std::vector<Shape> filesystem_shapes() {
  return {
      {"tmpfs_options", [](spec::Spec& s, auto&, auto&) {
         add_mount(s, mnt("/scratch", "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=700", "size=1m", "uid=5", "gid=6"}));
       }},
      {"tmpfs_ro_deferred", [](spec::Spec& s, auto&, auto&) { add_mount(s, mnt("/scratch", "tmpfs", "tmpfs", {"ro", "size=1m"})); }},
      {"dev_ro_deferred", [](spec::Spec& s, PlanContext& c, auto&) {
         add_mount(s, mnt("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k", "ro"}));
         c.terminal = true;
       }},
      {"tmpcopyup", [](spec::Spec& s, auto&, auto&) { add_mount(s, mnt("/etc", "tmpfs", "tmpfs", {"tmpcopyup", "mode=700"})); }},
      {"tmpfs_keeps_dir_mode", [](spec::Spec& s, auto&, auto&) {
         add_mount(s, mnt("/run", "tmpfs", "tmpfs", {}));   // run is 0755, a tmpfs 1777: chmod
         add_mount(s, mnt("/tmp", "tmpfs", "tmpfs", {}));   // tmp is 1777 already: nothing to do
       }},
      {"proc_symlink_refused", [](spec::Spec& s, auto&, test::RecordingSys& sys) {
         sys.add_symlink(std::string(kRootfs) + "/proc2", "/etc");
         add_mount(s, mnt("/proc2", "proc", "proc", {}));
       }},
      {"proc_sysfs_devpts_mqueue", [](spec::Spec& s, auto&, auto&) {
         add_mount(s, mnt("/proc", "proc", "proc", {"nosuid", "noexec", "nodev"}));
         add_mount(s, mnt("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}));
         add_mount(s, mnt("/dev/pts", "devpts", "devpts", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}));
         add_mount(s, mnt("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}));
       }},
      {"userns_sysfs_mqueue_binds", [](spec::Spec& s, PlanContext& c, auto&) {
         user_ns(s, c);
         add_mount(s, mnt("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}));
         add_mount(s, mnt("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}));
       }},
      {"cgroup_hybrid", [](spec::Spec& s, PlanContext& c, auto&) {
         add_mount(s, kCgroupMount);
         c.cgroups = hybrid_dirs();
         c.cgroup_links = {{"cpu,cpuacct", "/cpu"}, {"cpu,cpuacct", "/cpuacct"}};
       }},
      {"cgroup_hybrid_cgroupns", [](spec::Spec& s, PlanContext& c, auto&) {
         add_mount(s, kCgroupMount);
         c.cgroups = hybrid_dirs();
         c.new_cgroup_ns = true;
       }},
      {"cgroup_v2", [](spec::Spec& s, PlanContext& c, auto&) {
         add_mount(s, kCgroupMount);
         c.cgroups = {{"", "/sys/fs/cgroup/berth/c1", "cgroup2", ""}};
       }},
      {"cgroup_v2_cgroupns", [](spec::Spec& s, PlanContext& c, auto&) {
         add_mount(s, mnt("/sys/fs/cgroup", "cgroup2", "cgroup", {"nosuid", "noexec", "nodev", "rslave"}));
         c.cgroups = {{"", "/sys/fs/cgroup/berth/c1", "cgroup2", ""}};
         c.new_cgroup_ns = true;
       }},
      // Rootless in a delegated v2 subtree: the kernel refuses a fresh cgroup2 mount from the
      // user namespace (EBUSY); the container's cgroup is bound instead, as runc does.
      {"cgroup_v2_cgroupns_userns_refused", [](spec::Spec& s, PlanContext& c, test::RecordingSys& sys) {
         user_ns(s, c);
         add_mount(s, mnt("/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro"}));
         c.cgroups = {{"", "/sys/fs/cgroup/user.slice/u/run-1.scope/c1", "cgroup2", ""}};
         c.new_cgroup_ns = true;
         sys.fail("mount", 3, EBUSY);
       }},
      {"overlay_and_other_types", [](spec::Spec& s, auto&, auto&) {
         add_mount(s, mnt("/merged", "overlay", "overlay", {"lowerdir=/l1:/l2", "upperdir=/u", "workdir=/w", "ro"}));
         add_mount(s, mnt("/hugepages", "hugetlbfs", "none", {"pagesize=2M"}));
       }},
      {"relative_destination", [](spec::Spec& s, auto&, auto&) { add_mount(s, mnt("data/../x//y", "tmpfs", "tmpfs", {})); }},
      {"destination_symlink_stays_inside", [](spec::Spec& s, auto&, test::RecordingSys& sys) {
         sys.add_dir("/host");  // a decoy outside: the link must not reach it
         sys.add_dir(std::string(kRootfs) + "/host");
         sys.add_symlink(std::string(kRootfs) + "/escape", "/../../../../host");
         add_mount(s, mnt("/escape/sub", "tmpfs", "tmpfs", {}));
       }},
      {"destination_symlink_into_proc", [](spec::Spec& s, auto&, test::RecordingSys& sys) {
         sys.add_dir(std::string(kRootfs) + "/proc/sys");  // what procfs will show there
         sys.add_symlink(std::string(kRootfs) + "/vol", "/proc/sys");
         add_mount(s, mnt("/proc", "proc", "proc", {}));
         add_mount(s, mnt("/vol", "tmpfs", "tmpfs", {}));
       }},
  };
}

// /dev, masks, the console, idmapped binds, --no-pivot, cwd, extension steps.
std::vector<Shape> device_and_late_shapes() {
  return {
      {"devices", [](spec::Spec& s, auto&, auto&) {
         add_mount(s, mnt("/dev", "tmpfs", "tmpfs", {"mode=755"}));
         spec::Device fuse{"/dev/fuse", "c", 10, 229, 0640u, 5u, 6u};
         spec::Device loop{"/dev/sub/loop7", "b", 7, 7, 0600u, std::nullopt, std::nullopt};
         spec::Device fifo{"/dev/fifo0", "p", 0, 0, std::nullopt, std::nullopt, std::nullopt};
         spec::Device null2{"/dev/null", "c", 1, 3, 0600u, std::nullopt, std::nullopt};
         s.linux->devices = {fuse, loop, fifo, null2};
       }},
      {"devices_userns_bind", [](spec::Spec& s, PlanContext& c, auto&) {
         user_ns(s, c);
         add_mount(s, mnt("/dev", "tmpfs", "tmpfs", {"mode=755"}));
         s.linux->devices = {spec::Device{"/dev/fuse", "c", 10, 229, 0666u, std::nullopt, std::nullopt}};
       }},
      // rootless podman --privileged: the runtime runs in podman's user namespace, the config
      // has none and binds host nodes itself; the defaults are bound over them, never chmod'ed.
      {"devices_runtime_in_userns", [](spec::Spec& s, PlanContext& c, auto&) {
         c.runtime_in_user_ns = true;
         add_mount(s, mnt("/dev", "tmpfs", "tmpfs", {"mode=755"}));
         add_mount(s, mnt("/dev/null", "bind", "/dev/null", {"rbind"}));
         s.linux->devices = {spec::Device{"/dev/fuse", "c", 10, 229, 0666u, std::nullopt, std::nullopt}};
       }},
      {"dev_bind_from_host", [](spec::Spec& s, auto&, auto&) { add_mount(s, mnt("/dev", "bind", "/dev", {"rbind"})); }},
      {"masks_and_readonly", [](spec::Spec& s, auto&, test::RecordingSys& sys) {
         add_mount(s, mnt("/proc", "proc", "proc", {}));
         std::string r = kRootfs;
         sys.add_dir(r + "/proc/sys");
         sys.add_dir(r + "/proc/acpi");
         sys.add_file(r + "/proc/kcore");
         s.linux->readonly_paths = {"/proc/sys", "/proc/sysrq-trigger"};
         s.linux->masked_paths = {"/proc/acpi", "/proc/kcore", "/proc/nonexistent"};
       }},
      // linux.mountLabel on an SELinux host: the fscreate attribute first, context= on every
      // filesystem but proc and sysfs, on the cgroup tmpfs and the masking tmpfs; none on binds.
      {"mount_label", [](spec::Spec& s, PlanContext& c, test::RecordingSys& sys) {
         add_mount(s, mnt("/proc", "proc", "proc", {}));
         add_mount(s, mnt("/dev", "tmpfs", "tmpfs", {"nosuid", "mode=755", "size=65536k"}));
         add_mount(s, mnt("/dev/pts", "devpts", "devpts", {"nosuid", "noexec", "newinstance", "ptmxmode=0666"}));
         add_mount(s, mnt("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}));
         add_mount(s, mnt("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}));
         add_mount(s, kCgroupMount);
         add_mount(s, mnt("/data", "bind", "/etc", {"rbind"}));
         c.cgroups = hybrid_dirs();
         std::string r = kRootfs;
         sys.add_dir(r + "/proc/acpi");
         s.linux->masked_paths = {"/proc/acpi"};
         for (const char* d : {"/proc", "/proc/thread-self", "/proc/thread-self/attr"}) sys.add_dir(d);
         sys.add_mount("/proc", "proc");
         sys.add_file("/proc/thread-self/attr/fscreate", "", 0666);
         c.mount_label = "system_u:object_r:container_file_t:s0:c1,c2";
       }},
      {"console", [](spec::Spec& s, PlanContext& c, auto&) {
         add_mount(s, mnt("/dev", "tmpfs", "tmpfs", {"mode=755"}));
         c.terminal = true;
       }},
      {"idmap_explicit", [](spec::Spec& s, auto&, auto&) {
         spec::Mount m = mnt("/data", "bind", "/etc", {"rbind"});
         m.uid_mappings = {{0, 1000, 1}};
         m.gid_mappings = {{0, 1000, 1}};
         add_mount(s, m);
         add_mount(s, m);  // the same maps: one user namespace for both
       }},
      {"ridmap_container_maps", [](spec::Spec& s, PlanContext& c, auto&) {
         user_ns(s, c);
         add_mount(s, mnt("/data", "bind", "/etc", {"rbind", "ridmap", "ro"}));
       }},
      {"no_pivot", [](auto&, PlanContext& c, test::RecordingSys& sys) {
         c.no_pivot = true;
         sys.add_file("/proc/self/mountinfo",
                      "22 27 0:21 / /proc rw - proc proc rw\n23 27 0:22 / /sys rw - sysfs sysfs rw\n"
                      "24 27 0:23 /net /mnt/netproc rw - proc proc rw\n"
                      "25 27 0:24 / /bundle/rootfs/proc rw - proc proc rw\n27 1 254:0 / / rw - ext4 /dev/vda rw\n");
       }},
      {"cwd_created", [](spec::Spec& s, auto&, auto&) { s.process->cwd = "/home/user/work/../project"; }},
      {"extension_steps",
       [](auto&, auto&, test::RecordingSys& sys) {
         sys.add_file("/sbin/ldconfig");
         sys.add_dir("/hostproc/gpus/0000:06:00.0");
         sys.add_file("/hostproc/capabilities/gpu1/mig/gi2/access");
       },
       [](RootfsPlan& p) {
         p.files.push_back({"/etc/ld.so.conf.d/nvidia.conf", "/usr/lib/nvidia\n", 0644});
         // A directory and a file (MIG access) bound into the overlay: mount points of their kind.
         p.overlays.push_back({"/proc/driver/nvidia", {{"params", "ModifyDeviceFiles: 0\n", 0444}},
                               {{"/hostproc/gpus/0000:06:00.0", "gpus/0000:06:00.0"},
                                {"/hostproc/capabilities/gpu1/mig/gi2/access", "capabilities/gpu1/mig/gi2/access"}}});
         p.exec_after_pivot.push_back({"/sbin/ldconfig", {"-r", "/"}});
       }},
      // The /proc/driver/nvidia mask against the container's procfs (the model's directories
      // below the proc mount stand for what the kernel shows there). A kernel without the
      // driver: nothing to hide, nothing made or mounted inside procfs.
      {"overlay_procfs_lacks_the_dir", proc_with("/proc/driver"), nvidia_overlay},
      // A host with the driver loaded: the tmpfs goes straight onto the kernel's directory.
      {"overlay_procfs_has_the_dir", proc_with("/proc/driver/nvidia"), nvidia_overlay},
      // A tmpfs of the spec at /proc/driver (the GPU integration tests' stand-in) is no
      // procfs: the directory is made in it, as before.
      {"overlay_tmpfs_in_proc",
       [](spec::Spec& s, auto&, test::RecordingSys& sys) {
         add_mount(s, mnt("/proc", "proc", "proc", {}));
         add_mount(s, mnt("/proc/driver", "tmpfs", "tmpfs", {"mode=755"}));
         sys.add_dir("/hostproc/gpus/0000:06:00.0");
       },
       nvidia_overlay},
  };
}

std::vector<Shape> shapes() {
  std::vector<Shape> all;
  for (auto part : {root_shapes(), bind_shapes(), filesystem_shapes(), device_and_late_shapes()})
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

std::string golden_path(const std::string& name) {
  return std::string(BERTH_SOURCE_DIR) + "/tests/unit/linux/rootfs/golden/" + name + ".txt";
}

std::string run_shape(const Shape& shape) {
  test::RecordingSys sys;
  add_image(sys);
  spec::Spec s = minimal_spec();
  PlanContext ctx = base_context();
  shape.setup(s, ctx, sys);
  auto plan = plan_rootfs(s, ctx);
  if (!plan) return "== plan\nerror: " + plan.error().message() + "\n";
  if (shape.extend) shape.extend(*plan);
  return "== plan\n" + to_text(*plan) + "== apply\n" + apply_all(sys, *plan);
}

class ShapeTest : public ::testing::TestWithParam<Shape> {};

TEST_P(ShapeTest, PlanAndApplyMatchGolden) {
  const Shape& shape = GetParam();
  std::string got = run_shape(shape);
  std::string path = golden_path(shape.name);
  if (std::getenv("BERTH_UPDATE_GOLDEN")) {
    std::ofstream(path) << got;
    GTEST_SKIP() << "golden file rewritten: " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path << " (run with BERTH_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str());
}

INSTANTIATE_TEST_SUITE_P(Rootfs, ShapeTest, ::testing::ValuesIn(shapes()),
                         [](const ::testing::TestParamInfo<Shape>& i) { return std::string(i.param.name); });

TEST(Shapes, ThereAreThirtyOrMore) { EXPECT_GE(shapes().size(), 30u); }

}  // namespace
}  // namespace berth::linux::rootfs::testing
