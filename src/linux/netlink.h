// A small netlink layer over libmnl, shared by rtnetlink (linux.netDevices, netlink_route.h)
// and RDMA netlink (netlink_rdma.h): requests built as bytes (so unit tests compare them
// byte for byte), replies walked by one function (so tests feed it crafted replies), and a
// socket that can be created inside another network namespace.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "berth/result.h"

struct mnl_socket;

namespace berth::linux::netlink {

using Bytes = std::vector<uint8_t>;

// One request under construction; libmnl lays out the header, the family header and the
// attributes (4-byte aligned) in a fixed buffer.
class Message {
 public:
  Message(uint16_t type, uint16_t flags, uint32_t seq);
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  Message(Message&&) = default;

  // The family header (ifinfomsg, ifaddrmsg...), zeroed, right after the netlink header.
  void* put_extra(size_t size);
  template <class T> T* put_extra() { return static_cast<T*>(put_extra(sizeof(T))); }
  void put_u8(uint16_t type, uint8_t v);
  void put_u32(uint16_t type, uint32_t v);
  void put_strz(uint16_t type, const std::string& s);
  void put(uint16_t type, const void* data, size_t len);

  const nlmsghdr* header() const;
  uint32_t seq() const { return header()->nlmsg_seq; }
  Bytes bytes() const;

 private:
  std::unique_ptr<uint8_t[]> buf_;
};

// Called with each data message of a reply (not NLMSG_ERROR/DONE).
using OnMessage = std::function<Status(const nlmsghdr*)>;

// Walks one datagram of replies to (seq, portid). Data messages go to `on_message`; returns
// true once the exchange is complete (an ACK or NLMSG_DONE), false when more datagrams
// follow. An NLMSG_ERROR with an error, or a DONE carrying one, becomes an Error with that
// errno and the kernel's extended-ack text when it sent one. NLM_F_DUMP_INTR on a dump
// message is reported as EINTR (the caller repeats the dump).
Result<bool> walk_replies(const void* buf, size_t len, uint32_t seq, uint32_t portid, const OnMessage& on_message);

// The kernel's extended-ack text of an NLMSG_ERROR message ("" when none).
std::string ack_text(const nlmsghdr* error_message);

class Socket {
 public:
  // A socket of `bus` (NETLINK_ROUTE, NETLINK_RDMA) in the caller's network namespace.
  static Result<Socket> open(int bus);
  // A socket of `bus` created inside the network namespace `netns_fd`: a socket belongs to
  // the namespace it was created in, so a short-lived thread enters it (setns affects
  // only the calling thread) and creates the socket there; berth's own thread never moves.
  static Result<Socket> open_in(int bus, int netns_fd);

  Socket(Socket&&) noexcept;
  Socket& operator=(Socket&&) noexcept;
  ~Socket();

  uint32_t next_seq() { return ++seq_; }
  // Sends one request and reads replies until its ACK or DONE; data messages go to `on`.
  Status request(const Message& m, const OnMessage& on = {});
  // request() for a dump, repeated (up to 3 times) when the kernel flags it interrupted:
  // `restart` is called before each repetition to forget partial results.
  Status dump(const std::function<Message(uint32_t seq)>& make, const OnMessage& on,
              const std::function<void()>& restart);

 private:
  explicit Socket(mnl_socket* nl);
  static Result<Socket> bind(mnl_socket* nl);
  mnl_socket* nl_ = nullptr;
  uint32_t portid_ = 0;
  uint32_t seq_ = 0;
};

// Parses the attributes of `nlh` after a family header of `offset` bytes into a table
// indexed by type (types above `max_type` are ignored).
std::vector<const nlattr*> attributes(const nlmsghdr* nlh, size_t offset, uint16_t max_type);

// Hex text of bytes ("10 00 00 00 ..."), for tests and debug output.
std::string hex(const Bytes& b);

}  // namespace berth::linux::netlink
