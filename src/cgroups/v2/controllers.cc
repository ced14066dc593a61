// v2 controller table: the order in which create/update write a container's limits.
#include "cgroups/v2/v2.h"

namespace berth::cgroups::v2 {

std::span<const Controller* const> controllers() {
  // Refusals first (network), so nothing is written for a spec the host cannot honour.
  static const Controller* const kAll[] = {&kNetwork, &kPids, &kMemory, &kIo,  &kCpu,
                                           &kDevices, &kCpuset, &kHugetlb, &kRdma};
  return kAll;
}

}  // namespace berth::cgroups::v2
