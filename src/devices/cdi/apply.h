// Resolved CDI devices → Edits, as the CDI library applies containerEdits: each spec's
// spec-wide edits once (with its first requested device), then each device's own; device
// nodes completed from the host node (type, major, minor, file mode) and given a cgroup
// rule (permissions, default rwm); bind mounts ordered parents first; env later-wins;
// additional GIDs, hooks (with their stage), intelRdt and netDevices carried as they are.
// Two edits that want different things at one container path are a conflict (error).
#pragma once

#include <vector>

#include "berth/result.h"
#include "devices/cdi/registry.h"
#include "devices/edits.h"

namespace berth::devices::cdi {

Result<Edits> cdi_edits(const std::vector<Resolved>& devices);

}  // namespace berth::devices::cdi
