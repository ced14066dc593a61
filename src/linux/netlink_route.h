// rtnetlink (NETLINK_ROUTE) requests and replies used by linux.netDevices: find a link,
// move (and rename) it into another network namespace, read and re-add its addresses, set
// it up. Builders take the sequence number so that tests compare exact bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/result.h"
#include "linux/netlink.h"

namespace berth::linux::netlink {

struct Link {
  int index = 0;
  std::string name;
  unsigned flags = 0;  // IFF_*
};

struct Address {
  int index = 0;        // ifa_index
  uint8_t family = 0;   // AF_INET, AF_INET6
  uint8_t prefixlen = 0;
  uint8_t scope = 0;    // RT_SCOPE_*
  uint32_t flags = 0;   // IFA_F_* (IFA_FLAGS when present, else ifa_flags)
  Bytes local;          // IFA_LOCAL (IPv4: the address itself)
  Bytes address;        // IFA_ADDRESS (IPv4: the peer on point-to-point links)
  Bytes broadcast;      // IFA_BROADCAST
};

// Requests.
Message link_get(uint32_t seq, const std::string& name);  // RTM_GETLINK by IFLA_IFNAME
Message link_dump(uint32_t seq);                           // RTM_GETLINK, NLM_F_DUMP
// RTM_NEWLINK on `index`: IFLA_NET_NS_FD, and IFLA_IFNAME when `new_name` is set. The kernel
// moves and renames in one step, so the name never clashes on the way; a name ending in a
// "%d" template is completed by the kernel inside the namespace.
Message link_move(uint32_t seq, int index, int netns_fd, const std::string& new_name);
Message link_set_up(uint32_t seq, int index);              // RTM_NEWLINK IFF_UP
Message addr_dump(uint32_t seq);                           // RTM_GETADDR, every family
Message addr_add(uint32_t seq, int index, const Address& a);  // RTM_NEWADDR, CREATE|EXCL

// Replies.
Result<Link> parse_link(const nlmsghdr* nlh);
Result<Address> parse_address(const nlmsghdr* nlh);
// runtime-spec 1.3: only permanent (IFA_F_PERMANENT) addresses of global scope
// (RT_SCOPE_UNIVERSE) move with the device; dynamic and link-local ones belong to the old
// namespace's context.
bool moves_with_device(const Address& a);
std::string address_text(const Address& a);  // "10.1.2.3/24", "fd00::1/64"

// Operations over a NETLINK_ROUTE socket.
Result<Link> find_link(Socket& s, const std::string& name);  // ENODEV when absent
Result<std::vector<Link>> list_links(Socket& s);
Result<std::vector<Address>> list_addresses(Socket& s, int index);
Status move_link(Socket& s, int index, int netns_fd, const std::string& new_name);
Status add_address(Socket& s, int index, const Address& a);
Status set_link_up(Socket& s, int index);

}  // namespace berth::linux::netlink
