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

#include <climits>
#include <cstring>
#include <deque>

#include "util/openat2.h"
#include "util/strings.h"

namespace berth::linux {

Result<Pty> open_pty(int root_fd, const std::string& ptmx_path, const std::optional<spec::Box>& size) {
  struct open_how how {};
  how.flags = O_RDWR | O_NOCTTY | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  std::string rel = ptmx_path[0] == '/' ? ptmx_path.substr(1) : ptmx_path;
  int m = util::openat2_retrying(root_fd, rel.c_str(), how);
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

namespace {

// One component of a path being resolved: opened O_PATH without following it.
Result<UniqueFd> open_component(int dir, const std::string& name, const std::string& shown) {
  UniqueFd fd(::openat(dir, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Error::sys(errno, shown);
  return fd;
}

// Follows `link` (a parent component) only when root or the caller owns it: a link of
// anyone else leads where that party chose, not where the caller named (the kernel's
// protected_symlinks rule, which holds only in sticky directories, for every directory).
Result<std::string> parent_link_target(int link, const std::string& shown) {
  struct stat st;
  if (::fstat(link, &st) < 0) return Error::sys(errno, shown);
  if (st.st_uid != 0 && st.st_uid != ::geteuid())
    return Error::invalid_argument(shown + " is a symbolic link owned by uid " + std::to_string(st.st_uid) +
                                   ", neither root nor the caller: not followed");
  char buf[PATH_MAX];
  ssize_t n = ::readlinkat(link, "", buf, sizeof buf);
  if (n < 0 || n == static_cast<ssize_t>(sizeof buf)) return Error::sys(n < 0 ? errno : ENAMETOOLONG, "readlink " + shown);
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

Result<UniqueFd> open_named_socket(const std::string& path) {
  if (path.empty()) return Error::invalid_argument("empty socket path");
  // Empty and "." components dropped up front, so that `todo.empty()` means "last".
  auto components = [](const std::string& p) {
    auto v = str::split_nonempty(p, '/');
    std::erase(v, ".");
    return v;
  };
  std::deque<std::string> todo;
  for (auto& c : components(path)) todo.push_back(std::move(c));
  UniqueFd cur(::open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!cur) return Error::sys(errno, "open " + std::string(path[0] == '/' ? "/" : "."));
  std::string shown = path[0] == '/' ? "" : ".";
  for (int links = 0; !todo.empty();) {
    std::string name = std::move(todo.front());
    todo.pop_front();
    shown += "/" + name;
    BERTH_ASSIGN(UniqueFd next, open_component(cur.get(), name, shown));
    struct stat st;
    if (::fstat(next.get(), &st) < 0) return Error::sys(errno, shown);
    if (!S_ISLNK(st.st_mode)) {
      cur = std::move(next);
      continue;
    }
    // The caller made the socket at the name it gives: a link there is someone else's.
    if (todo.empty()) return Error::invalid_argument(path + " is a symbolic link (not followed: name the socket itself)");
    if (++links > 40) return Error::sys(ELOOP, shown);
    BERTH_ASSIGN(std::string target, parent_link_target(next.get(), shown));
    auto parts = components(target);
    todo.insert(todo.begin(), parts.begin(), parts.end());
    if (!target.empty() && target[0] == '/') {
      cur.reset(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (!cur) return Error::sys(errno, "open /");
      shown.clear();
    } else {
      shown.resize(shown.size() - name.size() - 1);
    }
  }
  struct stat st;
  if (::fstat(cur.get(), &st) < 0) return Error::sys(errno, path);
  if (!S_ISSOCK(st.st_mode)) return Error::invalid_argument(path + " is not a socket");
  return cur;
}

Status send_fd_to_socket(const std::string& socket_path, int fd, const std::string& payload) {
  BERTH_ASSIGN(UniqueFd named, open_named_socket(socket_path));
  // Connected through the opened inode: no component can be swapped between the checks
  // above and the connect (and the 108-byte limit of sun_path does not apply).
  BERTH_ASSIGN(UniqueFd sock, connect_unix("/proc/self/fd/" + std::to_string(named.get())).context(socket_path));
  // An empty payload would send nothing at all on a stream socket: send one NUL byte.
  return send_with_fd(sock.get(), payload.empty() ? std::string(1, '\0') : payload, fd)
      .context("send fd to " + socket_path);
}

}  // namespace berth::linux
