// v1 → v2 value conversions (linux.resources.cpu.shares, memory.swap, blockIO.weight):
// see convert.h.
#include "cgroups/common/convert.h"

#include <cmath>

namespace berth::cgroups {

uint64_t cpu_shares_to_weight(uint64_t shares) {
  if (shares == 0) return 0;
  if (shares <= 2) return 1;
  if (shares >= 262144) return 10000;
  // weight = ceil(10^((L^2 + 125 L) / 612 - 7/34)), L = log2(shares): a parabola in log
  // space through (2, 1), (1024, 100) and (262144, 10000).
  double l = std::log2(static_cast<double>(shares));
  double exponent = (l * l + 125 * l) / 612.0 - 7.0 / 34.0;
  return static_cast<uint64_t>(std::ceil(std::pow(10.0, exponent)));
}

Result<int64_t> memory_swap_to_v2(int64_t swap, int64_t limit) {
  // Unlimited memory with swap unset means both unlimited, as on v1.
  if (limit == -1 && swap == 0) return -1;
  if (swap == -1 || swap == 0) return swap;
  if (limit == -1) return swap;
  if (limit == 0) return Error::invalid_spec("unable to set swap limit without memory limit");
  if (limit < 0) return Error::invalid_spec("invalid memory value: " + std::to_string(limit));
  if (swap < limit) return Error::invalid_spec("memory+swap limit should be >= memory limit");
  return swap - limit;
}

uint64_t blkio_weight_to_io_weight(uint16_t weight) {
  if (weight == 0) return 0;
  if (weight < 10) weight = 10;
  return 1 + (static_cast<uint64_t>(weight) - 10) * 9999 / 990;
}

std::string limit_string(int64_t v) { return v < 0 ? "max" : std::to_string(v); }

}  // namespace berth::cgroups
