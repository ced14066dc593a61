// collect_device_edits: what is requested decides which modules run (and whether the
// config file is read at all), CDI and NVIDIA requests side by side, refusals.
#include "container/device_modules.h"

#include <gtest/gtest.h>
#include <stdlib.h>

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
  EXPECT_FALSE(has_node(*e, "/dev/nvidiactl")) << "with CDI devices the image's env adds no GPU";
  EXPECT_EQ(e->env, std::vector<std::string>{"FPGA=0"});
  std::remove((env.fixture + "/cdi/run/vendor.json").c_str());
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
