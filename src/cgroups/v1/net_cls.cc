// v1 net_cls controller: linux.resources.network.classID → net_cls.classid.
#include "cgroups/v1/v1.h"

namespace berth::cgroups::v1 {
namespace {

std::string first_field(const SetContext& ctx) {
  return ctx.r.network && ctx.r.network->class_id ? "linux.resources.network.classID" : "";
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.network || !ctx.r.network->class_id) return ok();
  return write_field(d, "net_cls.classid", std::to_string(*ctx.r.network->class_id),
                     "linux.resources.network.classID");
}

}  // namespace

const Controller kNetCls = {"net_cls", first_field, set, nullptr};

}  // namespace berth::cgroups::v1
