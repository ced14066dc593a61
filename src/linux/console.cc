// The container's pty and fd hand-off over AF_UNIX sockets (see console.h).
#include "linux/console.h"

#include "util/fd_passing.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <cstring>

namespace berth::linux {

Result<Pty> open_pty(int root_fd, const std::string& ptmx_path, const std::optional<spec::Box>& size) {
  struct open_how how {};
  how.flags = O_RDWR | O_NOCTTY | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  std::string rel = ptmx_path[0] == '/' ? ptmx_path.substr(1) : ptmx_path;
  int m = static_cast<int>(::syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how));
  if (m < 0) return Error::sys(errno, "open " + ptmx_path);
  Pty pty;
  pty.master.reset(m);
  struct stat st;
  if (::fstat(m, &st) < 0 || !S_ISCHR(st.st_mode)) return Error::generic(ptmx_path + " is not a character device");
  int unlock = 0;
  if (::ioctl(m, TIOCSPTLCK, &unlock) < 0) return Error::sys(errno, "unlock pty");
  int n = 0;
  if (::ioctl(m, TIOCGPTN, &n) < 0) return Error::sys(errno, "get pty number");
  pty.name = "/dev/pts/" + std::to_string(n);
  int peer = ::ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (peer < 0) return Error::sys(errno, "open pty peer");
  pty.peer.reset(peer);
  if (size && (size->height || size->width)) BERTH_TRY(set_window_size(m, size->height, size->width));
  return pty;
}

Status set_window_size(int fd, uint32_t rows, uint32_t cols) {
  struct winsize ws {};
  ws.ws_row = static_cast<unsigned short>(rows);
  ws.ws_col = static_cast<unsigned short>(cols);
  if (::ioctl(fd, TIOCSWINSZ, &ws) < 0) return Error::sys(errno, "set console size");
  return ok();
}

Status make_controlling_tty(int peer_fd) {
  if (::ioctl(peer_fd, TIOCSCTTY, 0) < 0) return Error::sys(errno, "set controlling terminal");
  for (int i = 0; i < 3; ++i)
    if (::dup2(peer_fd, i) < 0) return Error::sys(errno, "dup pty onto stdio");
  return ok();
}

Status send_fd_to_socket(const std::string& socket_path, int fd, const std::string& payload) {
  BERTH_ASSIGN(UniqueFd sock, connect_unix(socket_path));
  // An empty payload would send nothing at all on a stream socket: send one NUL byte.
  return send_with_fd(sock.get(), payload.empty() ? std::string(1, '\0') : payload, fd)
      .context("send fd to " + socket_path);
}

}  // namespace berth::linux
