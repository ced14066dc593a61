// v1 → v2 value conversions (linux.resources.cpu.shares, memory.swap, blockIO.weight):
// see convert.h.
#include "cgroups/common/convert.h"

namespace berth::cgroups {
namespace {

// No libm here (log2, pow and ceil were most of berth's use of it): without libm the binary
// maps and relocates one shared object less on every call. The two functions below work in
// long double (x87's 64-bit mantissa on x86-64), so log2 rounds to the same double as
// glibc's and the power lands on the same side of every integer as glibc's pow: the unit
// test CgroupsConvert.CpuSharesToWeightMatchesLibmOverTheWholeRange checks all 262141
// inputs on each build.

// log2(v), v >= 1: v = 2^k * m with m in [sqrt(1/2), sqrt(2)); log2(m) = 2/ln(2) * atanh(z),
// z = (m - 1) / (m + 1), |z| < 0.172, whose odd series is below 1e-20 after 14 terms.
long double log2_of(uint64_t v) {
  int k = 63 - __builtin_clzll(v);
  long double m = static_cast<long double>(v) / static_cast<long double>(1ULL << k);
  if (m > 1.41421356237309504880L) {
    m /= 2;
    ++k;
  }
  long double z = (m - 1) / (m + 1), z2 = z * z, term = z, sum = 0;
  for (int n = 1; n < 40; n += 2, term *= z2) sum += term / n;
  return k + sum * 2.88539008177792681471984936200378L;  // 2 / ln(2)
}

// 10^e, 0 <= e < 5: 10^floor(e) exactly, times exp(f ln 10) for the fraction f < 1, by its
// Taylor series (40 terms: 2.31^40 / 40! < 1e-33). An integer e gives an exact power.
long double pow10_of(double e) {
  int whole = static_cast<int>(e);
  long double scale = 1;
  for (int i = 0; i < whole; ++i) scale *= 10;
  long double x = (static_cast<long double>(e) - whole) * 2.30258509299404568401799145468436L;  // ln(10)
  long double sum = 1, term = 1;
  for (int n = 1; n < 40; ++n) {
    term *= x / n;
    sum += term;
  }
  return scale * sum;
}

}  // namespace

uint64_t cpu_shares_to_weight(uint64_t shares) {
  if (shares == 0) return 0;
  if (shares <= 2) return 1;
  if (shares >= 262144) return 10000;
  // weight = ceil(10^((L^2 + 125 L) / 612 - 7/34)), L = log2(shares): a parabola in log
  // space through (2, 1), (1024, 100) and (262144, 10000). The exponent is computed in
  // double, in the same steps as runc and crun, so that its rounding is theirs.
  double l = static_cast<double>(log2_of(shares));
  double exponent = (l * l + 125 * l) / 612.0 - 7.0 / 34.0;
  long double v = pow10_of(exponent);
  auto weight = static_cast<uint64_t>(v);  // ceil: v is positive and below 10^4
  return static_cast<long double>(weight) < v ? weight + 1 : weight;
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
