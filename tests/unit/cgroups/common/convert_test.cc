// v1 → v2 conversions and the rdma format.
#include "cgroups/common/convert.h"

#include <gtest/gtest.h>

#include <cmath>

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

// The formula as runc and crun compute it, through libm: the reference the library-free
// version in convert.cc must match bit for bit.
uint64_t weight_by_libm(uint64_t shares) {
  if (shares == 0) return 0;
  if (shares <= 2) return 1;
  if (shares >= 262144) return 10000;
  double l = std::log2(static_cast<double>(shares));
  double exponent = (l * l + 125 * l) / 612.0 - 7.0 / 34.0;
  return static_cast<uint64_t>(std::ceil(std::pow(10.0, exponent)));
}

// Every input that is not clamped (3 .. 262143), and the edges around the clamps.
TEST(CgroupsConvert, CpuSharesToWeightMatchesLibmOverTheWholeRange) {
  size_t mismatches = 0;
  for (uint64_t shares = 0; shares <= 262150; ++shares) {
    uint64_t want = weight_by_libm(shares);
    uint64_t got = cpu_shares_to_weight(shares);
    if (got != want && ++mismatches <= 10) ADD_FAILURE() << "shares " << shares << ": " << got << ", libm " << want;
  }
  EXPECT_EQ(mismatches, 0u);
  // Each weight of the v2 range is reached monotonically.
  for (uint64_t shares = 3; shares <= 262144; ++shares)
    ASSERT_LE(cpu_shares_to_weight(shares - 1), cpu_shares_to_weight(shares)) << shares;
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
