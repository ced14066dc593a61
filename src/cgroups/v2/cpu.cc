// v2 cpu controller: linux.resources.cpu.{shares → cpu.weight, quota+period → cpu.max,
// burst → cpu.max.burst, idle → cpu.idle}; realtime fields are refused (no v2 interface);
// cpu.stat and cpu.pressure statistics.
#include <cerrno>

#include "cgroups/common/convert.h"
#include "cgroups/v2/v2.h"
#include "util/strings.h"

namespace berth::cgroups::v2 {
namespace {

std::string field(const char* name) { return std::string("linux.resources.cpu.") + name; }

std::string no_field(const SetContext&) { return {}; }

// cpu.max is "<quota|max> <period>". Zero means unchanged: with only one of the two given,
// the other is read back so that an update of the period keeps the quota (and vice versa).
Result<std::string> cpu_max(const Dir& d, int64_t quota, uint64_t period) {
  std::string q = quota > 0 ? std::to_string(quota) : "max";
  if (quota == 0) {
    BERTH_ASSIGN(auto cur, d.read("cpu.max"));
    auto parts = str::split_nonempty(str::trim(cur), ' ');
    if (!parts.empty()) q = parts[0];
  }
  if (period == 0) return q;
  return q + " " + std::to_string(period);
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.cpu) return ok();
  const auto& c = *ctx.r.cpu;
  if (c.realtime_runtime.value_or(0))
    return Error::unsupported(field("realtimeRuntime") + ": not supported on cgroup v2");
  if (c.realtime_period.value_or(0))
    return Error::unsupported(field("realtimePeriod") + ": not supported on cgroup v2");
  if (uint64_t shares = c.shares.value_or(0))
    BERTH_TRY(write_field(d, "cpu.weight", std::to_string(cpu_shares_to_weight(shares)), field("shares")));
  int64_t quota = c.quota.value_or(0);
  uint64_t period = c.period.value_or(0);
  bool retry_burst = false;
  if (c.burst) {
    auto st = write_field(d, "cpu.max.burst", std::to_string(*c.burst), field("burst"));
    // Refused (EINVAL) while the old quota is smaller: retried after cpu.max, as runc does.
    if (!st) {
      if (st.error().err() != EINVAL || quota == 0) return st;
      retry_burst = true;
    }
  }
  if (quota != 0 || period != 0) {
    BERTH_ASSIGN(auto value, cpu_max(d, quota, period));
    BERTH_TRY(write_field(d, "cpu.max", value, quota != 0 ? field("quota") : field("period")));
  }
  if (retry_burst)
    BERTH_TRY(write_field(d, "cpu.max.burst", std::to_string(*c.burst), field("burst")));
  if (c.idle) BERTH_TRY(write_field(d, "cpu.idle", std::to_string(*c.idle), field("idle")));
  return ok();
}

Status stats(const Dir& d, Stats& s) {
  auto kv = d.read_keyed("cpu.stat");
  if (!kv) return kv.error().err() == ENOENT ? ok() : Status(std::move(kv).error());
  auto& u = s.cpu.usage;
  u.total = (*kv)["usage_usec"] * 1000;
  u.user = (*kv)["user_usec"] * 1000;
  u.kernel = (*kv)["system_usec"] * 1000;
  s.cpu.throttling.periods = (*kv)["nr_periods"];
  s.cpu.throttling.throttled_periods = (*kv)["nr_throttled"];
  s.cpu.throttling.throttled_time = (*kv)["throttled_usec"] * 1000;
  if (auto p = d.read("cpu.pressure")) s.cpu.psi = parse_psi(*p);
  return ok();
}

}  // namespace

const Controller kCpu = {"cpu", no_field, set, stats};

}  // namespace berth::cgroups::v2
