// The one thing the NVIDIA module may do to the host, and only when the berth config opts in
// (nvidia.loadKernelModules): load the driver's kernel modules with the host's modprobe.
// The binary is opened before anything else and run by fd with an empty environment, so
// nothing from an image (LD_PRELOAD...) reaches it (CVE-2025-23266 class). Called by
// container/device_modules.cc, never from planning code.
#pragma once

#include <string>
#include <vector>

#include "berth/result.h"

namespace berth::devices::nvidia {

// Runs `<modprobe> <module>` for each module, in order; fails on the first that fails.
Status load_kernel_modules(const std::string& modprobe, const std::vector<std::string>& modules);

}  // namespace berth::devices::nvidia
