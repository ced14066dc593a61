// rtnetlink requests and replies for linux.netDevices (see netlink_route.h).
#include "linux/netlink_route.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

namespace berth::linux::netlink {
namespace {

constexpr uint16_t kAck = NLM_F_REQUEST | NLM_F_ACK;

// Address flags a user may set and that describe the address rather than its state
// (tentative, deprecated... are the kernel's to decide again in the new namespace).
constexpr uint32_t kKeptFlags =
    IFA_F_NODAD | IFA_F_HOMEADDRESS | IFA_F_MANAGETEMPADDR | IFA_F_NOPREFIXROUTE | IFA_F_MCAUTOJOIN;

constexpr size_t kMaxAddress = 16;  // IPv6

Bytes payload_of(const nlattr* a) {
  const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(a));
  return Bytes(p, p + mnl_attr_get_payload_len(a));
}

std::string ifname_of(const nlattr* a) {
  if (!a || mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0) return "";
  return mnl_attr_get_str(a);
}

}  // namespace

Message link_get(uint32_t seq, const std::string& name) {
  Message m(RTM_GETLINK, kAck, seq);
  m.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
  m.put_strz(IFLA_IFNAME, name);
  return m;
}

Message link_dump(uint32_t seq) {
  Message m(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, seq);
  m.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
  return m;
}

Message link_move(uint32_t seq, int index, int netns_fd, const std::string& new_name) {
  Message m(RTM_NEWLINK, kAck, seq);
  auto* ifi = m.put_extra<ifinfomsg>();
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = index;
  m.put_u32(IFLA_NET_NS_FD, static_cast<uint32_t>(netns_fd));
  if (!new_name.empty()) m.put_strz(IFLA_IFNAME, new_name);
  return m;
}

Message link_set_up(uint32_t seq, int index) {
  Message m(RTM_NEWLINK, kAck, seq);
  auto* ifi = m.put_extra<ifinfomsg>();
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = index;
  ifi->ifi_flags = IFF_UP;
  ifi->ifi_change = IFF_UP;
  return m;
}

Message addr_dump(uint32_t seq) {
  Message m(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, seq);
  m.put_extra<ifaddrmsg>()->ifa_family = AF_UNSPEC;
  return m;
}

Message addr_add(uint32_t seq, int index, const Address& a) {
  Message m(RTM_NEWADDR, kAck | NLM_F_CREATE | NLM_F_EXCL, seq);
  auto* ifa = m.put_extra<ifaddrmsg>();
  ifa->ifa_family = a.family;
  ifa->ifa_prefixlen = a.prefixlen;
  ifa->ifa_scope = a.scope;
  ifa->ifa_index = static_cast<uint32_t>(index);
  if (!a.local.empty()) m.put(IFA_LOCAL, a.local.data(), a.local.size());
  if (!a.address.empty()) m.put(IFA_ADDRESS, a.address.data(), a.address.size());
  if (!a.broadcast.empty()) m.put(IFA_BROADCAST, a.broadcast.data(), a.broadcast.size());
  if (uint32_t f = a.flags & kKeptFlags; f) m.put_u32(IFA_FLAGS, f);
  return m;
}

Result<Link> parse_link(const nlmsghdr* nlh) {
  if (mnl_nlmsg_get_payload_len(nlh) < sizeof(ifinfomsg)) return Error::sys(EBADMSG, "netlink: short link message");
  const auto* ifi = static_cast<const ifinfomsg*>(mnl_nlmsg_get_payload(nlh));
  auto attrs = attributes(nlh, sizeof(ifinfomsg), IFLA_IFNAME);
  Link l;
  l.index = ifi->ifi_index;
  l.flags = ifi->ifi_flags;
  l.name = ifname_of(attrs[IFLA_IFNAME]);
  return l;
}

Result<Address> parse_address(const nlmsghdr* nlh) {
  if (mnl_nlmsg_get_payload_len(nlh) < sizeof(ifaddrmsg)) return Error::sys(EBADMSG, "netlink: short address message");
  const auto* ifa = static_cast<const ifaddrmsg*>(mnl_nlmsg_get_payload(nlh));
  auto attrs = attributes(nlh, sizeof(ifaddrmsg), IFA_FLAGS);
  Address a;
  a.index = static_cast<int>(ifa->ifa_index);
  a.family = ifa->ifa_family;
  a.prefixlen = ifa->ifa_prefixlen;
  a.scope = ifa->ifa_scope;
  // ifa_flags holds only the low 8 bits; IFA_FLAGS (when sent) has them all.
  a.flags = ifa->ifa_flags;
  if (const nlattr* f = attrs[IFA_FLAGS]; f && mnl_attr_validate(f, MNL_TYPE_U32) == 0) a.flags = mnl_attr_get_u32(f);
  // At most an IPv6 address: what is read here is sent back by addr_add, whose request
  // has room for a few addresses, not for kilobytes.
  for (uint16_t type : {IFA_LOCAL, IFA_ADDRESS, IFA_BROADCAST})
    if (attrs[type] && mnl_attr_get_payload_len(attrs[type]) > kMaxAddress)
      return Error::sys(EBADMSG, "netlink: address attribute of " + std::to_string(mnl_attr_get_payload_len(attrs[type])) +
                                     " bytes");
  if (attrs[IFA_LOCAL]) a.local = payload_of(attrs[IFA_LOCAL]);
  if (attrs[IFA_ADDRESS]) a.address = payload_of(attrs[IFA_ADDRESS]);
  if (attrs[IFA_BROADCAST]) a.broadcast = payload_of(attrs[IFA_BROADCAST]);
  return a;
}

bool moves_with_device(const Address& a) {
  return (a.flags & IFA_F_PERMANENT) && a.scope == RT_SCOPE_UNIVERSE;
}

std::string address_text(const Address& a) {
  const Bytes& b = a.local.empty() ? a.address : a.local;
  char text[INET6_ADDRSTRLEN] = "?";
  if ((a.family == AF_INET && b.size() == 4) || (a.family == AF_INET6 && b.size() == 16))
    ::inet_ntop(a.family, b.data(), text, sizeof text);
  return std::string(text) + "/" + std::to_string(a.prefixlen);
}

Result<Link> find_link(Socket& s, const std::string& name) {
  Link found;
  BERTH_TRY(s.request(link_get(s.next_seq(), name), [&](const nlmsghdr* nlh) -> Status {
    if (nlh->nlmsg_type != RTM_NEWLINK) return ok();
    BERTH_ASSIGN(found, parse_link(nlh));
    return ok();
  }));
  if (found.index == 0) return Error::sys(ENODEV, "netlink: no link in the reply");
  return found;
}

Result<std::vector<Link>> list_links(Socket& s) {
  std::vector<Link> out;
  BERTH_TRY(s.dump([](uint32_t seq) { return link_dump(seq); },
                   [&](const nlmsghdr* nlh) -> Status {
                     if (nlh->nlmsg_type != RTM_NEWLINK) return ok();
                     BERTH_ASSIGN(Link l, parse_link(nlh));
                     out.push_back(std::move(l));
                     return ok();
                   },
                   [&] { out.clear(); }));
  return out;
}

Result<std::vector<Address>> list_addresses(Socket& s, int index) {
  std::vector<Address> out;
  BERTH_TRY(s.dump([](uint32_t seq) { return addr_dump(seq); },
                   [&](const nlmsghdr* nlh) -> Status {
                     if (nlh->nlmsg_type != RTM_NEWADDR) return ok();
                     BERTH_ASSIGN(Address a, parse_address(nlh));
                     if (a.index == index) out.push_back(std::move(a));
                     return ok();
                   },
                   [&] { out.clear(); }));
  return out;
}

Status move_link(Socket& s, int index, int netns_fd, const std::string& new_name) {
  return s.request(link_move(s.next_seq(), index, netns_fd, new_name));
}

Status add_address(Socket& s, int index, const Address& a) { return s.request(addr_add(s.next_seq(), index, a)); }

Status set_link_up(Socket& s, int index) { return s.request(link_set_up(s.next_seq(), index)); }

}  // namespace berth::linux::netlink
