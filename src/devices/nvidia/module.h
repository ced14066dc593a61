// The NVIDIA device module: from a parsed request, the berth config and the container's
// rootfs to Edits, in the order of the design (§7): discover the host (procfs per create,
// driver files cached per driver version), select devices, check requirements, inspect the
// rootfs, plan. Reads only; the one host action (modprobe) is left to the caller.
#pragma once

#include <string>

#include "berth/result.h"
#include "berth/spec.h"
#include "devices/config.h"
#include "devices/edits.h"
#include "devices/nvidia/request.h"

namespace berth::devices::nvidia {

struct ModuleContext {
  std::string rootfs;      // host path of root.path
  std::string state_root;  // where the discovery cache lives; "" = no cache
  bool user_ns = false;
};

// Whether the kernel driver is loaded (<proc>/driver/nvidia/version exists).
bool driver_loaded(const NvidiaConfig& cfg);

// The host ldconfig to run inside the container ("" when it is unusable: it must be static,
// since it runs on the image's files; a warning says why).
std::string choose_ldconfig(const NvidiaConfig& cfg);

// Whether the spec mounts procfs at /proc (then /proc/driver/nvidia can be masked).
bool mounts_proc(const spec::Spec& spec);

// Empty Edits when the request is not `wanted`, or is an env request on a host without a
// driver and the config says warn/ignore (the warning is logged here, once).
Result<Edits> nvidia_edits(const spec::Spec& spec, const Request& req, const NvidiaConfig& cfg, const ModuleContext& ctx);

}  // namespace berth::devices::nvidia
