// Host discovery: procfs parsers, the fixture host (PCI order vs minors, majors, MIG
// minors, IMEX), driver files (stale install rejected, links resolved inside the driver
// root, binaries, firmware, configs, IPC sockets), the CUDA version probe, the cache.
#include "devices/nvidia/discover.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <filesystem>
#include <fstream>

#include "devices/nvidia/cache.h"
#include "devices/nvidia/driver_files.h"
#include "devices/nvidia/ldcache.h"
#include "devices/nvidia/probe.h"
#include "devices/nvidia/request.h"
#include "unit/devices/gpu_fixture.h"
#include "util/file.h"

namespace berth::devices::nvidia {
namespace {

TEST(NvidiaDiscover, VersionFileForms) {
  EXPECT_EQ(parse_version_file("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Thu Feb 20 23:41:34 UTC 2026\n"),
            "550.54.15");
  EXPECT_EQ(parse_version_file("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  (dvs-builder@U16)\n"),
            "575.57.08");
  EXPECT_EQ(parse_version_file("NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19\n"), "535.104.05");
  EXPECT_FALSE(parse_version_file("garbage\n"));
}

TEST(NvidiaDiscover, ProcParsers) {
  auto g = parse_information("Model: \t\t Tesla V100\nGPU UUID: \t GPU-edfee158\nBus Location: \t 0000:06:00.0\nDevice Minor: \t 3\n", "0000:06:00.0");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->minor, 3u);
  EXPECT_EQ(g->uuid, "GPU-edfee158");
  EXPECT_EQ(g->model, "Tesla V100");
  EXPECT_FALSE(parse_information("Model: x\nGPU UUID: GPU-1\n", "b"));
  Majors m = parse_proc_devices("Character devices:\n195 nvidia\n 510 nvidia-uvm\n235 nvidia-caps\n\nBlock devices:\n 259 nvidia-uvm\n");
  EXPECT_EQ(m.nvidia, 195u);
  EXPECT_EQ(m.uvm, 510u) << "block devices are not read";
  EXPECT_FALSE(m.imex);
  EXPECT_EQ(parse_proc_devices("Character devices:\n195 nvidia-frontend\n").nvidia, 195u);
  MigMinors mm = parse_mig_minors("config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\n");
  EXPECT_EQ(mm.config, 1u);
  EXPECT_EQ(mm.by_path.at("gpu0/gi1/ci0/access"), 13u);
  DeviceParams p = parse_params("ModifyDeviceFiles: 1\nDeviceFileUID: 0\nDeviceFileGID: 44\nDeviceFileMode: 432\n");
  EXPECT_EQ(p.gid, 44u);
  EXPECT_EQ(p.mode, 0660u);
  EXPECT_EQ(mask_params("ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nDeviceFileMode: 438\n"),
            "ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 0\nDeviceFileMode: 438\n");
  EXPECT_EQ(parse_access_minor("DeviceFileMinor: 12\nDeviceFileMode: 292\n"), 12u);
  EXPECT_EQ(pci_key("0000:06:00.0"), pci_key("00000000:06:00.0"));
  EXPECT_EQ(pci_key("06:00.0"), pci_key("0000:06:00.0"));
  EXPECT_LT(*pci_key("0000:07:00.0"), *pci_key("0000:47:00.0"));
  EXPECT_LT(*pci_key("0000:ff:00.0"), *pci_key("0001:00:00.0"));
  EXPECT_FALSE(pci_key("0000:06:00"));
  EXPECT_FALSE(pci_key("GPU-1"));
}

TEST(NvidiaDiscover, FixtureHost) {
  const std::string& f = test::gpu_fixture("8gpu");
  ASSERT_FALSE(f.empty());
  HostView host = HostView::from(test::fixture_config(f));
  auto v = read_driver_version(host);
  ASSERT_TRUE(v && *v);
  EXPECT_EQ(**v, "550.54.15");
  auto d = discover_devices(host, **v);
  ASSERT_TRUE(d) << d.error().message();
  ASSERT_EQ(d->gpus.size(), 8u);
  std::vector<std::string> buses;
  std::vector<uint32_t> minors;
  for (const auto& g : d->gpus) buses.push_back(g.bus_id), minors.push_back(g.minor);
  EXPECT_EQ(buses, (std::vector<std::string>{"0000:06:00.0", "0000:07:00.0", "0000:47:00.0", "0000:4e:00.0",
                                             "0000:87:00.0", "0000:90:00.0", "0000:b7:00.0", "0000:bd:00.0"}));
  EXPECT_EQ(minors, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 0})) << "index follows PCI order, not minors";
  EXPECT_EQ(d->gpus[1].uuid, "GPU-3b2a1c4d-11c1-52b8-0517-92f30e7fac89");
  EXPECT_EQ(d->majors.nvidia, 195u);
  EXPECT_EQ(d->majors.uvm, 510u);
  EXPECT_EQ(d->majors.caps, 235u);
  EXPECT_EQ(d->majors.imex, 234u);
  EXPECT_TRUE(d->mig.by_path.empty() && !d->mig.config) << "the MIG minor table is read only for MIG requests";
  // The driver's table lists every possible GPU/GI/CI (thousands of lines); only the
  // asked GPUs' entries are kept.
  MigMinors none = read_mig_minors(host, {});
  EXPECT_EQ(none.config, 1u);
  EXPECT_EQ(none.monitor, 2u);
  EXPECT_TRUE(none.by_path.empty());
  MigMinors one = read_mig_minors(host, {1});
  EXPECT_EQ(one.by_path.size(), 12u) << "gpu1: 4 GIs with 2 CIs each";
  EXPECT_EQ(one.by_path.count("gpu1/gi0/access"), 1u);
  EXPECT_EQ(one.by_path.count("gpu11/gi0/access"), 0u) << "gpu11 is not gpu1";
  EXPECT_EQ(parse_mig_minors("config 1\ngpu31/gi14/ci7/access 4000\n").by_path.at("gpu31/gi14/ci7/access"), 4000u);
  EXPECT_EQ(d->imex_channels, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(d->params.mode, 0666u);
  auto dri = dri_nodes(host, "0000:07:00.0");
  ASSERT_EQ(dri.size(), 2u);
  EXPECT_EQ(dri[0].name, "card2");
  EXPECT_EQ(dri[1].minor, 130u);
}

TEST(NvidiaDiscover, NoDriverIsNotAnError) {
  std::string empty = test::temp_dir("berth-noproc");
  HostView host;
  host.proc_root = empty;
  auto v = read_driver_version(host);
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->has_value());
}

const DriverFile* find(const std::vector<DriverFile>& list, const std::string& path) {
  for (const auto& x : list)
    if (x.path == path) return &x;
  return nullptr;
}

TEST(NvidiaDiscover, DriverFiles) {
  const std::string& f = test::gpu_fixture();
  NvidiaConfig cfg = test::fixture_config(f);
  auto root = RootDir::open(cfg.driver_root);
  ASSERT_TRUE(root);
  auto files = discover_driver_files(*root, cfg, "550.54.15");
  ASSERT_TRUE(files) << files.error().message();
  const DriverFile* cuda = find(files->libs, "libcuda.so.1");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->source, "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15") << "the stale 535 install is rejected";
  for (const auto& l : files->libs) EXPECT_EQ(l.source.find("535"), std::string::npos) << l.source;
  const DriverFile* cfglib = find(files->libs, "libnvidia-cfg.so.1");
  ASSERT_NE(cfglib, nullptr) << "an absolute SONAME link resolves inside the driver root";
  EXPECT_EQ(cfglib->source, "/usr/lib/x86_64-linux-gnu/libnvidia-cfg.so.550.54.15");
  EXPECT_NE(find(files->libs, "libnvidia-glcore.so.550.54.15"), nullptr);
  EXPECT_EQ(find(files->libs, "libnvidia-glcore.so.550.54.15")->caps, kGraphics);
  ASSERT_NE(find(files->bins, "/usr/bin/nvidia-smi"), nullptr);
  EXPECT_EQ(find(files->bins, "/usr/bin/nvidia-cuda-mps-server")->caps, kCompute);
  EXPECT_EQ(files->firmware.size(), 2u);
  EXPECT_EQ(files->configs.size(), 3u);
  ASSERT_EQ(files->ipc.size(), 3u) << "two sockets and the MPS directory";
  EXPECT_EQ(files->ipc[0].path, "/var/run/nvidia-persistenced/socket");
  EXPECT_EQ(files->cuda_version, "12.4") << files->cuda_error;
  EXPECT_TRUE(files->libs32.empty());
}

TEST(NvidiaDiscover, ProbeFailuresAreErrors) {
  auto v = probe_cuda_version("/nonexistent/libcuda.so.1");
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message().find("dlopen"), std::string::npos) << v.error().message();
  auto hang = run_in_child([](int) { ::pause(); return 0; }, 200, "hang");
  ASSERT_FALSE(hang);
  EXPECT_NE(hang.error().message().find("timed out"), std::string::npos);
}

TEST(NvidiaDiscover, NvmlProbeOnTheFakeLibrary) {
  const std::string& f = test::gpu_fixture();
  auto gpus = probe_nvml(f + "/driver/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15", {"0000:06:00.0", "0000:07:00.0"});
  ASSERT_TRUE(gpus) << gpus.error().message();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].brand, "nvidia");
  EXPECT_EQ((*gpus)[0].arch, "8.0");
  EXPECT_TRUE((*gpus)[0].mig_enabled);
  ASSERT_EQ((*gpus)[0].migs.size(), 3u);
  EXPECT_EQ((*gpus)[0].migs[2].uuid, "MIG-7c3e9a10-cccc-5b6c-9d0e-000000000003");
  EXPECT_EQ((*gpus)[1].brand, "tesla");
  EXPECT_FALSE(parse_nvml_report("gpu x\n"));
}

TEST(NvidiaDiscover, CacheIsWrittenReusedAndInvalidated) {
  const std::string& f = test::gpu_fixture();
  NvidiaConfig cfg = test::fixture_config(f);
  auto root = RootDir::open(cfg.driver_root);
  ASSERT_TRUE(root);
  std::string state = test::temp_dir("berth-state");
  DriverCache cache(*root, cfg, "550.54.15", state);
  auto first = cache.files();
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->cuda_version, "") << "the files alone: libcuda is asked only when a decision needs it";
  cache.need_cuda_version(*first, ::time(nullptr));
  EXPECT_EQ(first->cuda_version, "12.4") << first->cuda_error;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(state)) names.push_back(e.path().filename());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0].rfind(".nvidia-550.54.15-", 0), 0u) << names[0];
  // Poison the cached CUDA version: a second call must return the cached value.
  std::string path = state + "/" + names[0];
  auto text = file::read(path);
  ASSERT_TRUE(text);
  std::string poisoned = *text;
  ASSERT_NE(poisoned.find("\"12.4\""), std::string::npos) << poisoned;
  poisoned.replace(poisoned.find("\"12.4\""), 6, "\"99.9\"");
  std::ofstream(path) << poisoned;
  auto second = cached_driver_files(*root, cfg, "550.54.15", state);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->cuda_version, "99.9") << "served from the cache";
  EXPECT_EQ(second->libs.size(), first->libs.size());
  DriverCache other_cache(*root, cfg, "550.54.16", state);
  auto other = other_cache.files();
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->libs.empty()) << "another driver version has its own entry; no file ends in 550.54.16";
  other_cache.need_cuda_version(*other, ::time(nullptr));
  EXPECT_NE(other->cuda_error, "");
  // A new ld.so.cache (a driver reinstall) invalidates the entry.
  ASSERT_EQ(::utimensat(AT_FDCWD, (f + "/driver/etc/ld.so.cache").c_str(), nullptr, 0), 0);
  DriverCache after(*root, cfg, "550.54.15", state);
  auto third = after.files();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->cuda_version, "") << "the poisoned answer went with the old entry";
  after.need_cuda_version(*third, ::time(nullptr));
  EXPECT_EQ(third->cuda_version, "12.4");
  EXPECT_FALSE(parse_driver_files(*text, "other-key", "stamp"));
}

// Issue 19 #1, issue 34 #1: an answer goes with the libcuda that gave it; a failure is
// remembered for that libcuda only until its retry time (gpu_cache_test.cc has the rest).
TEST(NvidiaDiscover, FailedCudaProbeIsRetriedAndAnswersFollowLibcuda) {
  const std::string& f = test::gpu_fixture();
  NvidiaConfig cfg = test::fixture_config(f);
  auto root = RootDir::open(cfg.driver_root);
  ASSERT_TRUE(root);
  std::string state = test::temp_dir("berth-state");
  DriverCache cache(*root, cfg, "550.54.15", state);
  int64_t now = ::time(nullptr);
  ::setenv("FIXTURE_CUDA_FAIL", "1", 1);  // the fake libcuda fails as a broken driver does
  auto failed = cache.files();
  ASSERT_TRUE(failed) << failed.error().message();
  cache.need_cuda_version(*failed, now);
  ::unsetenv("FIXTURE_CUDA_FAIL");
  EXPECT_EQ(failed->cuda_version, "");
  EXPECT_NE(failed->cuda_error.find("libcuda.so.550.54.15 failed (cuDriverGetVersion returned 3) at "), std::string::npos)
      << failed->cuda_error;
  auto again = cache.files();
  ASSERT_TRUE(again);
  cache.need_cuda_version(*again, now + kCudaRetryAfterFailureS);
  EXPECT_EQ(again->cuda_version, "12.4") << "asked again once the retry time has come: " << again->cuda_error;
  // The answer is now cached: poisoned, it is served while libcuda is the same file ...
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(state)) names.push_back(e.path().filename());
  ASSERT_EQ(names.size(), 1u);
  auto text = file::read(state + "/" + names[0]);
  ASSERT_TRUE(text);
  std::string poisoned = *text;
  ASSERT_NE(poisoned.find("\"12.4\""), std::string::npos) << poisoned;
  poisoned.replace(poisoned.find("\"12.4\""), 6, "\"99.9\"");
  std::ofstream(state + "/" + names[0]) << poisoned;
  auto cached = cached_driver_files(*root, cfg, "550.54.15", state);
  ASSERT_TRUE(cached);
  EXPECT_EQ(cached->cuda_version, "99.9");
  // ... and asked again once libcuda changes (a driver update in place: new mtime).
  std::string lib = f + "/driver/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15";
  ASSERT_EQ(::utimensat(AT_FDCWD, lib.c_str(), nullptr, 0), 0);
  auto reprobed = cache.files();
  ASSERT_TRUE(reprobed);
  EXPECT_EQ(reprobed->cuda_version, "") << "the answer of the old file is not served";
  cache.need_cuda_version(*reprobed, now);
  EXPECT_EQ(reprobed->cuda_version, "12.4") << "a new libcuda is asked again";
}

}  // namespace
}  // namespace berth::devices::nvidia

namespace berth::devices::nvidia {
namespace {

TEST(NvidiaDiscover, Compat32LibrariesFromASyntheticCache) {
  std::string root = test::temp_dir("berth-drv32");
  namespace fs = std::filesystem;
  fs::create_directories(root + "/etc");
  fs::create_directories(root + "/usr/lib/i386-linux-gnu");
  fs::create_directories(root + "/usr/lib64");
  std::ofstream(root + "/usr/lib/i386-linux-gnu/libcuda.so.550.54.15") << "x";
  std::ofstream(root + "/usr/lib64/libcuda.so.550.54.15") << "x";
  fs::create_symlink("libcuda.so.550.54.15", root + "/usr/lib/i386-linux-gnu/libcuda.so.1");
  // An x86-64 entry whose link escapes with ../..: resolved inside the root, it names a
  // file that is not there, so it is skipped rather than followed to the host.
  fs::create_symlink("../../../../../../../usr/lib64/libcuda.so.550.54.15", root + "/usr/lib64/libcuda.so.1");
  std::ofstream(root + "/etc/ld.so.cache")
      << build_ldcache({{0x0303, "libcuda.so.1", "/usr/lib64/libcuda.so.1", 0},
                        {0x0003, "libcuda.so.1", "/usr/lib/i386-linux-gnu/libcuda.so.1", 0}});
  NvidiaConfig cfg;
  cfg.driver_root = root;
  auto dir = RootDir::open(root);
  ASSERT_TRUE(dir);
  auto files = discover_driver_files(*dir, cfg, "550.54.15");
  ASSERT_TRUE(files) << files.error().message();
  ASSERT_EQ(files->libs32.size(), 1u);
  EXPECT_EQ(files->libs32[0].source, "/usr/lib/i386-linux-gnu/libcuda.so.550.54.15");
  ASSERT_EQ(files->libs.size(), 1u) << "../.. stops at the driver root";
  EXPECT_EQ(files->libs[0].source, "/usr/lib64/libcuda.so.550.54.15");
  EXPECT_NE(files->cuda_error, "") << "the placeholder is not a loadable libcuda";
}

}  // namespace
}  // namespace berth::devices::nvidia
