// The berth config file: defaults, every key, validation, BERTH_CONFIG.
#include "devices/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>

#include "unit/devices/gpu_fixture.h"

namespace berth::devices {
namespace {

TEST(DevicesConfig, DefaultsAndKeys) {
  auto c = parse_config("{}", "c.json");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->nvidia.enabled);
  EXPECT_EQ(c->nvidia.driver_root, "/");
  EXPECT_EQ(c->nvidia.env_request_without_driver, "warn");
  EXPECT_FALSE(c->nvidia.load_kernel_modules);
  EXPECT_EQ(c->cdi.spec_dirs, (std::vector<std::string>{"/etc/cdi", "/var/run/cdi"}));
  auto full = parse_config(R"({"nvidia":{"enabled":false,"driverRoot":"/run/nvidia/driver","procRoot":"/p","sysRoot":"/s",
    "devRoot":"/d","ldcache":"/etc/ld.so.cache","ldconfig":"/sbin/ldconfig.real","binDirs":["/usr/bin"],
    "defaultCapabilities":"utility","envRequestWithoutDriver":"error","acceptVolumeMounts":false,
    "loadKernelModules":true,"modprobe":"/usr/sbin/modprobe","discoveryCache":false,"mpsPipeDirectory":"/run/mps",
    "probeTimeoutMs":2500},
    "cdi":{"enabled":false,"specDirs":["/x"]},"rdma":{"sysRoot":"/fake/sys","devRoot":"/fake/dev"}})", "c.json");
  ASSERT_TRUE(full) << full.error().message();
  EXPECT_FALSE(full->nvidia.enabled);
  EXPECT_EQ(full->nvidia.driver_root, "/run/nvidia/driver");
  EXPECT_EQ(full->nvidia.bin_dirs, std::vector<std::string>{"/usr/bin"});
  EXPECT_TRUE(full->nvidia.load_kernel_modules);
  EXPECT_FALSE(full->nvidia.discovery_cache);
  EXPECT_EQ(full->nvidia.mps_pipe_dir, "/run/mps");
  EXPECT_EQ(full->nvidia.probe_timeout_ms, 2500u);
  EXPECT_EQ(c->nvidia.probe_timeout_ms, 10000u);
  EXPECT_FALSE(full->cdi.enabled);
  EXPECT_EQ(full->rdma.sys_root, "/fake/sys");
  EXPECT_EQ(full->rdma.dev_root, "/fake/dev");
  EXPECT_EQ(c->rdma.sys_root, "/sys");
  EXPECT_EQ(c->rdma.dev_root, "/dev");
}

TEST(DevicesConfig, Validation) {
  for (const char* bad : {R"({"nvidia":{"driverRoot":"relative"}})", R"({"nvidia":{"envRequestWithoutDriver":"maybe"}})",
                          R"({"cdi":{"specDirs":["cdi"]}})", R"({"nvidia":{"enabled":"yes"}})", "[1]",
                          R"({"rdma":{"sysRoot":"sys"}})", R"({"rdma":{"devRoot":""}})"}) {
    auto c = parse_config(bad, "c.json");
    EXPECT_FALSE(c) << bad;
  }
  auto zero = parse_config(R"({"nvidia":{"probeTimeoutMs":0}})", "c.json");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message(), "c.json: nvidia.probeTimeoutMs: must be 1 to 600000, got 0");
  auto rel = parse_config(R"({"rdma":{"sysRoot":"sys"}})", "c.json");
  ASSERT_FALSE(rel);
  EXPECT_EQ(rel.error().message(), "c.json: rdma.sysRoot: must be an absolute path, got \"sys\"");
}

TEST(DevicesConfig, BerthConfigEnvironment) {
  std::string dir = test::temp_dir("berth-config");
  std::ofstream(dir + "/c.json") << R"({"nvidia":{"driverRoot":"/drv"}})";
  ::setenv("BERTH_CONFIG", (dir + "/c.json").c_str(), 1);
  auto c = load_config();
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->nvidia.driver_root, "/drv");
  EXPECT_EQ(c->source, dir + "/c.json");
  ::setenv("BERTH_CONFIG", (dir + "/missing.json").c_str(), 1);
  EXPECT_FALSE(load_config()) << "a named config that does not exist is an error";
  ::unsetenv("BERTH_CONFIG");
}

}  // namespace
}  // namespace berth::devices

#include "devices/nvidia/modprobe.h"

namespace berth::devices {
namespace {

TEST(NvidiaModprobe, RunsByFdAndReportsFailures) {
  EXPECT_TRUE(nvidia::load_kernel_modules("/bin/true", {"nvidia", "nvidia-uvm"}));
  auto failed = nvidia::load_kernel_modules("/bin/false", {"nvidia"});
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message().find("/bin/false nvidia failed"), std::string::npos);
  EXPECT_FALSE(nvidia::load_kernel_modules("/nonexistent/modprobe", {"nvidia"}));
  std::string dir = test::temp_dir("berth-modprobe");
  std::string writable = dir + "/modprobe";
  std::ofstream(writable) << "#!/bin/sh\n";
  ::chmod(writable.c_str(), 0777);
  auto refused = nvidia::load_kernel_modules(writable, {"nvidia"});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("not writable by others"), std::string::npos);
}

}  // namespace
}  // namespace berth::devices
