// Stats → runc's `events --stats` data document, and the shared stats parsers.
#include "cgroups/stats.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cstring>
#include <random>

#include "util/json.h"

namespace berth::cgroups {
namespace {

TEST(CgroupsStats, EmptyMatchesRuncsZeroValue) {
  // What runc's json encoder prints for a zero types.Stats (omitempty numbers dropped,
  // structs kept, an empty hugetlb map, null interfaces).
  EXPECT_EQ(to_json(Stats{}),
            "{\"cpu\":{\"usage\":{\"kernel\":0,\"user\":0},\"throttling\":{}},"
            "\"cpuset\":{\"cpu_exclusive\":0,\"mem_hardwall\":0,\"mem_exclusive\":0,"
            "\"memory_migrate\":0,\"memory_spread_page\":0,\"memory_spread_slab\":0,"
            "\"memory_pressure\":0,\"sched_load_balance\":0,\"sched_relax_domain_level\":0},"
            "\"memory\":{\"usage\":{\"limit\":0,\"failcnt\":0},\"swap\":{\"limit\":0,\"failcnt\":0},"
            "\"kernel\":{\"limit\":0,\"failcnt\":0},\"kernelTCP\":{\"limit\":0,\"failcnt\":0}},"
            "\"pids\":{},\"blkio\":{},\"hugetlb\":{},\"intel_rdt\":{},\"network_interfaces\":null}");
}

TEST(CgroupsStats, FilledFieldsUseRuncNames) {
  Stats s;
  s.cpu.usage.total = 10;
  s.cpu.usage.percpu = {6, 4};
  s.cpu.usage.kernel = 3;
  s.cpu.throttling.throttled_periods = 2;
  s.cpu.psi = Psi{{0.5, 0, 0, 12}, {}};
  s.cpuset.cpus = {0, 1};
  s.memory.cache = 7;
  s.memory.usage = {100, 50, 60, 1};
  s.memory.raw = {{"rss", 5}, {"cache", 7}};
  s.pids = {3, 0};
  s.blkio.io_service_bytes_recursive = {{8, 0, "Read", 100}};
  s.hugetlb["2MB"] = {0, 0, 0};
  std::string j = to_json(s);
  EXPECT_NE(j.find("\"usage\":{\"total\":10,\"percpu\":[6,4],\"kernel\":3,\"user\":0}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"throttling\":{\"throttledPeriods\":2}"), std::string::npos);
  EXPECT_NE(j.find("\"psi\":{\"some\":{\"avg10\":0.5,\"avg60\":0,\"avg300\":0,\"total\":12}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"cpuset\":{\"cpus\":[0,1],\"cpu_exclusive\":0"), std::string::npos);
  EXPECT_NE(j.find("\"memory\":{\"cache\":7,\"usage\":{\"limit\":100,\"usage\":50,\"max\":60,\"failcnt\":1}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"raw\":{\"cache\":7,\"rss\":5}"), std::string::npos);
  EXPECT_NE(j.find("\"pids\":{\"current\":3}"), std::string::npos);
  EXPECT_NE(j.find("\"blkio\":{\"ioServiceBytesRecursive\":[{\"major\":8,\"op\":\"Read\",\"value\":100}]}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"hugetlb\":{\"2MB\":{\"failcnt\":0}}"), std::string::npos);
  EXPECT_TRUE(json::Document::parse(j, "stats")) << j;
}

TEST(CgroupsStats, Parsers) {
  EXPECT_EQ(parse_cpu_list("0-2,5\n"), (std::vector<uint16_t>{0, 1, 2, 5}));
  EXPECT_TRUE(parse_cpu_list("").empty());
  auto p = parse_psi("some avg10=1.25 avg60=0.00 avg300=0.10 total=42\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7\n");
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->some.avg10, 1.25);
  EXPECT_EQ(p->some.total, 42u);
  EXPECT_EQ(p->full.total, 7u);
  EXPECT_FALSE(parse_psi(""));
  auto b = parse_blkio("8:0 Read 10\n8:0 Write 20\n8:16 30\nTotal 30\n");
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0], (BlkioEntry{8, 0, "Read", 10}));
  EXPECT_EQ(b[2], (BlkioEntry{8, 16, "", 30}));
}


// go_float against std::to_chars' shortest fixed form (which it replaced to keep libm out
// of the binary): every PSI value the kernel prints (two decimals, 0.00 .. 2000.00), and
// 20,000 random doubles of every magnitude below 2^53.
TEST(CgroupsStats, GoFloatMatchesToCharsShortestFixed) {
  auto reference = [](double v) {
    char buf[512];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
    return std::string(buf, static_cast<size_t>(r.ptr - buf));
  };
  size_t mismatches = 0;
  auto check = [&](double v) {
    std::string want = reference(v), got = go_float(v);
    if (got != want && ++mismatches <= 10) ADD_FAILURE() << want << " printed as " << got;
  };
  for (int k = 0; k <= 200000; ++k) check(k / 100.0);
  std::mt19937_64 rng(22);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (v != v || v - v != 0 || v >= 9007199254740992.0 || v <= -9007199254740992.0) continue;  // NaN, inf, >= 2^53
    check(v);
  }
  for (double v : {0.0, -0.0, 1.0, 0.1, 0.07, 99.99, 1e-300, 5e-324, 4503599627370497.0}) check(v);
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace berth::cgroups
