// CDI in real busybox containers: a vendor device from a JSON spec (node filled from the
// host node, mount, env, additional GID, cgroup rule), an nvidia-ctk style YAML spec whose
// nvidia-cdi-hook hooks berth does natively, nvidia.com/gpu names served natively when no
// spec exists, unknown names.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>

#include "devices/nvidia/ldcache.h"
#include "fixtures/gpu/integration_fixture.h"

namespace berth::test::gpu {
namespace {

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// A spec file in the fixture's /var/run/cdi, removed afterwards.
class SpecFile {
 public:
  SpecFile(const std::string& name, const std::string& text) : path_(fixture() + "/cdi/run/" + name) { std::ofstream(path_) << text; }
  ~SpecFile() { std::remove(path_.c_str()); }

 private:
  std::string path_;
};

TEST(GpuCdi, VendorDeviceFromJson) {
  ASSERT_FALSE(fixture().empty());
  TempDir host("berth-cdi-host");
  ASSERT_EQ(::mknod((host.path() + "/fpga0").c_str(), S_IFCHR | 0660, makedev(240, 7)), 0);
  ASSERT_EQ(::chmod((host.path() + "/fpga0").c_str(), 0660), 0);
  std::ofstream(host.path() + "/data") << "vendor data\n";
  SpecFile spec("vendor.json", R"({"cdiVersion":"0.7.0","kind":"vendor.com/fpga","devices":[{"name":"f0",
    "containerEdits":{"deviceNodes":[{"path":"/dev/fpga0","hostPath":")" + host.path() + R"(/fpga0"}],
      "mounts":[{"hostPath":")" + host.path() + R"(/data","containerPath":"/opt/vendor/data","options":["ro","nosuid","nodev","bind"]}],
      "env":["FPGA_VISIBLE=f0"],"additionalGids":[44]}}]})");
  Runtime rt;
  Bundle b;
  b.spec().annotations["cdi.k8s.io/fpga"] = "vendor.com/fpga=f0";
  b.script("exec >/out 2>&1; stat -c '%F %t:%T %a' /dev/fpga0; cat /opt/vendor/data; echo \"env $FPGA_VISIBLE\"; "
           "id -G; echo x > /opt/vendor/data || echo read-only");
  std::string cg = cgroup_for(b, "cdi-vendor");
  GpuRun r = create_start_wait(rt, b, "cdi-vendor", cg);
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  ASSERT_TRUE(r.stopped) << "the container did not finish";
  std::string out = read_file(b.rootfs() + "/out");
  EXPECT_TRUE(contains(out, "character special file f0:7 660\n")) << "type, numbers and mode from the host node\n" << out;
  EXPECT_TRUE(contains(out, "vendor data\n")) << out;
  EXPECT_TRUE(contains(out, "env f0\n")) << out;
  EXPECT_TRUE(contains(out, " 44")) << out;
  EXPECT_TRUE(contains(out, "read-only")) << out;
  EXPECT_TRUE(contains(r.devices, "c 240:7 rwm")) << r.devices;
}

TEST(GpuCdi, NvidiaCtkStyleYamlWithNativeHooks) {
  ASSERT_FALSE(fixture().empty());
  const std::string& f = fixture();
  std::string lib = f + "/driver/usr/lib/x86_64-linux-gnu";
  SpecFile spec("nvidia.yaml", "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\n"
                               "devices:\n- name: \"0\"\n  containerEdits:\n    deviceNodes:\n"
                               "    - path: /dev/nvidia1\n      hostPath: " + f + "/dev/nvidia1\n"
                               "containerEdits:\n  env:\n  - NVIDIA_VISIBLE_DEVICES=void\n  deviceNodes:\n"
                               "  - path: /dev/nvidiactl\n    hostPath: " + f + "/dev/nvidiactl\n"
                               "  mounts:\n  - hostPath: " + lib + "/libcuda.so.550.54.15\n"
                               "    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n"
                               "    options: [ro, nosuid, nodev, bind]\n"
                               "  hooks:\n"
                               "  - hookName: createContainer\n    path: /usr/bin/nvidia-cdi-hook\n"
                               "    args: [nvidia-cdi-hook, create-symlinks, --link, libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so]\n"
                               "  - hookName: createContainer\n    path: /usr/bin/nvidia-cdi-hook\n"
                               "    args: [nvidia-cdi-hook, disable-device-node-modification]\n"
                               "  - hookName: createContainer\n    path: /usr/bin/nvidia-cdi-hook\n"
                               "    args: [nvidia-cdi-hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]\n");
  Runtime rt;
  Bundle b;
  add_glibc(b.rootfs());
  b.spec().annotations["cdi.k8s.io/gpu"] = "nvidia.com/gpu=0";
  b.spec().process->env.push_back("NVIDIA_VISIBLE_DEVICES=all");
  b.script("exec >/out 2>&1; ls /dev | grep nvidia; readlink /usr/lib/x86_64-linux-gnu/libcuda.so; "
           "grep Modify /proc/driver/nvidia/params; echo \"env $NVIDIA_VISIBLE_DEVICES\"; /cudaver");
  std::string cg = cgroup_for(b, "cdi-nvidia");
  GpuRun r = create_start_wait(rt, b, "cdi-nvidia", cg);
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  ASSERT_TRUE(r.stopped) << "the container did not finish";
  std::string out = read_file(b.rootfs() + "/out");
  EXPECT_TRUE(contains(out, "nvidia1\nnvidiactl\nlibcuda.so.1\nModifyDeviceFiles: 0\n")) << out;
  EXPECT_FALSE(contains(out, "nvidia0\n")) << "the image's NVIDIA_VISIBLE_DEVICES=all adds nothing beside CDI\n" << out;
  EXPECT_TRUE(contains(out, "libcuda /usr/lib/x86_64-linux-gnu/libcuda.so.1 cuda 12040\n"))
      << "update-ldcache done natively: the loader finds libcuda\n" << out;
  auto cache = devices::nvidia::parse_ldcache(read_file(b.rootfs() + "/etc/ld.so.cache"));
  ASSERT_TRUE(cache);
  EXPECT_TRUE(contains(r.devices, "c 195:1 rwm")) << r.devices;
}

TEST(GpuCdi, NvidiaNamesWithoutSpecsAreServedNatively) {
  ASSERT_FALSE(fixture().empty());
  Runtime rt;
  Bundle b;
  b.spec().annotations["cdi.k8s.io/gpu"] = "nvidia.com/gpu=GPU-edfee158";
  b.script("ls /dev | grep nvidia > /out");
  std::string cg = cgroup_for(b, "cdi-native");
  GpuRun r = create_start_wait(rt, b, "cdi-native", cg);
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  ASSERT_TRUE(r.stopped) << "the container did not finish";
  EXPECT_EQ(read_file(b.rootfs() + "/out"), "nvidia-uvm\nnvidia-uvm-tools\nnvidia1\nnvidiactl\n");
}

TEST(GpuCdi, UnknownDeviceFailsCreate) {
  ASSERT_FALSE(fixture().empty());
  SpecFile spec("vendor.json", R"({"cdiVersion":"0.6.0","kind":"vendor.com/fpga","devices":[{"name":"f0","containerEdits":{"env":["A=1"]}}]})");
  Runtime rt;
  Bundle b;
  b.spec().annotations["cdi.k8s.io/fpga"] = "vendor.com/fpga=f9";
  auto r = rt({"run", "--bundle", (b.write(), b.path()), "cdi-unknown"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "unknown CDI device vendor.com/fpga=f9 (vendor.com/fpga devices: f0)")) << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "");
}

}  // namespace
}  // namespace berth::test::gpu
