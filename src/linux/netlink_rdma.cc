// RDMA netlink requests and replies: netns mode, device dump, device move (netlink_rdma.h).
#include "linux/netlink_rdma.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <optional>

namespace berth::linux::netlink {
namespace {

constexpr uint16_t type_of(int op) { return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)); }

bool is_reply(const nlmsghdr* nlh, int op) { return nlh->nlmsg_type == type_of(op); }

}  // namespace

Message rdma_sys_get(uint32_t seq) { return Message(type_of(RDMA_NLDEV_CMD_SYS_GET), NLM_F_REQUEST | NLM_F_ACK, seq); }

Message rdma_dev_dump(uint32_t seq) { return Message(type_of(RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_DUMP, seq); }

Message rdma_dev_set_netns(uint32_t seq, uint32_t index, int netns_fd) {
  Message m(type_of(RDMA_NLDEV_CMD_SET), NLM_F_REQUEST | NLM_F_ACK, seq);
  m.put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, index);
  m.put_u32(RDMA_NLDEV_NET_NS_FD, static_cast<uint32_t>(netns_fd));
  return m;
}

Result<RdmaNetnsMode> parse_rdma_sys(const nlmsghdr* nlh) {
  auto attrs = attributes(nlh, 0, RDMA_NLDEV_SYS_ATTR_NETNS_MODE);
  const nlattr* mode = attrs[RDMA_NLDEV_SYS_ATTR_NETNS_MODE];
  if (!mode || mnl_attr_validate(mode, MNL_TYPE_U8) < 0)
    return Error::sys(EBADMSG, "rdma netlink: no netns mode in the system attributes");
  return mnl_attr_get_u8(mode) == 0 ? RdmaNetnsMode::kExclusive : RdmaNetnsMode::kShared;
}

Result<RdmaDevice> parse_rdma_dev(const nlmsghdr* nlh) {
  auto attrs = attributes(nlh, 0, RDMA_NLDEV_ATTR_DEV_NAME);
  const nlattr* index = attrs[RDMA_NLDEV_ATTR_DEV_INDEX];
  const nlattr* name = attrs[RDMA_NLDEV_ATTR_DEV_NAME];
  if (!index || mnl_attr_validate(index, MNL_TYPE_U32) < 0 || !name || mnl_attr_validate(name, MNL_TYPE_NUL_STRING) < 0)
    return Error::sys(EBADMSG, "rdma netlink: device without index or name");
  return RdmaDevice{mnl_attr_get_u32(index), mnl_attr_get_str(name)};
}

Result<RdmaNetnsMode> rdma_netns_mode(Socket& s) {
  std::optional<RdmaNetnsMode> mode;
  auto st = s.request(rdma_sys_get(s.next_seq()), [&](const nlmsghdr* nlh) -> Status {
    if (!is_reply(nlh, RDMA_NLDEV_CMD_SYS_GET)) return ok();
    BERTH_ASSIGN(mode, parse_rdma_sys(nlh));
    return ok();
  });
  if (!st) {
    // Unknown command on kernels before 5.2: they only have the shared behaviour.
    if (st.error().err() == EOPNOTSUPP || st.error().err() == EINVAL) return RdmaNetnsMode::kShared;
    return std::move(st).error().context("read the rdma netns mode");
  }
  if (!mode) return Error::sys(EBADMSG, "read the rdma netns mode: no reply");
  return *mode;
}

Result<std::vector<RdmaDevice>> rdma_devices(Socket& s) {
  std::vector<RdmaDevice> out;
  BERTH_TRY(s.dump([](uint32_t seq) { return rdma_dev_dump(seq); },
                   [&](const nlmsghdr* nlh) -> Status {
                     if (!is_reply(nlh, RDMA_NLDEV_CMD_GET)) return ok();
                     BERTH_ASSIGN(RdmaDevice d, parse_rdma_dev(nlh));
                     out.push_back(std::move(d));
                     return ok();
                   },
                   [&] { out.clear(); })
                .context("list rdma devices"));
  return out;
}

Status rdma_move_device(Socket& s, uint32_t index, int netns_fd) {
  return s.request(rdma_dev_set_netns(s.next_seq(), index, netns_fd));
}

}  // namespace berth::linux::netlink
