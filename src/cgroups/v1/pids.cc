// v1 pids controller: linux.resources.pids.limit → pids.max; pids.current statistics.
#include <cerrno>

#include "cgroups/v1/v1.h"

namespace berth::cgroups::v1 {
namespace {

std::string first_field(const SetContext& ctx) {
  return ctx.r.pids && ctx.r.pids->limit != 0 ? "linux.resources.pids.limit" : "";
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.pids || ctx.r.pids->limit == 0) return ok();  // 0: unchanged (Docker sends it)
  int64_t l = ctx.r.pids->limit;
  return write_field(d, "pids.max", l > 0 ? std::to_string(l) : "max", "linux.resources.pids.limit");
}

Status stats(const Dir& d, Stats& s) {
  auto cur = d.read_u64("pids.current");
  if (!cur) return cur.error().err() == ENOENT ? ok() : Status(std::move(cur).error());
  s.pids.current = *cur;
  auto max = d.read_u64("pids.max");
  s.pids.limit = max && *max != UINT64_MAX ? *max : 0;
  return ok();
}

}  // namespace

const Controller kPids = {"pids", first_field, set, stats};

}  // namespace berth::cgroups::v1
