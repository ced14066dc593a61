// The netlink layer: exact bytes of every request berth sends (rtnetlink for
// linux.netDevices, RDMA netlink for the exclusive netns mode), the reply walker (ACKs,
// errors with extended-ack text, dumps, interrupted dumps, foreign messages) and the reply
// parsers. The last tests talk to the kernel over NETLINK_ROUTE about `lo` (no root needed).
#include <arpa/inet.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "linux/netlink.h"
#include "linux/netlink_rdma.h"
#include "linux/netlink_route.h"

namespace berth::linux::netlink {
namespace {

Bytes concat(const std::vector<Bytes>& parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes ack(uint32_t seq, int error, const std::string& text = "", bool capped = true) {
  Message m(NLMSG_ERROR, text.empty() ? 0 : (capped ? NLM_F_CAPPED : 0) | NLM_F_ACK_TLVS, seq);
  auto* e = m.put_extra<nlmsgerr>();
  e->error = -error;
  e->msg.nlmsg_len = sizeof(nlmsghdr) + 4;  // the request's header, as the kernel echoes it
  e->msg.nlmsg_seq = seq;
  if (!text.empty() && !capped) {
    uint32_t echoed_payload = 0;  // uncapped: the request's payload follows its header
    m.put_extra(sizeof echoed_payload);
  }
  if (!text.empty()) m.put_strz(NLMSGERR_ATTR_MSG, text);
  return m.bytes();
}

Bytes done(uint32_t seq, int error = 0) {
  Message m(NLMSG_DONE, NLM_F_MULTI, seq);
  *static_cast<int*>(m.put_extra(sizeof(int))) = -error;
  return m.bytes();
}

Bytes link_reply(uint32_t seq, int index, const std::string& name, unsigned flags, uint16_t msg_flags = NLM_F_MULTI) {
  Message m(RTM_NEWLINK, msg_flags, seq);
  auto* ifi = m.put_extra<ifinfomsg>();
  ifi->ifi_index = index;
  ifi->ifi_flags = flags;
  m.put_u32(IFLA_MTU, 1500);
  m.put_strz(IFLA_IFNAME, name);
  return m.bytes();
}

Bytes addr_reply(uint32_t seq, int index, uint8_t family, const std::string& text, uint8_t prefix, uint8_t scope,
                 uint8_t ifa_flags, std::optional<uint32_t> flags_attr) {
  Message m(RTM_NEWADDR, NLM_F_MULTI, seq);
  auto* ifa = m.put_extra<ifaddrmsg>();
  ifa->ifa_family = family;
  ifa->ifa_prefixlen = prefix;
  ifa->ifa_scope = scope;
  ifa->ifa_flags = ifa_flags;
  ifa->ifa_index = static_cast<uint32_t>(index);
  uint8_t raw[16];
  ::inet_pton(family, text.c_str(), raw);
  size_t len = family == AF_INET ? 4 : 16;
  m.put(IFA_ADDRESS, raw, len);
  if (family == AF_INET) m.put(IFA_LOCAL, raw, len);
  m.put_strz(IFA_LABEL, "eth9");
  if (flags_attr) m.put_u32(IFA_FLAGS, *flags_attr);
  return m.bytes();
}

struct Walk {
  Result<bool> result;
  std::vector<uint16_t> types;
};

Walk walk(const Bytes& b, uint32_t seq, uint32_t portid = 0) {
  std::vector<uint16_t> types;
  auto r = walk_replies(b.data(), b.size(), seq, portid, [&](const nlmsghdr* n) -> Status {
    types.push_back(n->nlmsg_type);
    return ok();
  });
  return Walk{std::move(r), types};
}

// --- requests, byte for byte

TEST(NetlinkRequest, LinkMoveAndRename) {
  EXPECT_EQ(hex(link_move(7, 5, 9, "ctr0").bytes()),
            "34 00 00 00 10 00 05 00 07 00 00 00 00 00 00 00 "   // len 52, RTM_NEWLINK, REQUEST|ACK, seq 7
            "00 00 00 00 05 00 00 00 00 00 00 00 00 00 00 00 "   // ifinfomsg: index 5
            "08 00 1c 00 09 00 00 00 "                           // IFLA_NET_NS_FD = 9
            "09 00 03 00 63 74 72 30 00 00 00 00");              // IFLA_IFNAME "ctr0", padded
}

TEST(NetlinkRequest, LinkMoveKeepingTheName) {
  EXPECT_EQ(hex(link_move(1, 12, 3, "").bytes()),
            "28 00 00 00 10 00 05 00 01 00 00 00 00 00 00 00 "
            "00 00 00 00 0c 00 00 00 00 00 00 00 00 00 00 00 "
            "08 00 1c 00 03 00 00 00");
}

TEST(NetlinkRequest, LinkSetUp) {
  EXPECT_EQ(hex(link_set_up(8, 5).bytes()),
            "20 00 00 00 10 00 05 00 08 00 00 00 00 00 00 00 "
            "00 00 00 00 05 00 00 00 01 00 00 00 01 00 00 00");  // ifi_flags = ifi_change = IFF_UP
}

TEST(NetlinkRequest, LinkGetByName) {
  EXPECT_EQ(hex(link_get(1, "veth0").bytes()),
            "2c 00 00 00 12 00 05 00 01 00 00 00 00 00 00 00 "   // RTM_GETLINK
            "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
            "0a 00 03 00 76 65 74 68 30 00 00 00");
}

TEST(NetlinkRequest, Dumps) {
  EXPECT_EQ(hex(addr_dump(2).bytes()),
            "18 00 00 00 16 00 01 03 02 00 00 00 00 00 00 00 "   // RTM_GETADDR, REQUEST|DUMP
            "00 00 00 00 00 00 00 00");                          // every family
  EXPECT_EQ(hex(link_dump(3).bytes()),
            "20 00 00 00 12 00 01 03 03 00 00 00 00 00 00 00 "
            "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
}

TEST(NetlinkRequest, AddressAddKeepsOnlyDescriptiveFlags) {
  Address a;
  a.family = AF_INET;
  a.prefixlen = 24;
  a.scope = RT_SCOPE_UNIVERSE;
  a.flags = IFA_F_PERMANENT | IFA_F_NOPREFIXROUTE | IFA_F_TENTATIVE;
  a.local = {10, 1, 2, 3};
  a.address = {10, 1, 2, 3};
  a.broadcast = {10, 1, 2, 255};
  EXPECT_EQ(hex(addr_add(3, 7, a).bytes()),
            "38 00 00 00 14 00 05 06 03 00 00 00 00 00 00 00 "   // RTM_NEWADDR, REQUEST|ACK|EXCL|CREATE
            "02 18 00 00 07 00 00 00 "                           // AF_INET /24 scope 0, index 7
            "08 00 02 00 0a 01 02 03 "                           // IFA_LOCAL
            "08 00 01 00 0a 01 02 03 "                           // IFA_ADDRESS
            "08 00 04 00 0a 01 02 ff "                           // IFA_BROADCAST
            "08 00 08 00 00 02 00 00");                          // IFA_FLAGS = NOPREFIXROUTE
  a.flags = IFA_F_PERMANENT;
  a.broadcast.clear();
  EXPECT_EQ(addr_add(3, 7, a).bytes().size(), 40u) << "no IFA_FLAGS, no IFA_BROADCAST";
}

TEST(NetlinkRequest, RdmaMessages) {
  EXPECT_EQ(hex(rdma_sys_get(4).bytes()), "10 00 00 00 06 14 05 00 04 00 00 00 00 00 00 00");  // 0x1406
  EXPECT_EQ(hex(rdma_dev_dump(5).bytes()), "10 00 00 00 01 14 01 03 05 00 00 00 00 00 00 00");  // 0x1401 dump
  EXPECT_EQ(hex(rdma_dev_set_netns(6, 3, 9).bytes()),
            "20 00 00 00 02 14 05 00 06 00 00 00 00 00 00 00 "   // 0x1402, REQUEST|ACK
            "08 00 01 00 03 00 00 00 "                           // RDMA_NLDEV_ATTR_DEV_INDEX = 3
            "08 00 44 00 09 00 00 00");                          // RDMA_NLDEV_NET_NS_FD = 9
}

// --- replies

TEST(NetlinkReply, AckEndsTheExchange) {
  auto w = walk(ack(5, 0), 5);
  ASSERT_TRUE(w.result) << w.result.error().message();
  EXPECT_TRUE(*w.result);
}

TEST(NetlinkReply, ErrorCarriesErrnoAndExtendedAck) {
  auto w = walk(ack(5, EOPNOTSUPP, "Device does not support namespace changes"), 5);
  ASSERT_FALSE(w.result);
  EXPECT_EQ(w.result.error().err(), EOPNOTSUPP);
  EXPECT_EQ(w.result.error().message(), "netlink: Device does not support namespace changes: operation not supported");
  auto uncapped = walk(ack(5, EEXIST, "name in use", false), 5);
  ASSERT_FALSE(uncapped.result);
  EXPECT_EQ(uncapped.result.error().message(), "netlink: name in use: file exists");
  auto plain = walk(ack(5, ENODEV), 5);
  ASSERT_FALSE(plain.result);
  EXPECT_EQ(plain.result.error().message(), "netlink: no such device");
}

TEST(NetlinkReply, DumpUntilDone) {
  Bytes first = concat({link_reply(9, 1, "lo", IFF_UP), link_reply(9, 4, "veth0", 0)});
  auto w1 = walk(first, 9);
  ASSERT_TRUE(w1.result);
  EXPECT_FALSE(*w1.result) << "no DONE yet: more datagrams follow";
  EXPECT_EQ(w1.types, (std::vector<uint16_t>{RTM_NEWLINK, RTM_NEWLINK}));
  auto w2 = walk(concat({link_reply(9, 5, "veth1", 0), done(9)}), 9);
  ASSERT_TRUE(w2.result);
  EXPECT_TRUE(*w2.result);
  EXPECT_EQ(w2.types.size(), 1u);
}

TEST(NetlinkReply, DoneWithErrorFailsTheDump) {
  auto w = walk(done(9, ENOBUFS), 9);
  ASSERT_FALSE(w.result);
  EXPECT_EQ(w.result.error().err(), ENOBUFS);
}

TEST(NetlinkReply, InterruptedDumpIsEintr) {
  auto w = walk(link_reply(9, 1, "lo", 0, NLM_F_MULTI | NLM_F_DUMP_INTR), 9);
  ASSERT_FALSE(w.result);
  EXPECT_EQ(w.result.error().err(), EINTR);
}

TEST(NetlinkReply, ForeignMessagesAreSkipped) {
  Bytes other_pid = link_reply(9, 7, "other", 0);
  other_pid[12] = 0x2a;  // nlmsg_pid of another socket
  auto w = walk(concat({link_reply(8, 3, "late", 0), other_pid, ack(9, 0)}), 9, 77);
  ASSERT_TRUE(w.result) << w.result.error().message();
  EXPECT_TRUE(*w.result);
  EXPECT_TRUE(w.types.empty()) << "a stale sequence number and another port id are not ours";
}

TEST(NetlinkReply, TruncatedIsAnError) {
  Bytes b = link_reply(9, 1, "lo", 0);
  b.resize(b.size() - 3);
  auto w = walk(b, 9);
  ASSERT_FALSE(w.result);
  EXPECT_EQ(w.result.error().err(), EBADMSG);
}

TEST(NetlinkReply, CallbackErrorStopsTheWalk) {
  Bytes b = concat({link_reply(9, 1, "lo", 0), done(9)});
  auto r = walk_replies(b.data(), b.size(), 9, 0, [](const nlmsghdr*) -> Status { return Error::generic("stop"); });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "stop");
}

// Found by fuzz_netlink: a length of 2 GiB or more passed libmnl's check as a negative int
// and aligned to 0, so the walk never advanced.
TEST(NetlinkReply, HugeLengthIsTruncatedNotALoop) {
  Bytes b = link_reply(9, 1, "lo", 0);
  Bytes huge = {0xff, 0xff, 0xff, 0xff, 0x10, 0x00, 0x02, 0x00, 0x09, 0, 0, 0, 0, 0, 0, 0};
  huge.resize(32, 0);
  for (uint32_t len : {0xffffffffu, 0xfffffffdu, 0x80000000u}) {
    std::memcpy(huge.data(), &len, 4);
    auto w = walk(concat({b, huge}), 9);
    ASSERT_FALSE(w.result) << len;
    EXPECT_EQ(w.result.error().err(), EBADMSG);
    EXPECT_EQ(w.types, std::vector<uint16_t>{RTM_NEWLINK}) << "the message before it was read";
  }
}

// Found by fuzz_netlink (tests/fuzz/corpus/netlink/regression-error-int-min): the error code
// INT_MIN was negated (undefined behaviour); a code outside errno's range is EBADMSG.
TEST(NetlinkReply, ErrorCodeOutOfRangeIsBadMessage) {
  const uint8_t fuzz[] = {0x44, 0, 0, 0, 0x02, 0, 0, 0x03, 0x09, 0, 0, 0, 0x91, 0, 0, 0, 0, 0, 0, 0x80, 0x8b, 0, 0, 0,
                          0,    0, 0, 0, 0,    0, 0, 0,    0,    0, 0, 0, 0,    0, 1, 0, 0, 0, 0, 0, 0, 0,    0, 0,
                          0x60, 1, 0, 0, 0,    0, 0, 0,    0,    0, 0, 0, 0,    0, 0, 0, 0, 0, 0, 0, 0, 0};
  auto r = walk_replies(fuzz, sizeof fuzz, 9, 0, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err(), EBADMSG);
  for (int code : {INT_MIN, -4096, 5}) {
    Bytes e = ack(9, 0);
    std::memcpy(e.data() + 16, &code, 4);
    auto w = walk(e, 9);
    ASSERT_FALSE(w.result) << code;
    EXPECT_EQ(w.result.error().err(), EBADMSG) << code;
    Bytes d = done(9);
    std::memcpy(d.data() + 16, &code, 4);
    auto wd = walk(d, 9);
    if (code < 0) {
      ASSERT_FALSE(wd.result) << code;
      EXPECT_EQ(wd.result.error().err(), EBADMSG) << code;
    } else {
      EXPECT_TRUE(wd.result) << "DONE with a positive value is a plain end of dump";
    }
  }
  auto w = walk(ack(9, 4095), 9);
  ASSERT_FALSE(w.result);
  EXPECT_EQ(w.result.error().err(), 4095) << "the largest errno is still an errno";
}

// libmnl walks attributes up to the message length rounded up to 4: for a last message
// without its padding that is past the datagram (tests/fuzz/corpus/netlink/
// regression-unpadded-last). An attribute that runs past the message is not read, and the
// datagram is truncated before its message reaches the callback.
TEST(NetlinkParse, AttributePastTheMessageIsIgnored) {
  Bytes b = link_reply(1, 42, "lo", 0);
  ASSERT_EQ(b.size(), 48u);  // header, ifinfomsg, IFLA_MTU, IFLA_IFNAME "lo" (7 bytes, padded)
  b[0] = 47;                 // the message ends one byte into the name's padding...
  b[40] = 8;                 // ...and the name attribute claims that byte too
  b.resize(47);
  auto* exact = new uint8_t[b.size()];
  std::memcpy(exact, b.data(), b.size());
  auto l = parse_link(reinterpret_cast<const nlmsghdr*>(exact));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->index, 42);
  EXPECT_EQ(l->name, "") << "IFLA_IFNAME runs past nlmsg_len";
  auto w = walk(b, 1);
  ASSERT_FALSE(w.result);
  EXPECT_EQ(w.result.error().err(), EBADMSG);
  EXPECT_TRUE(w.types.empty());
  delete[] exact;
}

TEST(NetlinkParse, Link) {
  Bytes b = link_reply(1, 42, "enp59s0f0np0", IFF_UP | IFF_BROADCAST);
  auto l = parse_link(reinterpret_cast<const nlmsghdr*>(b.data()));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->index, 42);
  EXPECT_EQ(l->name, "enp59s0f0np0");
  EXPECT_EQ(l->flags, unsigned(IFF_UP | IFF_BROADCAST));
}

TEST(NetlinkParse, AddressesAndWhichMove) {
  Bytes v4 = addr_reply(1, 4, AF_INET, "10.9.8.7", 24, RT_SCOPE_UNIVERSE, IFA_F_PERMANENT, std::nullopt);
  auto a = parse_address(reinterpret_cast<const nlmsghdr*>(v4.data()));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->index, 4);
  EXPECT_EQ(a->local, (Bytes{10, 9, 8, 7}));
  EXPECT_EQ(address_text(*a), "10.9.8.7/24");
  EXPECT_TRUE(moves_with_device(*a));
  // IFA_FLAGS (32 bits) wins over the 8-bit ifa_flags.
  Bytes v6 = addr_reply(1, 4, AF_INET6, "fd00::7", 64, RT_SCOPE_UNIVERSE, 0, IFA_F_PERMANENT | IFA_F_NOPREFIXROUTE);
  auto b = parse_address(reinterpret_cast<const nlmsghdr*>(v6.data()));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->flags, uint32_t(IFA_F_PERMANENT | IFA_F_NOPREFIXROUTE));
  EXPECT_TRUE(b->local.empty());
  EXPECT_EQ(address_text(*b), "fd00::7/64");
  EXPECT_TRUE(moves_with_device(*b));
  Bytes link_local = addr_reply(1, 4, AF_INET6, "fe80::1", 64, RT_SCOPE_LINK, IFA_F_PERMANENT, std::nullopt);
  EXPECT_FALSE(moves_with_device(*parse_address(reinterpret_cast<const nlmsghdr*>(link_local.data()))));
  Bytes dynamic = addr_reply(1, 4, AF_INET6, "2001:db8::5", 64, RT_SCOPE_UNIVERSE, 0, 0u);  // SLAAC: not permanent
  EXPECT_FALSE(moves_with_device(*parse_address(reinterpret_cast<const nlmsghdr*>(dynamic.data()))));
}

// fuzz_netlink's round trip (an address read is re-added by addr_add) on a crafted reply:
// an IFA_ADDRESS of 1100 bytes overflowed addr_add's 1 KiB request buffer. Addresses are
// at most 16 bytes (tests/fuzz/corpus/netlink/regression-address-1100-bytes).
TEST(NetlinkParse, OversizedAddressIsBadMessage) {
  for (uint16_t len : {17, 1100}) {
    // Built by hand: a Message has no room for this either.
    uint16_t attr_len = static_cast<uint16_t>(sizeof(nlattr) + len);
    Bytes b(sizeof(nlmsghdr) + sizeof(ifaddrmsg) + ((attr_len + 3u) & ~3u), 0);
    auto* nlh = reinterpret_cast<nlmsghdr*>(b.data());
    nlh->nlmsg_len = static_cast<uint32_t>(b.size());
    nlh->nlmsg_type = RTM_NEWADDR;
    auto* ifa = reinterpret_cast<ifaddrmsg*>(b.data() + sizeof(nlmsghdr));
    ifa->ifa_family = AF_INET6;
    ifa->ifa_index = 3;
    auto* attr = reinterpret_cast<nlattr*>(b.data() + sizeof(nlmsghdr) + sizeof(ifaddrmsg));
    attr->nla_len = attr_len;
    attr->nla_type = IFA_ADDRESS;
    auto a = parse_address(nlh);
    ASSERT_FALSE(a) << len;
    EXPECT_EQ(a.error().err(), EBADMSG);
  }
  Bytes v6 = addr_reply(1, 4, AF_INET6, "fd00::7", 64, RT_SCOPE_UNIVERSE, 0, IFA_F_PERMANENT);
  auto a = parse_address(reinterpret_cast<const nlmsghdr*>(v6.data()));
  ASSERT_TRUE(a);
  EXPECT_EQ(addr_add(2, 4, *a).bytes().size(), 44u) << "16 bytes fit: header, ifaddrmsg, IFA_ADDRESS";
}

TEST(NetlinkParse, RdmaSystemAndDevice) {
  for (uint8_t mode : {0, 1}) {
    Message m(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET), 0, 1);
    m.put_u8(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, mode);
    m.put_u8(RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1);
    auto r = parse_rdma_sys(m.header());
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, mode == 0 ? RdmaNetnsMode::kExclusive : RdmaNetnsMode::kShared);
  }
  Message none(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET), 0, 1);
  EXPECT_FALSE(parse_rdma_sys(none.header()));
  Message dev(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_MULTI, 1);
  dev.put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  dev.put_strz(RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  dev.put_u8(RDMA_NLDEV_ATTR_DEV_NODE_TYPE, 1);
  auto d = parse_rdma_dev(dev.header());
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->index, 3u);
  EXPECT_EQ(d->name, "rxe0");
  Message nameless(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_MULTI, 1);
  nameless.put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  EXPECT_FALSE(parse_rdma_dev(nameless.header()));
}

// --- the kernel, over NETLINK_ROUTE in our own namespace

TEST(NetlinkKernel, FindsLoopback) {
  auto s = Socket::open(NETLINK_ROUTE);
  ASSERT_TRUE(s) << s.error().message();
  auto lo = find_link(*s, "lo");
  ASSERT_TRUE(lo) << lo.error().message();
  EXPECT_EQ(lo->name, "lo");
  EXPECT_GT(lo->index, 0);
  auto links = list_links(*s);
  ASSERT_TRUE(links) << links.error().message();
  EXPECT_TRUE(std::any_of(links->begin(), links->end(), [&](const Link& l) { return l.index == lo->index; }));
  auto missing = find_link(*s, "berthnosuch0");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().err(), ENODEV);
}

TEST(NetlinkKernel, LoopbackAddressesDoNotMove) {
  auto s = Socket::open(NETLINK_ROUTE);
  ASSERT_TRUE(s) << s.error().message();
  auto lo = find_link(*s, "lo");
  ASSERT_TRUE(lo);
  auto addrs = list_addresses(*s, lo->index);
  ASSERT_TRUE(addrs) << addrs.error().message();
  ASSERT_FALSE(addrs->empty()) << "lo has 127.0.0.1/8 (and ::1/128) once up";
  for (const auto& a : *addrs) {
    EXPECT_EQ(a.index, lo->index);
    EXPECT_FALSE(moves_with_device(a)) << address_text(a) << ": host scope stays behind";
  }
}

}  // namespace
}  // namespace berth::linux::netlink
