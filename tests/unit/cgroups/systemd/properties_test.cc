// linux.resources → systemd properties: the values runc's systemd drivers send for the same
// spec (table-driven), and the refusals of hostile input.
#include "cgroups/systemd/properties.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::cgroups::systemd {
namespace {

std::vector<std::string> texts(const std::vector<Property>& props) {
  std::vector<std::string> out;
  for (const auto& p : props) out.push_back(p.text());
  return out;
}

std::vector<std::string> convert(const spec::Resources& r, PropertyOptions o = {}) {
  auto props = resource_properties(r, nullptr, o);
  EXPECT_TRUE(props) << props.error().message();
  return props ? texts(*props) : std::vector<std::string>{};
}

TEST(SystemdProperties, RangeToBitsAsRunc) {
  struct { const char* in; std::vector<uint8_t> out; } cases[] = {
      {"0", {0x01}},           {"1", {0x02}},           {"0-3", {0x0f}},
      {"0-3,8", {0x0f, 0x01}}, {" 1 , 3-5 ,", {0x3a}},  {"9-15", {0x00, 0xfe}},
      {"0,0,0", {0x01}},       {"63", {0, 0, 0, 0, 0, 0, 0, 0x80}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    auto bits = range_to_bits(c.in);
    ASSERT_TRUE(bits) << bits.error().message();
    EXPECT_EQ(*bits, c.out);
  }
  for (const char* bad : {"", ",", "a", "3-1", "-1", "1-", "0-4294967295", "65536", "1-2-3", "0x1"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(range_to_bits(bad));
  }
}

TEST(SystemdProperties, CpuQuotaRoundsUpToWholePercents) {
  struct { int64_t quota; uint64_t period; std::vector<std::string> want; } cases[] = {
      {50000, 100000, {"CPUQuotaPeriodUSec=t 100000", "CPUQuotaPerSecUSec=t 500000"}},
      {50000, 0, {"CPUQuotaPerSecUSec=t 500000"}},  // the kernel's default period assumed
      {1000, 3000, {"CPUQuotaPeriodUSec=t 3000", "CPUQuotaPerSecUSec=t 340000"}},  // 333333 → 340000
      {123, 100000, {"CPUQuotaPeriodUSec=t 100000", "CPUQuotaPerSecUSec=t 10000"}},
      {-1, 100000, {"CPUQuotaPeriodUSec=t 100000", "CPUQuotaPerSecUSec=t 18446744073709551615"}},
      {0, 0, {}},
      // No wrap-around: a huge quota stays huge.
      {INT64_MAX, 1, {"CPUQuotaPeriodUSec=t 1", "CPUQuotaPerSecUSec=t 18446744073709551614"}},
  };
  for (const auto& c : cases) {
    std::vector<Property> out;
    add_cpu_quota(out, c.quota, c.period, {});
    EXPECT_EQ(texts(out), c.want) << c.quota << "/" << c.period;
  }
  std::vector<Property> old;
  add_cpu_quota(old, 50000, 100000, {.v2 = true, .systemd_version = 241});
  EXPECT_EQ(texts(old), std::vector<std::string>{"CPUQuotaPerSecUSec=t 500000"});
}

TEST(SystemdProperties, V2ResourcesAsRunc) {
  spec::Resources r;
  r.memory = spec::Memory{};
  r.memory->limit = 1 << 20;
  r.memory->reservation = 1 << 19;
  r.memory->swap = 3 << 20;
  r.cpu = spec::Cpu{};
  r.cpu->shares = 1024;
  r.cpu->quota = 20000;
  r.cpu->period = 100000;
  r.cpu->cpus = "0-1";
  r.cpu->mems = "0";
  r.pids = spec::Pids{.limit = 100};
  r.block_io = spec::BlockIo{};
  r.block_io->weight = 500;
  EXPECT_EQ(convert(r), (std::vector<std::string>{
                            "MemoryMax=t 1048576",
                            "MemoryLow=t 524288",
                            "MemorySwapMax=t 2097152",
                            "CPUWeight=t 100",
                            "CPUQuotaPeriodUSec=t 100000",
                            "CPUQuotaPerSecUSec=t 200000",
                            "IOWeight=t 4950",
                            "TasksMax=t 100",
                            "AllowedCPUs=ay 0x03",
                            "AllowedMemoryNodes=ay 0x01",
                        }));
}

TEST(SystemdProperties, V2Unlimited) {
  spec::Resources r;
  r.memory = spec::Memory{};
  r.memory->limit = -1;  // swap unset: both unlimited, as on v1
  r.pids = spec::Pids{.limit = -1};
  EXPECT_EQ(convert(r), (std::vector<std::string>{"MemoryMax=t 18446744073709551615",
                                                  "MemorySwapMax=t 18446744073709551615",
                                                  "TasksMax=t 18446744073709551615"}));
  r.pids->limit = -5;  // neither a limit nor "max": left alone, as runc does
  r.memory.reset();
  EXPECT_TRUE(convert(r).empty());
}

TEST(SystemdProperties, V1ResourcesAsRuncLegacy) {
  spec::Resources r;
  r.memory = spec::Memory{};
  r.memory->limit = 1 << 20;
  r.memory->reservation = 1 << 19;  // no v1 property: the file only
  r.cpu = spec::Cpu{};
  r.cpu->shares = 512;
  r.block_io = spec::BlockIo{};
  r.block_io->weight = 300;
  r.unified["memory.high"] = "5";  // v1 has no unified map
  EXPECT_EQ(convert(r, {.v2 = false}), (std::vector<std::string>{"MemoryLimit=t 1048576", "CPUShares=t 512",
                                                                 "BlockIOWeight=t 300"}));
}

TEST(SystemdProperties, CpuIdleAsRunc) {
  spec::Resources r;
  r.cpu = spec::Cpu{};
  r.cpu->idle = 1;
  r.cpu->shares = 2048;
  EXPECT_EQ(convert(r), std::vector<std::string>{"CPUWeight=t 0"});
  EXPECT_EQ(convert(r, {.v2 = true, .systemd_version = 251}).size(), 1u);  // shares only
  EXPECT_NE(convert(r, {.v2 = true, .systemd_version = 251})[0], "CPUWeight=t 0");
}

TEST(SystemdProperties, UnifiedAsRunc) {
  spec::Resources r;
  r.unified = {{"cpu.max", "max 50000"},      {"cpu.weight", " 300 "},      {"cpuset.cpus", "2"},
               {"memory.high", "max"},        {"memory.min", "4096"},       {"pids.max", "42"},
               {"io.weight", "default 100"},  {"memory.oom.group", "1"}};
  EXPECT_EQ(convert(r), (std::vector<std::string>{
                            "CPUQuotaPeriodUSec=t 50000",
                            "CPUQuotaPerSecUSec=t 18446744073709551615",
                            "CPUWeight=t 300",
                            "AllowedCPUs=ay 0x04",
                            "MemoryHigh=t 18446744073709551615",
                            "MemoryMin=t 4096",
                            "TasksMax=t 42",
                        }));
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"../memory.max", "1"}, {"memorymax", "1"}, {".max", "1"}, {"cpu.max", "1 2 3"},
           {"cpu.max", "x"}, {"cpu.max", "1 0"}, {"memory.max", "-1"}, {"pids.max", "-1"},
           {"cpu.weight", "heavy"}, {"cpuset.mems", "3-1"}}) {
    SCOPED_TRACE(k + "=" + v);
    spec::Resources bad;
    bad.unified[k] = v;
    auto props = resource_properties(bad, nullptr, {});
    ASSERT_FALSE(props);
    EXPECT_EQ(props.error().kind(), ErrorKind::kInvalidSpec);
  }
}

TEST(SystemdProperties, CpusetNeedsSystemd244) {
  spec::Resources r;
  r.cpu = spec::Cpu{};
  r.cpu->cpus = "0";
  EXPECT_TRUE(convert(r, {.v2 = true, .systemd_version = 243}).empty());
  r.cpu->cpus = "0-99999";
  auto props = resource_properties(r, nullptr, {});
  ASSERT_FALSE(props);
  EXPECT_NE(props.error().message().find("linux.resources.cpu.cpus"), std::string::npos);
}

TEST(SystemdProperties, SwapWithoutLimitIsRefused) {
  spec::Resources r;
  r.memory = spec::Memory{};
  r.memory->swap = 100;
  EXPECT_FALSE(resource_properties(r, nullptr, {}));
}

TEST(SystemdProperties, DevicesAsRunc) {
  std::vector<DeviceRule> rules = {
      {'a', kWildcard, kWildcard, kAllAccess, false},
      {'c', 1, 3, kRead | kWrite | kMknod, true},
      {'c', 136, kWildcard, kRead | kWrite, true},
      {'b', kWildcard, kWildcard, kMknod, true},
      {'c', kWildcard, 5, kRead, true},  // "*:5": systemd has no form; the program keeps it
      {'b', 8, 0, kRead, true},
  };
  auto props = texts(device_properties(rules));
  EXPECT_EQ(props, (std::vector<std::string>{
                       "DevicePolicy=s 'strict'",
                       "DeviceAllow=a(ss) [('/dev/char/1:3', 'rwm'), ('char-136', 'rw'), ('block-*', 'm'), "
                       "('/dev/block/8:0', 'r')]",
                   }));
  EXPECT_EQ(texts(device_properties({{'a', kWildcard, kWildcard, kAllAccess, true}})),
            (std::vector<std::string>{"DevicePolicy=s 'auto'", "DeviceAllow=a(ss) []"}));
  // A deny-list: systemd cannot express it; deny-all, the cgroup's own rules decide.
  EXPECT_EQ(texts(device_properties({{'a', kWildcard, kWildcard, kAllAccess, true}, {'c', 1, 3, kAllAccess, false}})),
            (std::vector<std::string>{"DevicePolicy=s 'strict'", "DeviceAllow=a(ss) []"}));
  // Devices come first, only when asked for.
  spec::Resources none;
  auto with = resource_properties(none, &rules, {});
  ASSERT_TRUE(with);
  EXPECT_EQ(with->front().name, "DevicePolicy");
}

}  // namespace
}  // namespace berth::cgroups::systemd
