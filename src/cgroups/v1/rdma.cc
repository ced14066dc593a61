// v1 rdma controller: linux.resources.rdma → rdma.max (format shared with v2, common/rdma).
#include "cgroups/common/rdma.h"
#include "cgroups/v1/v1.h"

namespace berth::cgroups::v1 {
namespace {

std::string first_field(const SetContext& ctx) {
  for (const auto& [dev, l] : ctx.r.rdma)
    if (!rdma_max_line(dev, l).empty()) return "linux.resources.rdma[\"" + dev + "\"]";
  return {};
}

Status set(const Dir& d, const SetContext& ctx) { return set_rdma(d, ctx.r.rdma); }

}  // namespace

const Controller kRdma = {"rdma", first_field, set, nullptr};

}  // namespace berth::cgroups::v1
