// The RDMA device module: which RDMA devices a container asked for (the annotation
// org.berth.rdma.devices: "mlx5_0,mlx5_1" or "all"), the device nodes and cgroup rules that
// gives it (Edits), and the devices to move into its network namespace when the RDMA
// subsystem is in exclusive mode. RDMA nodes that come from CDI specs are the CDI module's
// (plain deviceNodes); linux.resources.rdma is the cgroups library's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "devices/edits.h"
#include "devices/rdma/host.h"

namespace berth::devices::rdma {

inline constexpr const char* kAnnotation = "org.berth.rdma.devices";

struct Request {
  bool all = false;
  std::vector<std::string> names;  // in request order, without duplicates
};

// nullopt when the annotation is absent or empty; invalid_spec for a malformed name.
Result<std::optional<Request>> parse_request(const spec::Spec& spec);

// The requested devices, resolved on the host ("all" = every device the runtime's network
// namespace sees; an error when there is none).
Result<std::vector<HostDevice>> resolve_request(const Request& r, const HostView& host);

// /dev/infiniband/<node> for every node of the requested devices, plus rdma_cm when the host
// has it; each with a `c MAJ:MIN rw` device rule. Empty Edits when nothing was requested.
Result<Edits> edits(const spec::Spec& spec, const HostView& host);

// A device to move into the container's network namespace (exclusive mode), with the
// interfaces that go with it.
struct NetnsMove {
  std::string device;
  std::vector<std::string> netdevs;
};
Result<std::vector<NetnsMove>> netns_moves(const spec::Spec& spec, const HostView& host);

}  // namespace berth::devices::rdma
