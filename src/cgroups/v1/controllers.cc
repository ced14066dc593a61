// v1 controller table (runc's subsystem order) and the hierarchies that are only joined:
// perf_event, misc and the named name=systemd hierarchy (systemd tracks processes there).
#include "cgroups/v1/v1.h"

namespace berth::cgroups::v1 {
namespace {

std::string no_field(const SetContext&) { return {}; }
Status no_set(const Dir&, const SetContext&) { return ok(); }

}  // namespace

const Controller kPerfEvent = {"perf_event", no_field, no_set, nullptr};
const Controller kNameSystemd = {"name=systemd", no_field, no_set, nullptr};
const Controller kMisc = {"misc", no_field, no_set, nullptr};

std::span<const Controller* const> controllers() {
  static const Controller* const kAll[] = {&kCpuset,  &kDevices, &kMemory,    &kCpu,
                                           &kCpuacct, &kPids,    &kBlkio,     &kHugetlb,
                                           &kNetCls,  &kNetPrio, &kPerfEvent, &kFreezer,
                                           &kRdma,    &kNameSystemd, &kMisc};
  return kAll;
}

}  // namespace berth::cgroups::v1
