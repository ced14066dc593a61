// The receiving end of a runtime's fd hand-off (--console-socket, a seccomp listenerPath):
// one recvmsg of a payload with one SCM_RIGHTS fd, as the test peers (berth_recvtty,
// berth_seccomp_listener, FdSocket) read it.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstring>
#include <string>

namespace berth::test {

// The fd sent on `conn` (-1 when none came), its payload in `payload` (up to `max` bytes;
// nullptr: dropped).
inline int recv_one_fd(int conn, std::string* payload, size_t max = 4096) {
  std::string buf(max, '\0');
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{buf.data(), buf.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = ::recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0) return -1;
  if (payload) payload->assign(buf.data(), static_cast<size_t>(n));
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

}  // namespace berth::test
