// CDI in real busybox containers: a vendor device from a JSON spec (node filled from the
// host node, mount, env, additional GID, cgroup rule), an nvidia-ctk style YAML spec whose
// nvidia-cdi-hook hooks berth does natively, hooks of other programs run at their OCI
// stage, netDevices moved into the container, intelRdt refused, nvidia.com/gpu names
// served natively when no spec exists, unknown names.
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

// A hook program on the host: appends its stage (argv[1]), the state on its stdin and its
// environment to <dir>/hooks.log.
std::string hook_script(const TempDir& dir) {
  std::string path = dir.path() + "/hook.sh";
  std::ofstream(path) << "#!/bin/sh\n{ echo \"stage $1\"; cat; echo; env | sort; } >> " + dir.path() + "/hooks.log\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

std::string hook_json(const std::string& stage, const std::string& script) {
  return R"({"hookName":")" + stage + R"(","path":")" + script + R"(","args":["hook.sh",")" + stage +
         R"("],"env":["HOOK_FROM=cdi"]})";
}

TEST(GpuCdi, HooksRunAtTheirStagesWithTheirOwnEnvironment) {
  ASSERT_FALSE(fixture().empty());
  TempDir dir("berth-cdi-hooks");
  std::string sh = hook_script(dir);
  SpecFile spec("hooks.json", R"({"cdiVersion":"1.1.0","kind":"vendor.com/hooked","devices":[{"name":"h0",
    "containerEdits":{"hooks":[)" + hook_json("createContainer", sh) + "," + hook_json("poststart", sh) + "]}}],"
    R"("containerEdits":{"hooks":[)" + hook_json("createRuntime", sh) + "," + hook_json("poststop", sh) + "]}}");
  Runtime rt;
  Bundle b;
  b.spec().annotations["cdi.k8s.io/h"] = "vendor.com/hooked=h0";
  b.spec().process->env.push_back("LD_PRELOAD=/evil.so");
  b.script("true");
  std::string cg = cgroup_for(b, "cdi-hooks");
  GpuRun r = create_start_wait(rt, b, "cdi-hooks", cg);
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  ASSERT_TRUE(r.stopped);
  std::string log = read_file(dir.path() + "/hooks.log");
  // poststart and poststop run in `start` and `delete`, from the config copy in the state
  // directory: the CDI hooks must be in it.
  size_t runtime = log.find("stage createRuntime\n"), container = log.find("stage createContainer\n"),
         poststart = log.find("stage poststart\n"), poststop = log.find("stage poststop\n");
  ASSERT_NE(runtime, std::string::npos) << log;
  ASSERT_NE(poststop, std::string::npos) << log;
  EXPECT_TRUE(runtime < container && container < poststart && poststart < poststop) << log;
  EXPECT_TRUE(contains(log, R"("id":"cdi-hooks",)")) << log;
  // The state on stdin: created for the create hooks (lifecycle steps 3-5), running and
  // stopped after.
  EXPECT_TRUE(contains(log.substr(runtime, poststart - runtime), R"("status":"created")")) << log;
  EXPECT_TRUE(contains(log.substr(poststart, poststop - poststart), R"("status":"running")")) << log;
  EXPECT_TRUE(contains(log.substr(poststop), R"("status":"stopped")")) << log;
  EXPECT_TRUE(contains(log, "\nHOOK_FROM=cdi\n")) << log;
  EXPECT_FALSE(contains(log, "LD_PRELOAD")) << "a hook never gets the image's environment\n" << log;
}

TEST(GpuCdi, IntelRdtIsRefusedByName) {
  ASSERT_FALSE(fixture().empty());
  SpecFile spec("rdt.json", R"({"cdiVersion":"1.0.0","kind":"vendor.com/rdt","devices":[{"name":"r0",
    "containerEdits":{"intelRdt":{"closID":"gpu","l3CacheSchema":"L3:0=ff"}}}]})");
  Runtime rt;
  Bundle b;
  b.spec().annotations["cdi.k8s.io/r"] = "vendor.com/rdt=r0";
  auto r = rt({"run", "--bundle", (b.write(), b.path()), "cdi-rdt"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "vendor.com/rdt=r0 (" + fixture() + "/cdi/run/rdt.json): intelRdt (closID ")) << r.err;
  EXPECT_TRUE(contains(r.err, "berth does not support Intel RDT")) << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "");
}

// A veth pair made for the test, both ends deleted afterwards wherever they went.
class Veth {
 public:
  Veth() : a_("bcdi" + std::to_string(::getpid() % 100000) + "a"), b_(a_.substr(0, a_.size() - 1) + "b") {
    ok_ = run_cmd({"ip", "link", "add", a_, "type", "veth", "peer", "name", b_}).code == 0;
  }
  ~Veth() {
    run_cmd({"ip", "link", "del", a_});
    run_cmd({"ip", "link", "del", b_});
  }
  bool ok() const { return ok_; }
  const std::string& a() const { return a_; }

 private:
  std::string a_, b_;
  bool ok_ = false;
};

std::string netdev_spec(const std::string& host, const std::string& name) {
  return R"({"cdiVersion":"1.1.0","kind":"vendor.com/nic","devices":[{"name":"n0",
    "containerEdits":{"netDevices":[{"hostInterfaceName":")" + host + R"(","name":")" + name + R"("}]}}]})";
}

TEST(GpuCdi, NetDevicesAreMovedIntoTheContainer) {
  ASSERT_FALSE(fixture().empty());
  Veth v;
  ASSERT_TRUE(v.ok());
  SpecFile spec("nic.json", netdev_spec(v.a(), "cdinet0"));
  Runtime rt;
  Bundle b;
  b.spec().annotations["cdi.k8s.io/nic"] = "vendor.com/nic=n0";
  b.script("ip link show dev cdinet0 > /out 2>&1");
  std::string cg = cgroup_for(b, "cdi-nic");
  GpuRun r = create_start_wait(rt, b, "cdi-nic", cg);
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  ASSERT_TRUE(r.stopped);
  EXPECT_TRUE(contains(read_file(b.rootfs() + "/out"), ": cdinet0@")) << read_file(b.rootfs() + "/out");
}

TEST(GpuCdi, NetDeviceConflictWithTheSpecFailsCreate) {
  ASSERT_FALSE(fixture().empty());
  Veth v;
  ASSERT_TRUE(v.ok());
  SpecFile spec("nic.json", netdev_spec(v.a(), "cdinet0"));
  Runtime rt;
  Bundle b;
  b.spec().annotations["cdi.k8s.io/nic"] = "vendor.com/nic=n0";
  b.spec().linux->net_devices[v.a()] = {"specnet0"};
  auto r = rt({"create", "--bundle", (b.write(), b.path()), "cdi-nic-conflict"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "CDI netDevices: " + v.a() + " is moved as specnet0 by linux.netDevices and as cdinet0 by a CDI device"))
      << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "");
  EXPECT_EQ(run_cmd({"ip", "link", "show", "dev", v.a()}).code, 0) << "still on the host";
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
