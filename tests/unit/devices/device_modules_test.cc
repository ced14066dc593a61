// collect_device_edits: what is requested decides which modules run (and whether the
// config file is read at all), CDI and NVIDIA requests side by side, refusals.
#include "container/device_modules.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "unit/devices/gpu_fixture.h"
#include "util/file.h"

namespace berth::container {
namespace {

struct Env {
  std::string fixture = devices::test::gpu_fixture();
  std::string config;
  spec::Spec spec;
  DeviceContext ctx;

  Env() {
    config = devices::test::temp_dir("berth-cfg") + "/config.json";
    auto text = file::read(fixture + "/config.json");
    write_config(text ? *text : "{}");
    spec.process.emplace();
    spec.mounts.push_back({"/proc", "proc", "proc", {}, {}, {}});
    ctx.rootfs = devices::test::make_rootfs(fixture, true, false);
    ctx.state_root = devices::test::temp_dir("berth-state");
  }
  ~Env() { ::unsetenv("BERTH_CONFIG"); }
  void write_config(const std::string& text) {
    std::ofstream(config) << text;
    ::setenv("BERTH_CONFIG", config.c_str(), 1);
  }
  void cdi_spec(const std::string& name, const std::string& text) { std::ofstream(fixture + "/cdi/run/" + name) << text; }
  Result<devices::Edits> run() { return collect_device_edits(spec, ctx); }
};

bool has_node(const devices::Edits& e, const std::string& path) {
  for (const auto& n : e.nodes)
    if (n.container_path == path) return true;
  return false;
}

TEST(DeviceModules, NothingRequestedReadsNothing) {
  Env env;
  ::setenv("BERTH_CONFIG", "/nonexistent/berth-config.json", 1);
  auto e = env.run();
  ASSERT_TRUE(e) << "the config file is not even read: " << e.error().message();
  EXPECT_TRUE(e->empty());
  env.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=all");
  EXPECT_FALSE(env.run()) << "now it is";
}

TEST(DeviceModules, EnvRequest) {
  Env env;
  env.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=GPU-3b2a");
  auto e = env.run();
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_TRUE(has_node(*e, "/dev/nvidia0")) << "GPU 1 has minor 0";
  EXPECT_FALSE(has_node(*e, "/dev/nvidia1"));
}

TEST(DeviceModules, CdiNvidiaNamesWithoutSpecsUseTheNativeModule) {
  Env env;
  env.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=all");
  env.spec.annotations["cdi.k8s.io/gpus"] = "nvidia.com/gpu=1";
  auto e = env.run();
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_TRUE(has_node(*e, "/dev/nvidia0"));
  EXPECT_FALSE(has_node(*e, "/dev/nvidia1")) << "NVIDIA_VISIBLE_DEVICES=all does not add the other GPU";
  env.spec.annotations["cdi.k8s.io/gpus"] = "nvidia.com/gpu=7";
  auto unknown = env.run();
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("unknown device \"7\""), std::string::npos) << unknown.error().message();
}

TEST(DeviceModules, CdiSpecsBesideAnEnvRequest) {
  Env env;
  env.cdi_spec("vendor.json", R"({"cdiVersion":"0.6.0","kind":"vendor.com/fpga","devices":[{"name":"f0",
    "containerEdits":{"deviceNodes":[{"path":"/dev/fpga0","hostPath":"/dev/null"}],"env":["FPGA=0"]}}]})");
  env.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=all");
  env.spec.annotations["cdi.k8s.io/fpga"] = "vendor.com/fpga=f0";
  auto e = env.run();
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_TRUE(has_node(*e, "/dev/fpga0"));
  EXPECT_TRUE(has_node(*e, "/dev/nvidiactl")) << "a CDI device of another kind takes no GPU away (issue 19 #2)";
  EXPECT_TRUE(has_node(*e, "/dev/nvidia0"));
  EXPECT_TRUE(has_node(*e, "/dev/nvidia1"));
  EXPECT_EQ(e->env, std::vector<std::string>{"FPGA=0"});
  std::remove((env.fixture + "/cdi/run/vendor.json").c_str());
}

const devices::DeviceNode* node(const devices::Edits& e, const std::string& path) {
  for (const auto& n : e.nodes)
    if (n.container_path == path) return &n;
  return nullptr;
}

// Issue 19 #2: GPUs from NVIDIA_VISIBLE_DEVICES beside an RDMA device from a CDI spec.
TEST(DeviceModules, EnvGpusBesideACdiRdmaDevice) {
  Env env;
  env.cdi_spec("rdma.json", R"({"cdiVersion":"0.6.0","kind":"nvidia.com/hca","devices":[{"name":"mlx5_0",
    "containerEdits":{"deviceNodes":[{"path":"/dev/infiniband/uverbs1","hostPath":"/dev/null"}]}}]})");
  env.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=0");
  env.spec.annotations["cdi.k8s.io/hca"] = "nvidia.com/hca=mlx5_0";
  auto e = env.run();
  std::remove((env.fixture + "/cdi/run/rdma.json").c_str());
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_TRUE(has_node(*e, "/dev/infiniband/uverbs1"));
  EXPECT_TRUE(has_node(*e, "/dev/nvidia1")) << "GPU 0 (minor 1) is kept beside the CDI device";
  EXPECT_FALSE(has_node(*e, "/dev/nvidia0"));
}

// GPUDirect RDMA: GPUs and an adapter in one container, both from the fixture host's trees
// (the GPU fixture's config has rdma.sysRoot/devRoot of the mlx5 fake host).
TEST(DeviceModules, GpuAndNativeRdmaInOneContainer) {
  Env env;
  env.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=all");
  env.spec.annotations["org.berth.rdma.devices"] = "mlx5_0,mlx5_1";
  auto e = env.run();
  ASSERT_TRUE(e) << e.error().message();
  for (const char* p : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia-uvm"})
    EXPECT_TRUE(has_node(*e, p)) << p;
  // mlx5_0 (RoCE): uverbs1, umad0, issm0; mlx5_1 (InfiniBand): uverbs0, umad1, issm1; rdma_cm once.
  struct Want { const char* path; uint32_t major, minor; };
  for (const Want& w : {Want{"/dev/infiniband/uverbs1", 231, 193}, Want{"/dev/infiniband/umad0", 231, 0},
                        Want{"/dev/infiniband/issm0", 231, 64}, Want{"/dev/infiniband/uverbs0", 231, 192},
                        Want{"/dev/infiniband/umad1", 231, 1}, Want{"/dev/infiniband/issm1", 231, 65},
                        Want{"/dev/infiniband/rdma_cm", 10, 58}}) {
    const devices::DeviceNode* n = node(*e, w.path);
    ASSERT_NE(n, nullptr) << w.path;
    EXPECT_EQ(n->major, w.major) << w.path;
    EXPECT_EQ(n->minor, w.minor) << w.path;
    EXPECT_EQ(n->host_path, env.fixture + "/dev/infiniband/" + std::string(w.path).substr(16)) << "from rdma.devRoot";
  }
  EXPECT_EQ(node(*e, "/dev/infiniband/uverbs2"), nullptr) << "mlx5_10 is not mlx5_1";
  size_t rdma = 0;
  for (const auto& n : e->nodes) rdma += n.container_path.rfind("/dev/infiniband/", 0) == 0;
  EXPECT_EQ(rdma, 7u);
  // In the runtime's network namespace (no "network" entry) the devices are already there.
  auto none = rdma_netns_moves(env.spec);
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_TRUE(none->empty());
  env.spec.linux.emplace().namespaces.push_back({"network", ""});
  auto moves = rdma_netns_moves(env.spec);
  ASSERT_TRUE(moves) << moves.error().message();
  ASSERT_EQ(moves->size(), 2u);
  EXPECT_EQ((*moves)[0].device, "mlx5_0");
  env.spec.annotations["org.berth.rdma.devices"] = "mlx5_7";
  auto missing = env.run();
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("rdma device mlx5_7 not found (this host has: mlx5_0, mlx5_1, mlx5_10, rxe0)"),
            std::string::npos) << missing.error().message();
}

// Issue 19 #2: two sources naming GPUs are one request when they agree, an error naming
// both when they do not.
TEST(DeviceModules, GpuRequestsFromSeveralSourcesMerge) {
  Env same;
  same.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=1");
  same.spec.annotations["cdi.k8s.io/gpus"] = "nvidia.com/gpu=GPU-3b2a";
  auto e = same.run();
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_TRUE(has_node(*e, "/dev/nvidia0"));
  EXPECT_FALSE(has_node(*e, "/dev/nvidia1"));
  Env other;
  other.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=0");
  other.spec.annotations["cdi.k8s.io/gpus"] = "nvidia.com/gpu=1";
  auto conflict = other.run();
  ASSERT_FALSE(conflict);
  EXPECT_NE(conflict.error().message().find("NVIDIA_VISIBLE_DEVICES=0 (GPUs 0) and CDI devices nvidia.com/gpu=1 (GPUs 1) "
                                            "request different GPUs"),
            std::string::npos) << conflict.error().message();
  Env annotated;
  annotated.spec.annotations["org.berth.gpus"] = "0,1";
  annotated.spec.annotations["cdi.k8s.io/gpus"] = "nvidia.com/gpu=1";
  auto a = annotated.run();
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message().find("org.berth.gpus=0,1 (GPUs 0,1)"), std::string::npos) << a.error().message();
  Env none;
  none.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=none");
  none.spec.annotations["cdi.k8s.io/gpus"] = "nvidia.com/gpu=1";
  auto n = none.run();
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_TRUE(has_node(*n, "/dev/nvidia0")) << "\"none\" adds the driver only, which CDI's GPU brings anyway";
}

// Issue 19 #7: in a user namespace nodes are bound from the host; berth never makes one
// there, and a missing or wrong host node is named before anything is set up.
TEST(DeviceModules, UserNamespaceNeedsTheHostNodes) {
  Env env;
  std::string empty_dev = devices::test::temp_dir("berth-dev");
  auto text = file::read(env.fixture + "/config.json");
  ASSERT_TRUE(text);
  std::string cfg = devices::test::redact(*text, "\"" + env.fixture + "/dev\"", "\"" + empty_dev + "\"");
  env.write_config(cfg);
  env.ctx.user_ns = true;
  env.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=0");
  auto missing = env.run();
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "device /dev/nvidiactl: host node " + empty_dev +
                                           "/nvidiactl (bound in a user namespace; berth creates no device nodes on the "
                                           "host): no such file or directory");
  EXPECT_TRUE(std::filesystem::is_empty(empty_dev)) << "nothing was made on the host";
  std::ofstream(empty_dev + "/nvidiactl") << "";  // a regular file where the node should be
  auto wrong = env.run();
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().message(), "device /dev/nvidiactl: host node " + empty_dev + "/nvidiactl is not the device c 195:255");
  env.ctx.user_ns = false;
  EXPECT_TRUE(env.run()) << "without a user namespace nodes are made in the container's /dev, not bound";
}

TEST(DeviceModules, CdiHooksOfOtherProgramsAreCarried) {
  Env env;
  env.cdi_spec("hooked.json", R"({"cdiVersion":"0.6.0","kind":"vendor.com/hooked","devices":[{"name":"h",
    "containerEdits":{"hooks":[{"hookName":"createRuntime","path":"/usr/bin/vendor-hook"}]}}]})");
  env.spec.annotations["cdi.k8s.io/x"] = "vendor.com/hooked=h";
  auto hooked = env.run();
  ASSERT_TRUE(hooked) << hooked.error().message();
  ASSERT_EQ(hooked->hooks.size(), 1u) << "a hook of another program is carried to the spec's hooks";
  EXPECT_EQ(hooked->hooks[0].stage, "createRuntime");
  EXPECT_EQ(hooked->hooks[0].hook.path, "/usr/bin/vendor-hook");
  std::remove((env.fixture + "/cdi/run/hooked.json").c_str());
}

TEST(DeviceModules, RefusalsAreNamed) {
  Env off;
  off.write_config(R"({"nvidia":{"enabled":false}})");
  off.spec.process->env.push_back("NVIDIA_VISIBLE_DEVICES=all");
  auto quiet = off.run();
  ASSERT_TRUE(quiet);
  EXPECT_TRUE(quiet->empty()) << "an env request on a host where the module is off: no GPU";
  off.spec.annotations["org.berth.gpus"] = "0";
  auto loud = off.run();
  ASSERT_FALSE(loud);
  EXPECT_NE(loud.error().message().find("the NVIDIA module is disabled"), std::string::npos);

  Env cdi_off;
  cdi_off.write_config(R"({"cdi":{"enabled":false}})");
  cdi_off.spec.annotations["cdi.k8s.io/x"] = "vendor.com/hooked=h";
  auto ignored = cdi_off.run();
  ASSERT_TRUE(ignored) << ignored.error().message();
  EXPECT_TRUE(ignored->empty()) << "CDI off: the engine applied the specs already";

  Env both;
  both.cdi_spec("nvidia.json", R"({"cdiVersion":"0.6.0","kind":"nvidia.com/gpu","devices":[{"name":"0",
    "containerEdits":{"deviceNodes":[{"path":"/dev/nvidia0","hostPath":"/dev/null"}]}}]})");
  both.spec.annotations["org.berth.gpus"] = "0";
  both.spec.annotations["cdi.k8s.io/gpu"] = "nvidia.com/gpu=0";
  auto twice = both.run();
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message().find("both request GPUs"), std::string::npos) << twice.error().message();
  std::remove((both.fixture + "/cdi/run/nvidia.json").c_str());
}

}  // namespace
}  // namespace berth::container
