// The parent↔init message channel (see sync.h).
#include "container/process/sync.h"

#include "util/fd_passing.h"
#include "util/interrupt.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

namespace berth::container::process {
namespace {

struct Header {
  uint32_t type;
  int32_t err;
  uint32_t kind;
  uint32_t pad;
  int64_t value;
};

constexpr size_t kMaxMessage = 64 * 1024;

// A receive again after EINTR, and after one ECONNRESET: the peer closed its end with a
// message of ours unread (an init that failed before it read kSettled). The kernel reports
// that once, ahead of what the peer sent before, which is still queued (its error among
// them), also between our peek and our read.
template <class F>
ssize_t retried(F&& call) {
  bool reset_seen = false;
  ssize_t n;
  do n = call();
  while (n < 0 && (errno == EINTR || (errno == ECONNRESET && !std::exchange(reset_seen, true))));
  return n;
}

// A foreground run or exec waiting on its init or exec process: a SIGTERM (or SIGINT...)
// ends the wait, so that the create is undone (util/interrupt.h). Never in the init.
Status wait_uninterrupted(int sock) {
  int ifd = interrupt::fd();
  if (ifd < 0) return ok();
  while (true) {
    struct pollfd fds[2] = {{sock, POLLIN, 0}, {ifd, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return Error::sys(errno, "sync: poll");
    }
    // The socket first: a payload that already ran (its execve closed our peer's end)
    // owns a signal that raced our wake-up, and the forwarding takes it from the queue.
    if (fds[0].revents) return ok();
    if (fds[1].revents & POLLIN) return interrupt::interrupted();
  }
}

}  // namespace

Result<std::pair<UniqueFd, UniqueFd>> sync_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0) return Error::sys(errno, "socketpair");
  return std::make_pair(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

Status send(int sock, Msg type, int64_t value, const std::string& text, int fd) {
  Header h{static_cast<uint32_t>(type), 0, 0, 0, value};
  std::string buf(reinterpret_cast<const char*>(&h), sizeof h);
  buf.append(text.substr(0, kMaxMessage - sizeof h));
  return send_with_fd(sock, buf, fd).context("sync: send");
}

Status send_error(int sock, const Error& e) {
  // The errno travels in the header; the text is the chain without strerror.
  Header h{static_cast<uint32_t>(Msg::kError), e.err(), static_cast<uint32_t>(e.kind()), 0, 0};
  std::string buf(reinterpret_cast<const char*>(&h), sizeof h);
  buf.append(e.chain_text().substr(0, kMaxMessage - sizeof h));
  ssize_t n;
  do n = ::send(sock, buf.data(), buf.size(), MSG_NOSIGNAL); while (n < 0 && errno == EINTR);
  if (n < 0) return Error::sys(errno, "sync: send error");
  return ok();
}

Result<Message> receive(int sock) {
  BERTH_ASSIGN(auto m, receive_or_eof(sock));
  if (!m) return Error::generic("container init exited during setup");
  return std::move(*m);
}

Result<std::optional<Message>> receive_or_eof(int sock) {
  // The next message's size first (MSG_TRUNC reports a datagram's full length; nothing is
  // consumed, and without a control buffer no fd is taken), then a buffer of that size.
  // A 64 KiB buffer for 24-byte messages cost page faults in the parent and again in the
  // init (malloc consolidating its free chunks, copy-on-write after the clone), dearer on
  // a VM than the extra syscall (docs/performance.md, "Why the code is shaped so"). No
  // message is empty: a size of 0 is the end.
  BERTH_TRY(wait_uninterrupted(sock));
  ssize_t size = retried([&] { return ::recv(sock, nullptr, 0, MSG_PEEK | MSG_TRUNC); });
  if (size < 0) return Error::sys(errno, "sync: receive");
  if (size == 0) return std::optional<Message>();
  if (static_cast<size_t>(size) > kMaxMessage) size = static_cast<ssize_t>(kMaxMessage);
  std::string buf(static_cast<size_t>(size), '\0');
  struct iovec iov = {buf.data(), buf.size()};
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = retried([&] { return ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC); });
  if (n < 0) return Error::sys(errno, "sync: receive");
  if (n == 0) return std::optional<Message>();
  if (static_cast<size_t>(n) < sizeof(Header)) return Error::generic("sync: short message");
  Header h;
  std::memcpy(&h, buf.data(), sizeof h);
  Message m;
  m.type = static_cast<Msg>(h.type);
  m.err = h.err;
  m.kind = h.kind;
  m.value = h.value;
  m.text.assign(buf.data() + sizeof h, static_cast<size_t>(n) - sizeof h);
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      m.fd.reset(fd);
    }
  }
  return std::optional<Message>(std::move(m));
}

Error to_error(const Message& m) { return Error(m.err, static_cast<ErrorKind>(m.kind), m.text); }

}  // namespace berth::container::process
