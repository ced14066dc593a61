// The libmnl netlink layer (see netlink.h): request bytes, the reply walker with extended
// acks, and sockets in the caller's or another network namespace.
#include "linux/netlink.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>

#include <cstdio>
#include <thread>

namespace berth::linux::netlink {
namespace {

constexpr size_t kRequestSize = 1024;  // our requests are < 200 bytes
// Dumps arrive in datagrams of up to 32 KiB: a smaller buffer would truncate them.
constexpr size_t kReceiveSize = 64 * 1024;

// Netlink's 4-byte alignment, in size_t: NLMSG_ALIGN and MNL_ALIGN compute in 32 bits and
// wrap a length near 4 GiB to 0.
constexpr size_t align4(size_t len) { return (len + 3) & ~size_t{3}; }

}  // namespace

Message::Message(uint16_t type, uint16_t flags, uint32_t seq) : buf_(new uint8_t[kRequestSize]()) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf_.get());
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = seq;
}

const nlmsghdr* Message::header() const { return reinterpret_cast<const nlmsghdr*>(buf_.get()); }

void* Message::put_extra(size_t size) { return mnl_nlmsg_put_extra_header(reinterpret_cast<nlmsghdr*>(buf_.get()), size); }
void Message::put_u8(uint16_t type, uint8_t v) { mnl_attr_put_u8(reinterpret_cast<nlmsghdr*>(buf_.get()), type, v); }
void Message::put_u32(uint16_t type, uint32_t v) { mnl_attr_put_u32(reinterpret_cast<nlmsghdr*>(buf_.get()), type, v); }
void Message::put_strz(uint16_t type, const std::string& s) {
  mnl_attr_put_strz(reinterpret_cast<nlmsghdr*>(buf_.get()), type, s.c_str());
}
void Message::put(uint16_t type, const void* data, size_t len) {
  mnl_attr_put(reinterpret_cast<nlmsghdr*>(buf_.get()), type, len, data);
}

Bytes Message::bytes() const { return Bytes(buf_.get(), buf_.get() + header()->nlmsg_len); }

std::vector<const nlattr*> attributes(const nlmsghdr* nlh, size_t offset, uint16_t max_type) {
  std::vector<const nlattr*> table(max_type + 1u, nullptr);
  // Walked here rather than by mnl_attr_parse, which reads up to the message length
  // rounded up to 4: past the datagram when its last message lacks the padding.
  const auto* base = reinterpret_cast<const uint8_t*>(nlh);
  size_t end = nlh->nlmsg_len;
  for (size_t at = NLMSG_HDRLEN + align4(offset); at <= end && end - at >= sizeof(nlattr);) {
    const auto* a = reinterpret_cast<const nlattr*>(base + at);
    if (a->nla_len < sizeof(nlattr) || a->nla_len > end - at) break;
    uint16_t type = mnl_attr_get_type(a);
    if (type <= max_type) table[type] = a;
    at += align4(a->nla_len);
  }
  return table;
}

std::string ack_text(const nlmsghdr* nlh) {
  if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS)) return "";
  if (mnl_nlmsg_get_payload_len(nlh) < sizeof(nlmsgerr)) return "";
  const auto* err = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(nlh));
  // Without NLM_F_CAPPED the kernel echoes the whole request before the TLVs.
  size_t offset = (nlh->nlmsg_flags & NLM_F_CAPPED) ? sizeof(nlmsgerr)
                                                    : sizeof(int) + err->msg.nlmsg_len;
  auto table = attributes(nlh, offset, NLMSGERR_ATTR_MSG);
  const nlattr* msg = table[NLMSGERR_ATTR_MSG];
  if (!msg || mnl_attr_validate(msg, MNL_TYPE_NUL_STRING) < 0) return "";
  return mnl_attr_get_str(msg);
}

namespace {

// The kernel sends -errno. A value outside errno's range (the kernel's MAX_ERRNO is 4095)
// is a bad message, INT_MIN included, whose negation would overflow.
int errno_of(int negative) { return negative < 0 && negative >= -4095 ? -negative : EBADMSG; }

Error error_of(int err, const nlmsghdr* nlh) {
  std::string text = ack_text(nlh);
  return Error::sys(err, text.empty() ? "netlink" : "netlink: " + text);
}

}  // namespace

Result<bool> walk_replies(const void* buf, size_t len, uint32_t seq, uint32_t portid, const OnMessage& on_message) {
  // Walked here rather than with mnl_nlmsg_ok/next: they take a length of 2 GiB or more
  // as negative, accept it, and then never advance.
  const auto* at = static_cast<const uint8_t*>(buf);
  size_t left = len;
  while (left >= sizeof(nlmsghdr)) {
    const auto* nlh = reinterpret_cast<const nlmsghdr*>(at);
    // A message longer than what is left, its padding included, ends the walk: truncated.
    size_t step = align4(nlh->nlmsg_len);
    if (nlh->nlmsg_len < sizeof(nlmsghdr) || step > left) break;
    at += step;
    left -= step;
    // Someone else's message (a late reply to an earlier request) is not ours to read.
    if (!mnl_nlmsg_seq_ok(nlh, seq) || !mnl_nlmsg_portid_ok(nlh, portid)) continue;
    if (nlh->nlmsg_type == NLMSG_ERROR) {
      if (mnl_nlmsg_get_payload_len(nlh) < sizeof(nlmsgerr)) return Error::sys(EBADMSG, "netlink: short error message");
      const auto* err = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(nlh));
      if (err->error == 0) return true;  // the ACK
      return error_of(errno_of(err->error), nlh);
    }
    if (nlh->nlmsg_type == NLMSG_DONE) {
      // A dump that failed half-way ends with DONE carrying the negative errno.
      if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int)) {
        int e = *static_cast<const int*>(mnl_nlmsg_get_payload(nlh));
        if (e < 0) return Error::sys(errno_of(e), "netlink dump");
      }
      return true;
    }
    if (nlh->nlmsg_type == NLMSG_NOOP || nlh->nlmsg_type == NLMSG_OVERRUN) continue;
    if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) return Error::sys(EINTR, "netlink: dump interrupted");
    if (on_message) BERTH_TRY(on_message(nlh));
  }
  if (left != 0) return Error::sys(EBADMSG, "netlink: truncated reply");
  return false;
}

Socket::Socket(mnl_socket* nl) : nl_(nl) {}
Socket::Socket(Socket&& o) noexcept : nl_(std::exchange(o.nl_, nullptr)), portid_(o.portid_), seq_(o.seq_) {}
Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    if (nl_) mnl_socket_close(nl_);
    nl_ = std::exchange(o.nl_, nullptr);
    portid_ = o.portid_;
    seq_ = o.seq_;
  }
  return *this;
}
Socket::~Socket() {
  if (nl_) mnl_socket_close(nl_);
}

Result<Socket> Socket::bind(mnl_socket* nl) {
  Socket s(nl);
  if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) return Error::sys(errno, "bind netlink socket");
  s.portid_ = mnl_socket_get_portid(nl);
  // Extended acks carry the kernel's reason ("Device does not support namespace
  // changes"); capped acks do not echo our request back. Both are best effort.
  int on = 1;
  mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &on, sizeof on);
  mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &on, sizeof on);
  return s;
}

Result<Socket> Socket::open(int bus) {
  mnl_socket* nl = mnl_socket_open2(bus, SOCK_CLOEXEC);
  if (!nl) return Error::sys(errno, "open netlink socket (bus " + std::to_string(bus) + ")");
  return bind(nl);
}

Result<Socket> Socket::open_in(int bus, int netns_fd) {
  int fd = -1, err = 0;
  std::thread t([&] {
    if (::setns(netns_fd, CLONE_NEWNET) < 0) {
      err = errno;
      return;
    }
    fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, bus);
    if (fd < 0) err = errno;
  });
  t.join();
  if (err) return Error::sys(err, "open netlink socket in the container network namespace");
  mnl_socket* nl = mnl_socket_fdopen(fd);
  if (!nl) {
    int e = errno;
    ::close(fd);
    return Error::sys(e, "open netlink socket in the container network namespace");
  }
  return bind(nl);
}

Status Socket::request(const Message& m, const OnMessage& on) {
  if (mnl_socket_sendto(nl_, m.header(), m.header()->nlmsg_len) < 0) return Error::sys(errno, "netlink send");
  std::unique_ptr<uint8_t[]> buf(new uint8_t[kReceiveSize]);
  while (true) {
    ssize_t n = mnl_socket_recvfrom(nl_, buf.get(), kReceiveSize);
    if (n < 0) return Error::sys(errno, "netlink receive");
    BERTH_ASSIGN(bool done, walk_replies(buf.get(), static_cast<size_t>(n), m.seq(), portid_, on));
    if (done) return ok();
  }
}

Status Socket::dump(const std::function<Message(uint32_t)>& make, const OnMessage& on,
                    const std::function<void()>& restart) {
  for (int attempt = 0;; ++attempt) {
    auto st = request(make(next_seq()), on);
    if (st || st.error().err() != EINTR || attempt == 2) return st;
    restart();
  }
}

std::string hex(const Bytes& b) {
  std::string out;
  char tmp[4];
  for (size_t i = 0; i < b.size(); ++i) {
    std::snprintf(tmp, sizeof tmp, "%02x", b[i]);
    if (i) out += ' ';
    out += tmp;
  }
  return out;
}

}  // namespace berth::linux::netlink
