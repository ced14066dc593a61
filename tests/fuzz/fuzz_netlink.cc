// libFuzzer target: netlink replies as berth receives them (one datagram). The reply walker
// goes through the messages; every data message goes to every reply parser (rtnetlink
// links and addresses, RDMA netlink system and device attributes), every message to the
// extended-ack reader. What a parser accepts is built again with the request builders and
// must parse to the same values: in particular an address read from a reply can always be
// re-added (addr_add) as linux.netDevices does when it moves a device. Nothing is sent.
#include <errno.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "linux/netlink.h"
#include "linux/netlink_rdma.h"
#include "linux/netlink_route.h"

namespace {

using namespace berth;
using namespace berth::linux::netlink;

void check(bool ok) {
  if (!ok) std::abort();
}

void link(const nlmsghdr* nlh) {
  auto l = parse_link(nlh);
  if (!l || l->name.size() > 200) return;
  Message m(RTM_NEWLINK, 0, 1);
  auto* ifi = m.put_extra<ifinfomsg>();
  ifi->ifi_index = l->index;
  ifi->ifi_flags = l->flags;
  if (!l->name.empty()) m.put_strz(IFLA_IFNAME, l->name);
  auto again = parse_link(m.header());
  check(again && again->index == l->index && again->flags == l->flags && again->name == l->name);
}

void address(const nlmsghdr* nlh) {
  auto a = parse_address(nlh);
  if (!a) return;
  (void)address_text(*a);
  (void)moves_with_device(*a);
  Message m = addr_add(1, a->index, *a);
  auto again = parse_address(m.header());
  check(again.ok());
  check(again->index == a->index && again->family == a->family && again->prefixlen == a->prefixlen &&
        again->scope == a->scope && again->local == a->local && again->address == a->address &&
        again->broadcast == a->broadcast);
  check((again->flags & ~a->flags) == 0);  // only flags that describe the address are re-sent
}

void rdma(const nlmsghdr* nlh) {
  if (auto mode = parse_rdma_sys(nlh)) {
    Message m(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET), 0, 1);
    m.put_u8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, *mode == RdmaNetnsMode::kExclusive ? 0 : 1);
    auto again = parse_rdma_sys(m.header());
    check(again && *again == *mode);
  }
  auto d = parse_rdma_dev(nlh);
  if (!d || d->name.size() > 200) return;
  Message m(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_MULTI, 1);
  m.put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
  m.put_strz(RDMA_NLDEV_ATTR_DEV_NAME, d->name);
  auto again = parse_rdma_dev(m.header());
  check(again && again->index == d->index && again->name == d->name);
}

Status each(const nlmsghdr* nlh) {
  check(nlh->nlmsg_len >= sizeof(nlmsghdr));
  link(nlh);
  address(nlh);
  rdma(nlh);
  return ok();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size copy: reading past the datagram is an ASan report, not stale bytes.
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size ? size : 1]);
  if (size) std::memcpy(buf.get(), data, size);

  // Every message that fits in the datagram: the extended-ack reader on each.
  for (size_t at = 0; size - at >= sizeof(nlmsghdr);) {
    const auto* nlh = reinterpret_cast<const nlmsghdr*>(buf.get() + at);
    if (nlh->nlmsg_len < sizeof(nlmsghdr) || nlh->nlmsg_len > size - at) break;
    (void)ack_text(nlh);
    at += NLMSG_ALIGN(static_cast<size_t>(nlh->nlmsg_len));
    if (at > size) break;
  }

  // As replies to any request (sequence 0 and port 0 accept every message), then as replies
  // to the first message's sequence and port.
  auto r = walk_replies(buf.get(), size, 0, 0, each);
  if (!r) check(r.error().err() != 0);
  if (size >= sizeof(nlmsghdr)) {
    const auto* first = reinterpret_cast<const nlmsghdr*>(buf.get());
    (void)walk_replies(buf.get(), size, first->nlmsg_seq, first->nlmsg_pid, each);
  }
  return 0;
}
