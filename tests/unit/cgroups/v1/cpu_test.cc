// v1 cpu, cpuacct and cpuset controllers on a fake tree: writes, update round trips with
// zero = unchanged, cpuset inheritance, statistics.
#include <gtest/gtest.h>

#include "unit/cgroups/fixture.h"

namespace berth::cgroups::testing {
namespace {

constexpr const char* kCpu = "cpu,cpuacct";

spec::Resources cpu(uint64_t shares, int64_t quota, uint64_t period) {
  spec::Resources r;
  r.cpu.emplace();
  r.cpu->shares = shares;
  r.cpu->quota = quota;
  r.cpu->period = period;
  return r;
}

TEST(CgroupsV1Cpu, WritesWhatIsSet) {
  CgroupFixture f(Layout::kV1);
  auto r = cpu(512, 50000, 200000);
  r.cpu->burst = 1000;
  r.cpu->realtime_period = 1000000;
  r.cpu->realtime_runtime = 5000;
  r.cpu->idle = 1;
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file(kCpu, "cpu.shares"), "512");
  EXPECT_EQ(f.file(kCpu, "cpu.cfs_quota_us"), "50000");
  EXPECT_EQ(f.file(kCpu, "cpu.cfs_period_us"), "200000");
  EXPECT_EQ(f.file(kCpu, "cpu.cfs_burst_us"), "1000");
  EXPECT_EQ(f.file(kCpu, "cpu.rt_period_us"), "1000000");
  EXPECT_EQ(f.file(kCpu, "cpu.rt_runtime_us"), "5000");
  EXPECT_EQ(f.file(kCpu, "cpu.idle"), "1");
}

TEST(CgroupsV1Cpu, UpdateZeroMeansUnchanged) {
  CgroupFixture f(Layout::kV1);
  auto m = f.create(cpu(512, 50000, 200000));
  ASSERT_TRUE(m) << failure(m);
  ASSERT_TRUE(m->update(cpu(0, 0, 0)));
  EXPECT_EQ(f.file(kCpu, "cpu.shares"), "512");
  EXPECT_EQ(f.file(kCpu, "cpu.cfs_quota_us"), "50000");
  EXPECT_EQ(f.file(kCpu, "cpu.cfs_period_us"), "200000");
  ASSERT_TRUE(m->update(cpu(2048, -1, 0)));
  EXPECT_EQ(f.file(kCpu, "cpu.shares"), "2048");
  EXPECT_EQ(f.file(kCpu, "cpu.cfs_quota_us"), "-1");
  EXPECT_EQ(f.file(kCpu, "cpu.cfs_period_us"), "200000");
  ASSERT_TRUE(m->update(spec::Resources{}));  // no cpu at all
  EXPECT_EQ(f.file(kCpu, "cpu.shares"), "2048");
}

TEST(CgroupsV1Cpu, MissingFileNamesTheField) {
  CgroupFixture f(Layout::kV1);
  f.tree.add_cgroup("/berth/c1");
  f.remove_file(kCpu, "cpu.cfs_burst_us");
  auto r = cpu(0, 0, 0);
  r.cpu->burst = 5;
  auto m = f.create(r);
  EXPECT_NE(failure(m).find("linux.resources.cpu.burst: not supported on this host"), std::string::npos)
      << failure(m);
  // Create failed: it removed the directories it made (only the pre-made tree is left).
}

TEST(CgroupsV1Cpuset, InheritsFromParentsThenWritesSpec) {
  CgroupFixture f(Layout::kV1);
  // The intermediate /berth level exists with empty values, as a fresh cgroup would.
  f.tree.write("sys/fs/cgroup/cpuset/berth/cpuset.cpus", "\n");
  f.tree.write("sys/fs/cgroup/cpuset/berth/cpuset.mems", "\n");
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.tree.read("sys/fs/cgroup/cpuset/berth/cpuset.cpus"), "0-3");
  EXPECT_EQ(f.file("cpuset", "cpuset.cpus"), "0-3");
  EXPECT_EQ(f.file("cpuset", "cpuset.mems"), "0");
  spec::Resources r;
  r.cpu.emplace();
  r.cpu->cpus = "1-2";
  ASSERT_TRUE(m->update(r));
  EXPECT_EQ(f.file("cpuset", "cpuset.cpus"), "1-2");
  EXPECT_EQ(f.file("cpuset", "cpuset.mems"), "0");  // empty mems: unchanged
}

TEST(CgroupsV1Cpu, Stats) {
  CgroupFixture f(Layout::kV1);
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  f.set_file("cpuset", "cpuset.cpus", "0-1\n");
  auto s = m->stats();
  ASSERT_TRUE(s) << failure(s);
  EXPECT_EQ(s->cpu.usage.total, 5000u);
  EXPECT_EQ(s->cpu.usage.percpu, (std::vector<uint64_t>{3000, 2000}));
  EXPECT_EQ(s->cpu.usage.percpu_user, (std::vector<uint64_t>{2000, 1500}));
  EXPECT_EQ(s->cpu.usage.percpu_kernel, (std::vector<uint64_t>{1000, 500}));
  EXPECT_GT(s->cpu.usage.user, s->cpu.usage.kernel);  // 3 ticks vs 1
  EXPECT_EQ(s->cpu.throttling.periods, 10u);
  EXPECT_EQ(s->cpu.throttling.throttled_periods, 2u);
  EXPECT_EQ(s->cpu.throttling.throttled_time, 3000u);
  EXPECT_EQ(s->cpuset.cpus, (std::vector<uint16_t>{0, 1}));
  EXPECT_EQ(s->cpuset.sched_load_balance, 1u);
  EXPECT_EQ(s->cpuset.sched_relax_domain_level, -1);
}

}  // namespace
}  // namespace berth::cgroups::testing
