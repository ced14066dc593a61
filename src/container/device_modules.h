// Which device modules contribute to a container (NVIDIA GPUs, RDMA, CDI specs), asked in
// one place during create. Each module decides from the spec (env, annotations, mounts)
// whether it is requested; an unrequested module costs nothing (not even reading the
// berth config file).
#pragma once

#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "devices/edits.h"
#include "devices/rdma/request.h"

namespace berth::container {

struct DeviceContext {
  std::string rootfs;      // absolute host path of root.path (read with RESOLVE_IN_ROOT)
  std::string state_root;  // --root: the NVIDIA discovery cache lives there
  bool user_ns = false;    // nodes are bound, never created
};

// With ctx.user_ns every node's host path must be that device already (named otherwise).
Result<devices::Edits> collect_device_edits(const spec::Spec& spec, const DeviceContext& ctx);

// The RDMA devices to move into the container's network namespace (exclusive rdma netns
// mode), read from the host trees of the berth config (rdma.sysRoot); none when the spec
// has no network namespace (the container stays in the runtime's).
Result<std::vector<devices::rdma::NetnsMove>> rdma_netns_moves(const spec::Spec& spec);

}  // namespace berth::container
