// berth_recvtty: the --console-socket peer of the VM checkpoint script (runc's recvtty's
// role). Listens on SOCKET; each connection hands over a terminal master (SCM_RIGHTS), which
// becomes the current one: its output is copied to stdout, stdin is copied to it. A new
// master (a restore's) replaces one whose terminal is gone (a checkpoint's), so one process
// serves a container across checkpoint and restore. Runs until killed or stdin and the
// master both end.
//
//   berth_recvtty SOCKET
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "recv_fd.h"

namespace {

int listen_on(const char* path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (fd < 0 || std::strlen(path) >= sizeof a.sun_path) return -1;
  std::strcpy(a.sun_path, path);
  ::unlink(path);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 || ::listen(fd, 4) < 0) return -1;
  return fd;
}

int receive_fd(int listener) {
  int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (conn < 0) return -1;
  int fd = berth::test::recv_one_fd(conn, nullptr, 256);
  ::close(conn);
  return fd;
}

bool copy(int from, int to) {
  char buf[4096];
  ssize_t n = ::read(from, buf, sizeof buf);
  if (n <= 0) return false;
  for (ssize_t off = 0; off < n;) {
    ssize_t w = ::write(to, buf + off, static_cast<size_t>(n - off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return true;  // the peer is gone: drop the data, keep serving
    off += w;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: berth_recvtty SOCKET\n");
    return 2;
  }
  int listener = listen_on(argv[1]);
  if (listener < 0) {
    std::perror("berth_recvtty: listen");
    return 1;
  }
  int master = -1;
  bool in_open = true;
  for (;;) {
    pollfd p[3] = {{listener, POLLIN, 0}, {master, POLLIN, 0}, {in_open ? 0 : -1, POLLIN, 0}};
    if (::poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (p[0].revents & POLLIN) {
      int fd = receive_fd(listener);
      if (fd >= 0) {
        if (master >= 0) ::close(master);
        master = fd;
        std::fprintf(stderr, "berth_recvtty: got a terminal master\n");
      }
    }
    // A master whose terminal is gone reads EIO (hang-up): wait for the next one.
    if (master >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) && !copy(master, 1)) {
      ::close(master);
      master = -1;
    }
    if (in_open && (p[2].revents & (POLLIN | POLLHUP))) {
      char buf[4096];
      ssize_t n = ::read(0, buf, sizeof buf);
      if (n <= 0) in_open = false;
      else if (master >= 0 && ::write(master, buf, static_cast<size_t>(n)) < 0) std::perror("berth_recvtty: write");
    }
  }
}
