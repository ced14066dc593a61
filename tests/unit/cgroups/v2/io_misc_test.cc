// v2 io, hugetlb, rdma, network refusal, freezer, unified and cgroup creation on a fake tree.
#include <gtest/gtest.h>

#include "unit/cgroups/fixture.h"

namespace berth::cgroups::testing {
namespace {

TEST(CgroupsV2Io, WeightConvertedAndThrottles) {
  CgroupFixture f(Layout::kV2);
  spec::Resources r;
  r.block_io.emplace();
  r.block_io->weight = 1000;
  r.block_io->throttle_read_bps_device = {{8, 0, 1048576}};
  r.block_io->throttle_write_iops_device = {{8, 0, 100}};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "io.weight"), "10000");
  EXPECT_EQ(f.file("", "io.max"), "8:0 wiops=100");  // the last of the per-device writes
  r.block_io->weight_device = {{8, 0, 300, std::nullopt}};
  EXPECT_NE(failure(m->update(r)).find("weightDevice[0]: per-device weights need the BFQ I/O scheduler"),
            std::string::npos);
  r.block_io->weight_device.clear();
  r.block_io->leaf_weight = 10;
  EXPECT_NE(failure(m->update(r)).find("linux.resources.blockIO.leafWeight: not supported on cgroup v2"),
            std::string::npos);
  auto s = m->stats();
  ASSERT_TRUE(s);
  ASSERT_EQ(s->blkio.io_service_bytes_recursive.size(), 2u);
  EXPECT_EQ(s->blkio.io_service_bytes_recursive[0], (BlkioEntry{8, 0, "Read", 100}));
  EXPECT_EQ(s->blkio.io_serviced_recursive[1], (BlkioEntry{8, 0, "Write", 2}));
}

TEST(CgroupsV2Io, BfqTakesTheV1Range) {
  CgroupFixture f(Layout::kV2);
  f.tree.add_cgroup("/berth/c1");
  f.set_file("", "io.bfq.weight", "default 100\n");
  spec::Resources r;
  r.block_io.emplace();
  r.block_io->weight = 500;
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "io.bfq.weight"), "500");
  r.block_io->weight = 0;
  r.block_io->weight_device = {{8, 16, 200, std::nullopt}};
  ASSERT_TRUE(m->update(r));
  EXPECT_EQ(f.file("", "io.bfq.weight"), "8:16 200");
}

TEST(CgroupsV2Hugetlb, MaxAndStats) {
  CgroupFixture f(Layout::kV2);
  spec::Resources r;
  r.hugepage_limits = {{"2MB", 8 << 20}};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "hugetlb.2MB.max"), std::to_string(8 << 20));
  r.hugepage_limits = {{"1GB", 1}};
  EXPECT_NE(failure(m->update(r)).find("linux.resources.hugepageLimits[0]: not supported on this host"),
            std::string::npos);
  auto s = m->stats();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->hugetlb.count("2MB"));
}

TEST(CgroupsV2Rdma, MaxAndNetworkRefusal) {
  CgroupFixture f(Layout::kV2);
  spec::Resources r;
  r.rdma["mlx5_0"] = spec::Rdma{std::nullopt, 100};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "rdma.max"), "mlx5_0 hca_object=100");
  spec::Resources n;
  n.network = spec::Network{0x10001, {}};
  EXPECT_EQ(failure(m->update(n)),
            "update cgroups: linux.resources.network.classID: not supported on cgroup v2 (no net_cls controller)");
  n.network = spec::Network{std::nullopt, {{"eth0", 1}}};
  EXPECT_NE(failure(m->update(n)).find("linux.resources.network.priorities"), std::string::npos);
}

TEST(CgroupsV2Freezer, FreezeWaitsForFrozen) {
  CgroupFixture f(Layout::kV2);
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  EXPECT_FALSE(m->frozen().value());
  f.set_file("", "cgroup.events", "populated 1\nfrozen 1\n");  // what the kernel reports once stopped
  ASSERT_TRUE(m->freeze());
  EXPECT_EQ(f.file("", "cgroup.freeze"), "1");
  EXPECT_TRUE(m->frozen().value());
  ASSERT_TRUE(m->thaw());
  EXPECT_EQ(f.file("", "cgroup.freeze"), "0");
}

TEST(CgroupsV2Unified, VerbatimAndValidated) {
  CgroupFixture f(Layout::kV2);
  spec::Resources r;
  r.pids = spec::Pids{10};
  r.unified = {{"pids.max", "20"}, {"memory.high", "1000"}};
  f.tree.add_cgroup("/berth/c1");
  f.set_file("", "memory.high", "max\n");
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "pids.max"), "20");  // unified is written last and wins
  EXPECT_EQ(f.file("", "memory.high"), "1000");
  spec::Resources bad;
  bad.unified = {{"../pids.max", "1"}};
  EXPECT_NE(failure(m->update(bad)).find("must be a file name"), std::string::npos);
  bad.unified = {{"nodot", "1"}};
  EXPECT_NE(failure(m->update(bad)).find("CONTROLLER.PARAMETER"), std::string::npos);
  bad.unified = {{"cgroup.procs", "1"}};
  EXPECT_NE(failure(m->update(bad)).find("managed by the runtime"), std::string::npos);
  bad.unified = {{"misc.max", "x 1"}};
  EXPECT_NE(failure(m->update(bad)).find("controller \"misc\" is not available"), std::string::npos);
}

TEST(CgroupsV2Create, EnablesControllersAndPlacesRelativeUnderTheParent) {
  CgroupFixture f(Layout::kV2);
  f.tree.add_cgroup("/user.slice/c1");
  Config c;
  c.id = "c1";  // no cgroupsPath: relative "c1"
  c.host = &f.host;
  auto m = Manager::create(c);
  ASSERT_TRUE(m) << failure(m);
  // The caller is in /user.slice/session-1.scope; runc's fs2 uses its parent.
  EXPECT_EQ(m->paths(), (std::map<std::string, std::string>{{"", f.tree.root() + "/sys/fs/cgroup/user.slice/c1"}}));
  EXPECT_EQ(f.tree.read("sys/fs/cgroup/cgroup.subtree_control"), "+cpuset +cpu +io +memory +hugetlb +pids +rdma");
  EXPECT_GE(m->v2_dir_fd(), 0);
  EXPECT_EQ(m->layout(), Layout::kV2);
}

}  // namespace
}  // namespace berth::cgroups::testing
