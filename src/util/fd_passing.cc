// SCM_RIGHTS fd passing and AF_UNIX connect (see fd_passing.h).
#include "util/fd_passing.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

namespace berth {

Status send_with_fd(int sock, std::string_view data, int fd) {
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct iovec iov = {const_cast<char*>(data.data()), data.size()};
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  ssize_t n;
  do n = ::sendmsg(sock, &msg, MSG_NOSIGNAL); while (n < 0 && errno == EINTR);
  if (n < 0) return Error::sys(errno, "sendmsg");
  for (data.remove_prefix(static_cast<size_t>(n)); !data.empty(); data.remove_prefix(static_cast<size_t>(n))) {
    do n = ::send(sock, data.data(), data.size(), MSG_NOSIGNAL); while (n < 0 && errno == EINTR);
    if (n < 0) return Error::sys(errno, "send");
  }
  return ok();
}

Result<UniqueFd> connect_unix(const std::string& path) {
  UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) return Error::sys(errno, "socket");
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return Error::invalid_argument("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(sock.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) < 0)
    return Error::sys(errno, "connect to " + path);
  return sock;
}

}  // namespace berth
