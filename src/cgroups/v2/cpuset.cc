// v2 cpuset controller: linux.resources.cpu.{cpus, mems} → cpuset.cpus/mems; statistics
// from the effective sets.
#include "cgroups/v2/v2.h"

namespace berth::cgroups::v2 {
namespace {

std::string no_field(const SetContext&) { return {}; }

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.cpu) return ok();
  if (!ctx.r.cpu->cpus.empty())
    BERTH_TRY(write_field(d, "cpuset.cpus", ctx.r.cpu->cpus, "linux.resources.cpu.cpus"));
  if (!ctx.r.cpu->mems.empty())
    BERTH_TRY(write_field(d, "cpuset.mems", ctx.r.cpu->mems, "linux.resources.cpu.mems"));
  return ok();
}

Status stats(const Dir& d, Stats& s) {
  if (auto cpus = d.read("cpuset.cpus.effective")) s.cpuset.cpus = parse_cpu_list(*cpus);
  if (auto mems = d.read("cpuset.mems.effective")) s.cpuset.mems = parse_cpu_list(*mems);
  return ok();
}

}  // namespace

const Controller kCpuset = {"cpuset", no_field, set, stats};

}  // namespace berth::cgroups::v2
