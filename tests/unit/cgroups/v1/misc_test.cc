// v1 pids, blkio, hugetlb, net_cls, net_prio and rdma controllers on a fake tree.
#include <gtest/gtest.h>

#include "unit/cgroups/fixture.h"

namespace berth::cgroups::testing {
namespace {

TEST(CgroupsV1Pids, LimitAndUnchanged) {
  CgroupFixture f(Layout::kV1);
  spec::Resources r;
  r.pids = spec::Pids{100};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("pids", "pids.max"), "100");
  r.pids->limit = 0;  // Docker's "unset"
  ASSERT_TRUE(m->update(r));
  EXPECT_EQ(f.file("pids", "pids.max"), "100");
  r.pids->limit = -1;
  ASSERT_TRUE(m->update(r));
  EXPECT_EQ(f.file("pids", "pids.max"), "max");
  auto s = m->stats();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pids.current, 3u);
  EXPECT_EQ(s->pids.limit, 0u);
}

TEST(CgroupsV1Blkio, WeightsAndThrottles) {
  CgroupFixture f(Layout::kV1);
  spec::Resources r;
  r.block_io.emplace();
  r.block_io->weight = 300;
  r.block_io->leaf_weight = 200;
  r.block_io->weight_device = {{8, 0, 400, 100}};
  r.block_io->throttle_read_bps_device = {{8, 0, 1048576}};
  r.block_io->throttle_write_iops_device = {{8, 16, 100}};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("blkio", "blkio.weight"), "300");
  EXPECT_EQ(f.file("blkio", "blkio.leaf_weight"), "200");
  EXPECT_EQ(f.file("blkio", "blkio.weight_device"), "8:0 400");
  EXPECT_EQ(f.file("blkio", "blkio.leaf_weight_device"), "8:0 100");
  EXPECT_EQ(f.file("blkio", "blkio.throttle.read_bps_device"), "8:0 1048576");
  EXPECT_EQ(f.file("blkio", "blkio.throttle.write_iops_device"), "8:16 100");
  r.block_io->weight = 0;
  r.block_io->leaf_weight.reset();
  r.block_io->weight_device.clear();
  r.block_io->throttle_read_bps_device.clear();
  r.block_io->throttle_write_iops_device.clear();
  ASSERT_TRUE(m->update(r));
  EXPECT_EQ(f.file("blkio", "blkio.weight"), "300");
  auto s = m->stats();
  ASSERT_TRUE(s);
  ASSERT_EQ(s->blkio.io_service_bytes_recursive.size(), 2u);
  EXPECT_EQ(s->blkio.io_service_bytes_recursive[1], (BlkioEntry{8, 0, "Write", 200}));
  EXPECT_EQ(s->blkio.io_serviced_recursive.size(), 2u);
}

TEST(CgroupsV1Blkio, BfqFilesWhenCfqIsGone) {
  CgroupFixture f(Layout::kV1);
  f.tree.add_cgroup("/berth/c1");
  f.remove_file("blkio", "blkio.weight");
  f.remove_file("blkio", "blkio.leaf_weight");
  f.set_file("blkio", "blkio.bfq.weight", "100\n");
  spec::Resources r;
  r.block_io.emplace();
  r.block_io->weight = 300;
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("blkio", "blkio.bfq.weight"), "300");
  r.block_io->leaf_weight = 10;
  auto st = m->update(r);
  EXPECT_NE(failure(st).find("linux.resources.blockIO.leafWeight: not supported on this host"),
            std::string::npos) << failure(st);
}

TEST(CgroupsV1Hugetlb, Limits) {
  CgroupFixture f(Layout::kV1);
  spec::Resources r;
  r.hugepage_limits = {{"2MB", 4 << 20}, {"1GB", 1 << 30}};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("hugetlb", "hugetlb.2MB.limit_in_bytes"), std::to_string(4 << 20));
  EXPECT_EQ(f.file("hugetlb", "hugetlb.1GB.limit_in_bytes"), std::to_string(1 << 30));
  r.hugepage_limits = {{"64KB", 1}};
  auto st = m->update(r);
  EXPECT_NE(failure(st).find("linux.resources.hugepageLimits[0]: not supported on this host"), std::string::npos)
      << failure(st);
  auto s = m->stats();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->hugetlb.size(), 2u);
  EXPECT_TRUE(s->hugetlb.count("1GB"));
}

TEST(CgroupsV1Network, ClassIdAndPriorities) {
  CgroupFixture f(Layout::kV1);
  spec::Resources r;
  r.network = spec::Network{0x100001, {{"eth0", 5}}};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("net_cls,net_prio", "net_cls.classid"), "1048577");
  EXPECT_EQ(f.file("net_cls,net_prio", "net_prio.ifpriomap"), "eth0 5");
}

TEST(CgroupsV1Network, RefusedWhereTheHostLacksTheController) {
  // This development host's hybrid layout: no net_cls, net_prio, hugetlb or rdma.
  CgroupFixture f(Layout::kHybrid, {"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio",
                                    "pids", "name=systemd"});
  spec::Resources r;
  r.network = spec::Network{7, {}};
  auto m = f.create(r);
  EXPECT_EQ(failure(m),
            "linux.resources.network.classID: not supported on this host (no net_cls cgroup controller is mounted)");
  r.network.reset();
  r.hugepage_limits = {{"2MB", 1}};
  m = f.create(r);
  EXPECT_NE(failure(m).find("linux.resources.hugepageLimits[0]: not supported"), std::string::npos);
  r.hugepage_limits.clear();
  r.rdma["mlx5_0"] = spec::Rdma{1, std::nullopt};
  m = f.create(r);
  EXPECT_NE(failure(m).find("linux.resources.rdma[\"mlx5_0\"]: not supported"), std::string::npos);
}

TEST(CgroupsV1Rdma, Limits) {
  CgroupFixture f(Layout::kV1);
  spec::Resources r;
  r.rdma["mlx5_0"] = spec::Rdma{3, 300};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("rdma", "rdma.max"), "mlx5_0 hca_handle=3 hca_object=300");
}

}  // namespace
}  // namespace berth::cgroups::testing
