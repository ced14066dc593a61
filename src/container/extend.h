// The device-module extension point on the container side: Edits (devices/edits.h) folded
// into the rootfs plan, the process and the cgroup device rules before the init exists.
#pragma once

#include <vector>

#include "berth/spec.h"
#include "devices/edits.h"
#include "linux/rootfs/plan.h"

namespace berth::container {

// user_ns: nodes are bound from the host instead of created (mknod is refused there) and
// no cgroup rules are needed for them (the device cgroup does not apply to bind mounts
// in the same way; rules are still added for v1/v2 consistency).
void merge_edits(const devices::Edits& edits, linux::rootfs::RootfsPlan& plan, spec::Process& process,
                 std::vector<spec::DeviceRule>& rules, bool user_ns);

}  // namespace berth::container
