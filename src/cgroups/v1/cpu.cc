// v1 cpu controller: linux.resources.cpu.{shares, quota, period, burst, realtimeRuntime,
// realtimePeriod, idle} → cpu.shares, cpu.cfs_*_us, cpu.rt_*_us, cpu.idle; throttling stats.
#include <cerrno>

#include "cgroups/v1/v1.h"
#include "util/strings.h"

namespace berth::cgroups::v1 {
namespace {

constexpr const char* kF = "linux.resources.cpu.";

std::string field(const char* name) { return std::string(kF) + name; }

std::string first_field(const SetContext& ctx) {
  if (!ctx.r.cpu) return {};
  const auto& c = *ctx.r.cpu;
  if (c.shares.value_or(0)) return field("shares");
  if (c.quota.value_or(0)) return field("quota");
  if (c.period.value_or(0)) return field("period");
  if (c.burst) return field("burst");
  if (c.realtime_runtime.value_or(0)) return field("realtimeRuntime");
  if (c.realtime_period.value_or(0)) return field("realtimePeriod");
  if (c.idle) return field("idle");
  return {};
}

Status set_shares(const Dir& d, uint64_t shares) {
  BERTH_TRY(write_field(d, "cpu.shares", std::to_string(shares), field("shares")));
  // The kernel clamps out-of-range shares silently; runc reads back to report it.
  BERTH_ASSIGN(uint64_t got, d.read_u64("cpu.shares"));
  if (got > shares)
    return Error::invalid_spec(field("shares") + ": the minimum allowed cpu-shares is " + std::to_string(got));
  if (got < shares)
    return Error::invalid_spec(field("shares") + ": the maximum allowed cpu-shares is " + std::to_string(got));
  return ok();
}

// runc's order: a period or burst the kernel refuses (EINVAL: old quota/new period would
// exceed the parent's limit) is retried after the quota is written.
Status set_bandwidth(const Dir& d, const spec::Cpu& c) {
  int64_t quota = c.quota.value_or(0);
  bool retry_period = false, retry_burst = false;
  if (uint64_t period = c.period.value_or(0)) {
    auto st = write_field(d, "cpu.cfs_period_us", std::to_string(period), field("period"));
    if (!st) {
      if (st.error().err() != EINVAL || quota == 0) return st;
      retry_period = true;
    }
  }
  if (c.burst) {
    auto st = write_field(d, "cpu.cfs_burst_us", std::to_string(*c.burst), field("burst"));
    if (!st) {
      if (st.error().err() != EINVAL || quota == 0) return st;
      retry_burst = true;
    }
  }
  if (quota != 0) {
    BERTH_TRY(write_field(d, "cpu.cfs_quota_us", std::to_string(quota), field("quota")));
    if (retry_period)
      BERTH_TRY(write_field(d, "cpu.cfs_period_us", std::to_string(*c.period), field("period")));
    if (retry_burst)
      BERTH_TRY(write_field(d, "cpu.cfs_burst_us", std::to_string(*c.burst), field("burst")));
  }
  return ok();
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.cpu) return ok();
  const auto& c = *ctx.r.cpu;
  // Realtime budget before anything joins: a SCHED_RR task cannot enter a cgroup without one.
  if (uint64_t p = c.realtime_period.value_or(0))
    BERTH_TRY(write_field(d, "cpu.rt_period_us", std::to_string(p), field("realtimePeriod")));
  if (int64_t rt = c.realtime_runtime.value_or(0))
    BERTH_TRY(write_field(d, "cpu.rt_runtime_us", std::to_string(rt), field("realtimeRuntime")));
  if (uint64_t shares = c.shares.value_or(0)) BERTH_TRY(set_shares(d, shares));
  BERTH_TRY(set_bandwidth(d, c));
  if (c.idle) BERTH_TRY(write_field(d, "cpu.idle", std::to_string(*c.idle), field("idle")));
  return ok();
}

Status stats(const Dir& d, Stats& s) {
  auto kv = d.read_keyed("cpu.stat");
  if (!kv) return kv.error().err() == ENOENT ? ok() : Status(std::move(kv).error());
  s.cpu.throttling.periods = (*kv)["nr_periods"];
  s.cpu.throttling.throttled_periods = (*kv)["nr_throttled"];
  s.cpu.throttling.throttled_time = (*kv)["throttled_time"];
  return ok();
}

}  // namespace

const Controller kCpu = {"cpu", first_field, set, stats};

}  // namespace berth::cgroups::v1
