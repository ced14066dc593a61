// Device selection: indexes in PCI order, UUIDs and unique prefixes, MIG UUIDs and i:j
// through a lazy NVML lookup called only for MIG names, bus ids, unknown names.
#include "devices/nvidia/select.h"

#include <gtest/gtest.h>

namespace berth::devices::nvidia {
namespace {

const std::vector<Gpu> kGpus = {
    {0, 1, "0000:06:00.0", "GPU-edfee158-11c1-52b8-0517-92f30e7fac88", "NVIDIA A100-SXM4-40GB"},
    {1, 0, "0000:07:00.0", "GPU-3b2a1c4d-11c1-52b8-0517-92f30e7fac89", "Tesla V100-SXM2-16GB"},
    {2, 2, "0000:47:00.0", "GPU-edfee159-11c1-52b8-0517-92f30e7fac8a", "NVIDIA H100 80GB HBM3"},
};

struct Nvml {
  int calls = 0;
  NvmlLookup fn() {
    return [this]() -> Result<std::vector<NvmlGpu>> {
      ++calls;
      return std::vector<NvmlGpu>{
          {"00000000:06:00.0", "nvidia", "8.0", true,
           {{0, "MIG-1f4c8d2e-aaaa", 1, 0}, {1, "MIG-1f4c8d2e-bbbb", 2, 0}, {3, "MIG-7c3e9a10-cccc", 2, 1}}},
          {"00000000:07:00.0", "tesla", "7.0", false, {}}};
    };
  }
};

std::vector<unsigned> indexes(const Selection& s) {
  std::vector<unsigned> out;
  for (const auto& g : s.gpus) out.push_back(g.gpu.index);
  return out;
}

TEST(NvidiaSelect, AllIndexesUuidsBusIds) {
  Nvml nvml;
  auto all = select_devices({"all"}, kGpus, nvml.fn());
  ASSERT_TRUE(all);
  EXPECT_EQ(indexes(*all), (std::vector<unsigned>{0, 1, 2}));
  auto some = select_devices({"2", "GPU-3b2a", "0000:06:00.0", "2"}, kGpus, nvml.fn());
  ASSERT_TRUE(some) << some.error().message();
  EXPECT_EQ(indexes(*some), (std::vector<unsigned>{0, 1, 2})) << "PCI order, no repeats";
  EXPECT_TRUE(some->gpus[0].whole);
  EXPECT_EQ(some->gpus[0].gpu.minor, 1u) << "index 0 is the GPU with minor 1";
  for (const char* bus : {"06:00.0", "00000000:07:00.0", "0000:47:00.0"}) {
    auto b = select_devices({bus}, kGpus, nvml.fn());
    ASSERT_TRUE(b) << bus << ": " << b.error().message();
    EXPECT_EQ(b->gpus.size(), 1u);
  }
  auto full = select_devices({"GPU-edfee159-11c1-52b8-0517-92f30e7fac8a"}, kGpus, nvml.fn());
  ASSERT_TRUE(full);
  EXPECT_EQ(indexes(*full), std::vector<unsigned>{2});
  EXPECT_EQ(nvml.calls, 0) << "NVML is never asked for non-MIG names";
}

TEST(NvidiaSelect, UnknownAndAmbiguousNamesListTheHostDevices) {
  Nvml nvml;
  for (const char* bad : {"3", "GPU-ffff", "0000:99:00.0", "gpu0", "-1"}) {
    auto r = select_devices({bad}, kGpus, nvml.fn());
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find(std::string("unknown device \"") + bad + "\""), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("0 GPU-edfee158-11c1-52b8-0517-92f30e7fac88 0000:06:00.0, 1 GPU-3b2a1c4d"),
              std::string::npos) << r.error().message();
  }
  auto amb = select_devices({"GPU-edfee15"}, kGpus, nvml.fn());
  ASSERT_FALSE(amb);
  EXPECT_NE(amb.error().message().find("ambiguous"), std::string::npos);
}

TEST(NvidiaSelect, MigNamesAskNvmlOnce) {
  Nvml nvml;
  auto r = select_devices({"MIG-1f4c8d2e-bbbb", "0:3", "MIG-1f4c8d2e-bbbb"}, kGpus, nvml.fn());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(nvml.calls, 1);
  ASSERT_EQ(r->gpus.size(), 1u);
  const SelectedGpu& g = r->gpus[0];
  EXPECT_FALSE(g.whole) << "a MIG device brings its parent's node, not the whole GPU";
  EXPECT_EQ(g.gpu.index, 0u);
  ASSERT_EQ(g.migs.size(), 2u);
  EXPECT_EQ(g.migs[0].gi, 2u);
  EXPECT_EQ(g.migs[1].ci, 1u);
  auto amb = select_devices({"MIG-1f4c"}, kGpus, nvml.fn());
  ASSERT_FALSE(amb);
  EXPECT_NE(amb.error().message().find("ambiguous"), std::string::npos);
  EXPECT_FALSE(select_devices({"0:2"}, kGpus, nvml.fn())) << "MIG index 2 is a gap";
  auto nomig = select_devices({"1:0"}, kGpus, nvml.fn());
  ASSERT_FALSE(nomig);
  EXPECT_NE(nomig.error().message().find("MIG is not enabled on GPU 1"), std::string::npos);
}

TEST(NvidiaSelect, MigWithoutNvmlFailsClearly) {
  NvmlLookup broken = [] { return Result<std::vector<NvmlGpu>>(Error::generic("dlopen: no libnvidia-ml")); };
  auto r = select_devices({"MIG-1f4c"}, kGpus, broken);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("MIG device \"MIG-1f4c\" needs NVML: dlopen: no libnvidia-ml"), std::string::npos)
      << r.error().message();
}

}  // namespace
}  // namespace berth::devices::nvidia
