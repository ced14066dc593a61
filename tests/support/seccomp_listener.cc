// A seccomp agent for the integration tests: listens on a unix socket (linux.seccomp.
// listenerPath), takes each runtime's message (the container process state + the listener
// fd), and answers every notified syscall by faking success (return value 0, nothing
// done). It appends each state message as one line to STATE_FILE and "nr=<syscall>" for each
// answered request, and exits once every listener it received is gone (or after TIMEOUT s).
//
//   berth_seccomp_listener SOCKET STATE_FILE [CONNECTIONS=1] [TIMEOUT=30]
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "recv_fd.h"

namespace {

void append(const std::string& file, const std::string& line) {
  FILE* f = std::fopen(file.c_str(), "a");
  if (!f) return;
  std::fprintf(f, "%s\n", line.c_str());
  std::fclose(f);
}

// One message: the JSON state, with the listener fd attached.
int receive_listener(int conn, std::string* state) {
  int fd = berth::test::recv_one_fd(conn, state, 65536);
  if (fd < 0) return -1;
  // The rest of a long message arrives without the fd.
  char buf[65536];
  for (ssize_t n; (n = ::recv(conn, buf, sizeof buf, MSG_DONTWAIT)) > 0;) state->append(buf, static_cast<size_t>(n));
  return fd;
}

// Answers one request; false when the listener is gone.
bool answer(int fd, const std::string& log) {
  seccomp_notif req{};
  if (::ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) return errno == EINTR || errno == ENOENT;
  seccomp_notif_resp resp{};
  resp.id = req.id;
  resp.val = 0;
  resp.error = 0;
  resp.flags = 0;
  (void)::ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  append(log, "nr=" + std::to_string(req.data.nr));
  return true;
}

int listen_on(const char* path) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
  ::unlink(path);
  if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || ::listen(s, 4) < 0) return -1;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SOCKET STATE_FILE [CONNECTIONS] [TIMEOUT]\n", argv[0]);
    return 2;
  }
  int want = argc > 3 ? std::atoi(argv[3]) : 1;
  time_t deadline = std::time(nullptr) + (argc > 4 ? std::atoi(argv[4]) : 30);
  int s = listen_on(argv[1]);
  if (s < 0) return std::perror("listen"), 1;
  std::vector<pollfd> fds = {{s, POLLIN, 0}};
  int received = 0;
  while (std::time(nullptr) < deadline && (received < want || fds.size() > 1)) {
    if (::poll(fds.data(), fds.size(), 200) < 0) continue;
    if (fds[0].revents & POLLIN) {
      int conn = ::accept4(s, nullptr, nullptr, SOCK_CLOEXEC);
      std::string state;
      int fd = conn >= 0 ? receive_listener(conn, &state) : -1;
      if (conn >= 0) ::close(conn);
      if (fd >= 0) {
        append(argv[2], state);
        fds.push_back({fd, POLLIN, 0});
        ++received;
      }
    }
    for (size_t i = fds.size(); i-- > 1;) {
      bool gone = fds[i].revents & (POLLHUP | POLLERR);
      if (fds[i].revents & POLLIN) gone = !answer(fds[i].fd, argv[2]) || gone;
      if (gone) {
        ::close(fds[i].fd);
        fds.erase(fds.begin() + static_cast<long>(i));
      }
    }
  }
  ::unlink(argv[1]);
  return received == want ? 0 : 3;
}
