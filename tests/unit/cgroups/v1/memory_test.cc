// v1 memory controller on a fake tree: every field, update round trips, refusals, stats,
// OOM notification registration.
#include <gtest/gtest.h>

#include "cgroups/v1/v1.h"
#include "unit/cgroups/fixture.h"

namespace berth::cgroups::testing {
namespace {

spec::Resources memory(int64_t limit, int64_t swap) {
  spec::Resources r;
  r.memory.emplace();
  r.memory->limit = limit;
  r.memory->swap = swap;
  return r;
}

TEST(CgroupsV1Memory, WritesEveryField) {
  CgroupFixture f(Layout::kV1);
  auto r = memory(100 << 20, 200 << 20);
  r.memory->reservation = 50 << 20;
  r.memory->swappiness = 10;
  r.memory->disable_oom_killer = true;
  r.memory->kernel_tcp = 1 << 20;
  r.memory->kernel = 8 << 20;
  r.memory->use_hierarchy = true;
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("memory", "memory.limit_in_bytes"), std::to_string(100 << 20));
  EXPECT_EQ(f.file("memory", "memory.memsw.limit_in_bytes"), std::to_string(200 << 20));
  EXPECT_EQ(f.file("memory", "memory.soft_limit_in_bytes"), std::to_string(50 << 20));
  EXPECT_EQ(f.file("memory", "memory.swappiness"), "10");
  EXPECT_EQ(f.file("memory", "memory.oom_control"), "1");
  EXPECT_EQ(f.file("memory", "memory.kmem.tcp.limit_in_bytes"), std::to_string(1 << 20));
  EXPECT_EQ(f.file("memory", "memory.kmem.limit_in_bytes"), std::to_string(8 << 20));
  EXPECT_EQ(f.file("memory", "memory.use_hierarchy"), "1");
}

TEST(CgroupsV1Memory, UpdateZeroMeansUnchanged) {
  CgroupFixture f(Layout::kV1);
  auto m = f.create(memory(100 << 20, 200 << 20));
  ASSERT_TRUE(m) << failure(m);
  ASSERT_TRUE(m->update(memory(0, 0)));
  EXPECT_EQ(f.file("memory", "memory.limit_in_bytes"), std::to_string(100 << 20));
  EXPECT_EQ(f.file("memory", "memory.memsw.limit_in_bytes"), std::to_string(200 << 20));
  ASSERT_TRUE(m->update(memory(300 << 20, 0)));
  EXPECT_EQ(f.file("memory", "memory.limit_in_bytes"), std::to_string(300 << 20));
  EXPECT_EQ(f.file("memory", "memory.memsw.limit_in_bytes"), std::to_string(200 << 20));
  // Unlimited memory with swap unset: both unlimited, as on v1 hosts with runc.
  ASSERT_TRUE(m->update(memory(-1, 0)));
  EXPECT_EQ(f.file("memory", "memory.limit_in_bytes"), "-1");
  EXPECT_EQ(f.file("memory", "memory.memsw.limit_in_bytes"), "-1");
}

TEST(CgroupsV1Memory, KernelLimitsWithoutKernelSupportOnlyWarn) {
  CgroupFixture f(Layout::kV1);
  f.tree.add_cgroup("/berth/c1");
  f.remove_file("memory", "memory.kmem.limit_in_bytes");
  f.remove_file("memory", "memory.kmem.tcp.limit_in_bytes");
  spec::Resources r;
  r.memory.emplace();
  r.memory->kernel = 1 << 20;
  r.memory->kernel_tcp = 1 << 20;
  auto m = f.create(r);
  EXPECT_TRUE(m) << failure(m);
  EXPECT_FALSE(f.tree.exists(f.tree.file("memory", "/berth/c1", "memory.kmem.limit_in_bytes")));
}

TEST(CgroupsV1Memory, Refusals) {
  CgroupFixture f(Layout::kV1);
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  spec::Resources r;
  r.memory.emplace();
  r.memory->swappiness = 101;
  auto st = m->update(r);
  EXPECT_NE(failure(st).find("linux.resources.memory.swappiness: invalid memory swappiness value: 101"),
            std::string::npos) << failure(st);
  // checkBeforeUpdate: the fake's usage is 4096 bytes.
  auto low = memory(4096, 0);
  low.memory->check_before_update = true;
  st = m->update(low);
  EXPECT_NE(failure(st).find("rejecting memory limit 4096 <= usage 4096"), std::string::npos) << failure(st);
  low.memory->limit = 8192;
  EXPECT_TRUE(m->update(low));
}

TEST(CgroupsV1Memory, StatsAndOom) {
  CgroupFixture f(Layout::kV1);
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  auto s = m->stats();
  ASSERT_TRUE(s) << failure(s);
  EXPECT_EQ(s->memory.cache, 1234u);
  EXPECT_EQ(s->memory.raw.at("rss"), 4096u);
  EXPECT_EQ(s->memory.usage.usage, 4096u);
  EXPECT_EQ(s->memory.usage.max, 8192u);
  EXPECT_EQ(s->memory.usage.failcnt, 1u);
  EXPECT_EQ(s->memory.swap.usage, 4096u);
  EXPECT_EQ(s->memory.kernel.usage, 100u);
  EXPECT_EQ(m->oom_kill_count().value(), 2u);
  auto fd = m->oom_event_fd();
  ASSERT_TRUE(fd) << failure(fd);
  // Registered as "<eventfd> <memory.oom_control fd>".
  auto reg = f.file("memory", "cgroup.event_control");
  EXPECT_EQ(reg.substr(0, reg.find(' ')), std::to_string(fd->get()));
}

}  // namespace
}  // namespace berth::cgroups::testing
