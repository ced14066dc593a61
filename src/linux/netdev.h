// linux.netDevices (runtime-spec 1.3) and RDMA devices in exclusive netns mode: moving
// host interfaces and RDMA devices into the container's network namespace, over rtnetlink
// and RDMA netlink (netlink_route.h, netlink_rdma.h). Runs in the runtime (host
// namespaces) once the container's network namespace exists, before any hook.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::linux {

// One RDMA device to move in exclusive mode, with the network interfaces that belong to it
// (the Ethernet netdev of a RoCE port, the IPoIB interface of an InfiniBand port).
struct RdmaMove {
  std::string device;
  std::vector<std::string> netdevs;
};

struct NetnsMoves {
  std::map<std::string, spec::NetDevice> net_devices;  // linux.netDevices
  std::vector<RdmaMove> rdma;                          // requested RDMA devices
  bool empty() const { return net_devices.empty() && rdma.empty(); }
};

// Moves everything into the network namespace of `init_pid`. linux.netDevices first (each
// keeps its permanent global addresses and is set up inside); then, only when the RDMA
// subsystem is in exclusive mode, each RDMA device and after it its interfaces (IPoIB
// interfaces are re-created by the driver when their device moves: one already gone from
// the runtime's namespace is not an error). A container that shares the runtime's network
// namespace gets no RDMA move (its devices are already there) and no netDevices (an error).
Status move_into_netns(const NetnsMoves& moves, pid_t init_pid);

// Moves one interface from the caller's network namespace into `netns_fd`: its permanent
// global addresses are read first and re-added inside (the move drops them), then it is set
// up. `new_name` renames it in the same step (a trailing "%d" lets the kernel number it);
// empty keeps the name.
Status move_interface(const std::string& name, const std::string& new_name, int netns_fd);

}  // namespace berth::linux
