// NVIDIA request parsing: every NVIDIA_VISIBLE_DEVICES form, capabilities, requirements,
// privileged-only MIG variables, IMEX channels, volume mounts and the berth annotations.
#include "devices/nvidia/request.h"

#include <gtest/gtest.h>

namespace berth::devices::nvidia {
namespace {

spec::Spec with_env(std::vector<std::string> env) {
  spec::Spec s;
  s.process.emplace();
  s.process->env = std::move(env);
  return s;
}

Request parse(const spec::Spec& s) {
  auto r = parse_request(s, {});
  EXPECT_TRUE(r) << r.error().message();
  return r ? *r : Request{};
}

TEST(NvidiaRequest, VisibleDevicesValueForms) {
  EXPECT_FALSE(parse(with_env({"PATH=/bin"})).wanted) << "unset";
  EXPECT_FALSE(parse(with_env({"NVIDIA_VISIBLE_DEVICES="})).wanted) << "empty";
  EXPECT_FALSE(parse(with_env({"NVIDIA_VISIBLE_DEVICES=void"})).wanted);
  EXPECT_FALSE(parse(with_env({"NVIDIA_VISIBLE_DEVICES= , "})).wanted);
  Request none = parse(with_env({"NVIDIA_VISIBLE_DEVICES=none"}));
  EXPECT_TRUE(none.wanted);
  EXPECT_TRUE(none.driver_only);
  EXPECT_TRUE(none.devices.empty());
  EXPECT_EQ(parse(with_env({"NVIDIA_VISIBLE_DEVICES=all"})).devices, std::vector<std::string>{"all"});
  EXPECT_EQ(parse(with_env({"NVIDIA_VISIBLE_DEVICES=0,all"})).devices, std::vector<std::string>{"all"});
  Request list = parse(with_env({"NVIDIA_VISIBLE_DEVICES= 0, GPU-edfee158 ,MIG-1f4c,0:1,0000:06:00.0,,"}));
  EXPECT_EQ(list.devices, (std::vector<std::string>{"0", "GPU-edfee158", "MIG-1f4c", "0:1", "0000:06:00.0"}));
  EXPECT_EQ(list.origin, Origin::kEnv);
  EXPECT_FALSE(list.explicit_request());
  EXPECT_EQ(parse(with_env({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_VISIBLE_DEVICES=1"})).devices,
            std::vector<std::string>{"1"}) << "the last occurrence wins";
}

TEST(NvidiaRequest, Capabilities) {
  EXPECT_EQ(parse(with_env({"NVIDIA_VISIBLE_DEVICES=all"})).caps, kUtility | kCompute) << "default";
  EXPECT_EQ(parse(with_env({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES="})).caps, kUtility | kCompute);
  EXPECT_EQ(parse(with_env({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=all"})).caps, kAllCapabilities);
  EXPECT_EQ(parse(with_env({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=video, graphics,display,ngx,compat32"})).caps,
            kVideo | kGraphics | kDisplay | kNgx | kCompat32);
  auto bad = parse_request(with_env({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=compute,opengl"}), {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("unknown driver capability \"opengl\""), std::string::npos) << bad.error().message();
  EXPECT_EQ(capabilities_text(kAllCapabilities), "utility,compute,video,graphics,display,ngx,compat32");
  RequestOptions o;
  o.default_capabilities = "utility";
  EXPECT_EQ(parse_request(with_env({"NVIDIA_VISIBLE_DEVICES=all"}), o)->caps, kUtility) << "config default";
}

TEST(NvidiaRequest, RequirementsAndImpliedCuda) {
  Request r = parse(with_env({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_REQUIRE_CUDA=cuda>=12.2 brand=tesla,driver>=535,driver<536",
                              "NVIDIA_REQUIRE_ARCH=arch>=7.0", "NVIDIA_REQUIRE_JETPACK=jetpack>=5", "CUDA_VERSION=12.4.1"}));
  EXPECT_EQ(r.requirements, (std::vector<std::string>{"arch>=7.0", "cuda>=12.2 brand=tesla,driver>=535,driver<536"}))
      << "sorted by variable, JETPACK ignored, CUDA_VERSION implies nothing when NVIDIA_REQUIRE_CUDA is set";
  Request implied = parse(with_env({"NVIDIA_VISIBLE_DEVICES=all", "CUDA_VERSION=12.4.1"}));
  EXPECT_EQ(implied.requirements, std::vector<std::string>{"cuda>=12.4"});
  EXPECT_FALSE(implied.disable_require);
  for (const char* v : {"true", "1", "TRUE", "t"})
    EXPECT_TRUE(parse(with_env({"NVIDIA_VISIBLE_DEVICES=all", std::string("NVIDIA_DISABLE_REQUIRE=") + v})).disable_require) << v;
  EXPECT_FALSE(parse(with_env({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DISABLE_REQUIRE=yes"})).disable_require);
}

TEST(NvidiaRequest, MigConfigAndMonitorArePrivilegedOnly) {
  spec::Spec s = with_env({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES=all", "NVIDIA_MIG_MONITOR_DEVICES=0"});
  auto r = parse_request(s, {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("NVIDIA_MIG_CONFIG_DEVICES: only privileged containers"), std::string::npos);
  s.process->capabilities.emplace();
  s.process->capabilities->bounding = {"CAP_CHOWN", "CAP_SYS_ADMIN"};
  EXPECT_TRUE(is_privileged(s));
  Request ok = parse(s);
  EXPECT_EQ(ok.mig_config, std::vector<std::string>{"all"});
  EXPECT_EQ(ok.mig_monitor, std::vector<std::string>{"0"});
}

TEST(NvidiaRequest, ImexChannels) {
  EXPECT_EQ(parse(with_env({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=0,1"})).imex_channels,
            (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(parse(with_env({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=all"})).imex_channels, std::vector<std::string>{"all"});
  EXPECT_TRUE(parse(with_env({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=none"})).imex_channels.empty());
  EXPECT_FALSE(parse_request(with_env({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=x"}), {}));
}

TEST(NvidiaRequest, VolumeMountsWinOverEnvAndAreExplicit) {
  spec::Spec s = with_env({"NVIDIA_VISIBLE_DEVICES=all"});
  s.mounts.push_back({"/var/run/nvidia-container-devices/GPU-edfee158", "bind", "/dev/null", {"bind"}, {}, {}});
  s.mounts.push_back({"/run/nvidia-container-devices/1", "bind", "/dev/null", {"bind"}, {}, {}});
  Request r = parse(s);
  EXPECT_EQ(r.devices, (std::vector<std::string>{"GPU-edfee158", "1"}));
  EXPECT_EQ(r.origin, Origin::kVolumeMounts);
  EXPECT_TRUE(r.explicit_request());
  RequestOptions no_mounts;
  no_mounts.accept_volume_mounts = false;
  EXPECT_EQ(parse_request(s, no_mounts)->devices, std::vector<std::string>{"all"});
}

TEST(NvidiaRequest, AnnotationsWinAndAreExplicit) {
  spec::Spec s = with_env({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=utility"});
  s.annotations[kGpusAnnotation] = "1";
  s.annotations[kCapabilitiesAnnotation] = "compute,video";
  Request r = parse(s);
  EXPECT_EQ(r.devices, std::vector<std::string>{"1"});
  EXPECT_EQ(r.caps, kCompute | kVideo);
  EXPECT_EQ(r.origin, Origin::kAnnotation);
  EXPECT_EQ(r.source, "org.berth.gpus=1");
  s.annotations[kGpusAnnotation] = "void";
  EXPECT_FALSE(parse(s).wanted) << "the annotation decides even against the env";
}

}  // namespace
}  // namespace berth::devices::nvidia
