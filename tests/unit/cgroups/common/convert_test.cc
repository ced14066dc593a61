// v1 → v2 conversions and the rdma format.
#include "cgroups/common/convert.h"

#include <gtest/gtest.h>

#include "cgroups/common/rdma.h"

namespace berth::cgroups {
namespace {

TEST(CgroupsConvert, CpuSharesToWeight) {
  EXPECT_EQ(cpu_shares_to_weight(0), 0u);  // unset stays unset
  EXPECT_EQ(cpu_shares_to_weight(1), 1u);  // clamped
  EXPECT_EQ(cpu_shares_to_weight(2), 1u);
  EXPECT_EQ(cpu_shares_to_weight(1024), 100u);  // v1 default → v2 default
  EXPECT_EQ(cpu_shares_to_weight(262144), 10000u);
  EXPECT_EQ(cpu_shares_to_weight(1u << 30), 10000u);
  EXPECT_LT(cpu_shares_to_weight(512), cpu_shares_to_weight(1024));
  EXPECT_GT(cpu_shares_to_weight(2048), 100u);
}

TEST(CgroupsConvert, MemorySwap) {
  EXPECT_EQ(memory_swap_to_v2(0, -1).value(), -1);  // unlimited memory, swap unset
  EXPECT_EQ(memory_swap_to_v2(0, 100).value(), 0);   // unset
  EXPECT_EQ(memory_swap_to_v2(-1, 100).value(), -1);
  EXPECT_EQ(memory_swap_to_v2(300, 100).value(), 200);
  EXPECT_EQ(memory_swap_to_v2(100, 100).value(), 0);  // swap disabled
  EXPECT_EQ(memory_swap_to_v2(300, -1).value(), 300);
  EXPECT_FALSE(memory_swap_to_v2(300, 0));
  EXPECT_FALSE(memory_swap_to_v2(50, 100));
}

TEST(CgroupsConvert, BlkioWeight) {
  EXPECT_EQ(blkio_weight_to_io_weight(0), 0u);
  EXPECT_EQ(blkio_weight_to_io_weight(10), 1u);
  EXPECT_EQ(blkio_weight_to_io_weight(1000), 10000u);
  EXPECT_EQ(limit_string(-1), "max");
  EXPECT_EQ(limit_string(42), "42");
}

TEST(CgroupsRdma, Lines) {
  spec::Rdma both{2, 2000}, handles{5, std::nullopt}, none;
  EXPECT_EQ(rdma_max_line("mlx5_0", both), "mlx5_0 hca_handle=2 hca_object=2000");
  EXPECT_EQ(rdma_max_line("mlx5_1", handles), "mlx5_1 hca_handle=5");
  EXPECT_EQ(rdma_max_line("mlx5_2", none), "");
}

TEST(CgroupsRdma, Parse) {
  auto e = parse_rdma("mlx5_0 hca_handle=2 hca_object=max\nmlx4_0 hca_handle=max hca_object=10\n");
  ASSERT_TRUE(e);
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ((*e)[0], (RdmaEntry{"mlx5_0", 2u, std::nullopt}));
  EXPECT_EQ((*e)[1], (RdmaEntry{"mlx4_0", std::nullopt, 10u}));
  EXPECT_FALSE(parse_rdma("mlx5_0 hca_handle=x"));
}

}  // namespace
}  // namespace berth::cgroups
