// v1 net_prio controller: linux.resources.network.priorities[] → net_prio.ifpriomap.
#include "cgroups/v1/v1.h"

namespace berth::cgroups::v1 {
namespace {

std::string first_field(const SetContext& ctx) {
  return ctx.r.network && !ctx.r.network->priorities.empty()
             ? "linux.resources.network.priorities[0]"
             : "";
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.network) return ok();
  const auto& list = ctx.r.network->priorities;
  for (size_t i = 0; i < list.size(); ++i) {
    // One "<ifname> <prio>" per write: the kernel parses a single pair each time.
    BERTH_TRY(write_field(d, "net_prio.ifpriomap", list[i].name + " " + std::to_string(list[i].priority),
                          "linux.resources.network.priorities[" + std::to_string(i) + "]"));
  }
  return ok();
}

}  // namespace

const Controller kNetPrio = {"net_prio", first_field, set, nullptr};

}  // namespace berth::cgroups::v1
