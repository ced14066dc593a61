// v2 cpu, cpuset, memory and pids on a fake tree: runc's conversions, zero = unchanged,
// refusals of v1-only fields, statistics, the memory.events OOM watch.
#include <poll.h>

#include <gtest/gtest.h>

#include "unit/cgroups/fixture.h"

namespace berth::cgroups::testing {
namespace {

TEST(CgroupsV2Cpu, ConversionsAndUnchanged) {
  CgroupFixture f(Layout::kV2);
  spec::Resources r;
  r.cpu.emplace();
  r.cpu->shares = 1024;
  r.cpu->quota = 50000;
  r.cpu->period = 200000;
  r.cpu->burst = 1000;
  r.cpu->idle = 0;
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "cpu.weight"), "100");
  EXPECT_EQ(f.file("", "cpu.max"), "50000 200000");
  EXPECT_EQ(f.file("", "cpu.max.burst"), "1000");
  EXPECT_EQ(f.file("", "cpu.idle"), "0");
  // Only the period: the quota is kept.
  spec::Resources p;
  p.cpu.emplace();
  p.cpu->period = 100000;
  ASSERT_TRUE(m->update(p));
  EXPECT_EQ(f.file("", "cpu.max"), "50000 100000");
  // Zeros: nothing changes.
  p.cpu->period = 0;
  p.cpu->shares = 0;
  p.cpu->quota = 0;
  ASSERT_TRUE(m->update(p));
  EXPECT_EQ(f.file("", "cpu.max"), "50000 100000");
  EXPECT_EQ(f.file("", "cpu.weight"), "100");
  p.cpu->quota = -1;
  ASSERT_TRUE(m->update(p));
  EXPECT_EQ(f.file("", "cpu.max"), "max");
}

TEST(CgroupsV2Cpu, RealtimeIsRefused) {
  CgroupFixture f(Layout::kV2);
  spec::Resources r;
  r.cpu.emplace();
  r.cpu->realtime_runtime = 1000;
  EXPECT_EQ(failure(f.create(r)), "linux.resources.cpu.realtimeRuntime: not supported on cgroup v2");
}

TEST(CgroupsV2Cpuset, CpusMems) {
  CgroupFixture f(Layout::kV2);
  spec::Resources r;
  r.cpu.emplace();
  r.cpu->cpus = "0-1";
  r.cpu->mems = "0";
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "cpuset.cpus"), "0-1");
  EXPECT_EQ(f.file("", "cpuset.mems"), "0");
}

spec::Resources memory(int64_t limit, int64_t swap) {
  spec::Resources r;
  r.memory.emplace();
  r.memory->limit = limit;
  r.memory->swap = swap;
  return r;
}

TEST(CgroupsV2Memory, SwapIsSwapOnly) {
  CgroupFixture f(Layout::kV2);
  auto r = memory(100, 300);
  r.memory->reservation = 50;
  r.memory->kernel = 10;  // accepted with a warning
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "memory.max"), "100");
  EXPECT_EQ(f.file("", "memory.swap.max"), "200");
  EXPECT_EQ(f.file("", "memory.low"), "50");
  ASSERT_TRUE(m->update(memory(0, 0)));  // Docker's zeros
  EXPECT_EQ(f.file("", "memory.max"), "100");
  EXPECT_EQ(f.file("", "memory.swap.max"), "200");
  ASSERT_TRUE(m->update(memory(400, 400)));  // equal: no swap
  EXPECT_EQ(f.file("", "memory.max"), "400");
  EXPECT_EQ(f.file("", "memory.swap.max"), "0");
  ASSERT_TRUE(m->update(memory(-1, 0)));
  EXPECT_EQ(f.file("", "memory.max"), "max");
  EXPECT_EQ(f.file("", "memory.swap.max"), "max");
  auto bad = m->update(memory(0, 300));
  EXPECT_EQ(failure(bad), "update cgroups: linux.resources.memory.swap: unable to set swap limit without memory limit");
}

TEST(CgroupsV2Memory, V1OnlyFieldsAreRefused) {
  CgroupFixture f(Layout::kV2);
  auto r = memory(0, 0);
  r.memory->swappiness = 0;
  EXPECT_EQ(failure(f.create(r)), "linux.resources.memory.swappiness: not supported on cgroup v2");
  r = memory(0, 0);
  r.memory->disable_oom_killer = true;
  EXPECT_EQ(failure(f.create(r)), "linux.resources.memory.disableOOMKiller: not supported on cgroup v2");
  r = memory(0, 0);
  r.memory->use_hierarchy = false;
  EXPECT_NE(failure(f.create(r)).find("always hierarchical"), std::string::npos);
  r.memory->use_hierarchy = true;
  r.memory->disable_oom_killer = false;
  EXPECT_TRUE(f.create(r));
}

TEST(CgroupsV2Memory, CheckBeforeUpdate) {
  CgroupFixture f(Layout::kV2);
  auto m = f.create(memory(1 << 20, 0));
  ASSERT_TRUE(m) << failure(m);
  auto r = memory(2048, 0);  // usage is 4096 in the fake
  r.memory->check_before_update = true;
  EXPECT_NE(failure(m->update(r)).find("rejecting memory limit 2048 <= usage 4096"), std::string::npos);
  EXPECT_EQ(f.file("", "memory.max"), std::to_string(1 << 20));
}

TEST(CgroupsV2Memory, StatsAndOomWatch) {
  CgroupFixture f(Layout::kV2);
  auto m = f.create(memory(1 << 20, 0));
  ASSERT_TRUE(m) << failure(m);
  f.set_file("", "memory.max", "1048576\n");
  auto s = m->stats();
  ASSERT_TRUE(s) << failure(s);
  EXPECT_EQ(s->memory.cache, 1234u);
  EXPECT_EQ(s->memory.usage.usage, 4096u);
  EXPECT_EQ(s->memory.usage.limit, 1048576u);
  EXPECT_EQ(s->memory.usage.max, 8192u);
  EXPECT_EQ(s->memory.swap.usage, 4096u);  // memory + swap, as v1 reported it
  EXPECT_EQ(s->cpu.usage.total, 7000u);
  EXPECT_EQ(s->cpu.usage.user, 5000u);
  EXPECT_EQ(s->cpu.throttling.throttled_time, 9000u);
  ASSERT_TRUE(s->cpu.psi);
  EXPECT_DOUBLE_EQ(s->cpu.psi->some.avg10, 0.5);
  EXPECT_EQ(s->pids.current, 2u);
  EXPECT_EQ(s->cpuset.cpus, (std::vector<uint16_t>{0, 1}));
  EXPECT_EQ(m->oom_kill_count().value(), 1u);
  auto fd = m->oom_event_fd();
  ASSERT_TRUE(fd) << failure(fd);
  struct pollfd p = {fd->get(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0);
  f.set_file("", "memory.events", "oom 2\noom_kill 2\n");
  EXPECT_EQ(::poll(&p, 1, 1000), 1);
  EXPECT_EQ(m->oom_kill_count().value(), 2u);
}

TEST(CgroupsV2Pids, Limit) {
  CgroupFixture f(Layout::kV2);
  spec::Resources r;
  r.pids = spec::Pids{64};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "pids.max"), "64");
  r.pids->limit = 0;
  ASSERT_TRUE(m->update(r));
  EXPECT_EQ(f.file("", "pids.max"), "64");
  r.pids->limit = -1;
  ASSERT_TRUE(m->update(r));
  EXPECT_EQ(f.file("", "pids.max"), "max");
}

}  // namespace
}  // namespace berth::cgroups::testing
