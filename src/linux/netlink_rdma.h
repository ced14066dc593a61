// RDMA netlink (NETLINK_RDMA, the "nldev" client that iproute2's `rdma` tool speaks): the
// subsystem's network namespace mode, the device list, and moving a device into another
// network namespace. Messages have no family header: type = (RDMA_NL_NLDEV << 10) + op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/result.h"
#include "linux/netlink.h"

namespace berth::linux::netlink {

// `rdma system set netns exclusive|shared`: in shared mode (the default) every RDMA device
// is usable from every network namespace; in exclusive mode a device belongs to one.
enum class RdmaNetnsMode { kExclusive = 0, kShared = 1 };

struct RdmaDevice {
  uint32_t index = 0;
  std::string name;
};

// Requests.
Message rdma_sys_get(uint32_t seq);   // RDMA_NLDEV_CMD_SYS_GET
Message rdma_dev_dump(uint32_t seq);  // RDMA_NLDEV_CMD_GET, NLM_F_DUMP
Message rdma_dev_set_netns(uint32_t seq, uint32_t index, int netns_fd);  // RDMA_NLDEV_CMD_SET

// Replies.
Result<RdmaNetnsMode> parse_rdma_sys(const nlmsghdr* nlh);
Result<RdmaDevice> parse_rdma_dev(const nlmsghdr* nlh);

// Operations over a NETLINK_RDMA socket. A kernel older than the netns modes (< 5.2) has
// no SYS_GET and shares every device: reported as kShared.
Result<RdmaNetnsMode> rdma_netns_mode(Socket& s);
Result<std::vector<RdmaDevice>> rdma_devices(Socket& s);
Status rdma_move_device(Socket& s, uint32_t index, int netns_fd);

}  // namespace berth::linux::netlink
