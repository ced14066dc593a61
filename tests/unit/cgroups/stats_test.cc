// Stats → runc's `events --stats` data document, and the shared stats parsers.
#include "cgroups/stats.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace berth::cgroups
