// Value conversions from the spec's (v1-shaped) resources to cgroup v2 files, as runc (and
// crun) do them, plus small formats both versions share (hugepage sizes, device numbers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "berth/result.h"

namespace berth::cgroups {

// cpu.shares [2, 262144] → cpu.weight [1, 10000]. The log-quadratic mapping that runc
// (>= 1.3.2, opencontainers/cgroups#20) and crun adopted in 2025: 1024 shares (the v1
// default) give weight 100 (the v2 default), where the old linear one gave 39.
// 0 stays 0 (unset); out-of-range values clamp.
uint64_t cpu_shares_to_weight(uint64_t shares);

// linux.resources.memory.swap (memory+swap, v1 meaning) → memory.swap.max (swap only).
// Returns -1 for "max", 0 for "unset", or the swap-only amount; errors as runc words them.
Result<int64_t> memory_swap_to_v2(int64_t swap, int64_t limit);

// blkio.weight [10, 1000] → io.weight [1, 10000], linear (runc).
uint64_t blkio_weight_to_io_weight(uint16_t weight);

// "max" for -1 (and any negative), else the number: v2's .max/.high/.low files.
std::string limit_string(int64_t v);

}  // namespace berth::cgroups
