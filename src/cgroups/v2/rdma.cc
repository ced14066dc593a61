// v2 rdma controller: linux.resources.rdma → rdma.max (format shared with v1, common/rdma);
// linux.resources.network, which has no v2 controller, is refused here.
#include "cgroups/common/rdma.h"
#include "cgroups/v2/v2.h"

namespace berth::cgroups::v2 {
namespace {

std::string no_field(const SetContext&) { return {}; }

Status set_rdma_limits(const Dir& d, const SetContext& ctx) { return set_rdma(d, ctx.r.rdma); }

// net_cls and net_prio exist only in v1 (v2 leaves packet tagging to eBPF/nftables).
Status refuse_network(const Dir&, const SetContext& ctx) {
  if (!ctx.r.network) return ok();
  if (ctx.r.network->class_id)
    return Error::unsupported("linux.resources.network.classID: not supported on cgroup v2 (no net_cls controller)");
  if (!ctx.r.network->priorities.empty())
    return Error::unsupported(
        "linux.resources.network.priorities: not supported on cgroup v2 (no net_prio controller)");
  return ok();
}

}  // namespace

const Controller kRdma = {"rdma", no_field, set_rdma_limits, nullptr};
const Controller kNetwork = {"network", no_field, refuse_network, nullptr};

}  // namespace berth::cgroups::v2
