// The device-module extension point on the container side: Edits (devices/edits.h) folded
// into the spec (hooks, linux.netDevices), the rootfs plan, the process and the cgroup
// device rules before the init exists.
#pragma once

#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "devices/edits.h"
#include "linux/rootfs/plan.h"

namespace berth::container {

// The spec-level part, consumed from `edits` (its hooks and net_devices are left empty):
// hooks join the spec's at their OCI stage, after the spec's own (as the CDI library adds
// them), so create, start and delete run them where they run the spec's, and they are in
// the config copy that start and delete read; netDevices join linux.netDevices before
// they are moved. A device moved twice under different names, two devices given one name
// inside, or netDevices without a network namespace of the container's own are errors.
// Returns whether the spec changed.
Result<bool> merge_spec_edits(devices::Edits& edits, spec::Spec& spec);

// user_ns: nodes are bound from the host instead of created (mknod is refused there) and
// no cgroup rules are needed for them (the device cgroup does not apply to bind mounts
// in the same way; rules are still added for v1/v2 consistency).
void merge_edits(const devices::Edits& edits, linux::rootfs::RootfsPlan& plan, spec::Process& process,
                 std::vector<spec::DeviceRule>& rules, bool user_ns);

}  // namespace berth::container
