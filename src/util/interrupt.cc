// Ending a foreground run's or exec's waits on SIGTERM and friends (see interrupt.h).
#include "util/interrupt.h"

#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <string>

namespace berth::interrupt {
namespace {

int g_fd = -1;
bool g_held = false;  // the direct init and the exec tenant share our memory, not our waits

}  // namespace

sigset_t terminating() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&s, sig);
  return s;
}

Status arm() {
  disarm();
  sigset_t s = terminating();
  int fd = ::signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return Error::sys(errno, "signalfd");
  g_fd = fd;
  return ok();
}

void disarm() {
  if (g_fd >= 0) ::close(g_fd);
  g_fd = -1;
}

int fd() { return g_held ? -1 : g_fd; }

bool hold(bool held) {
  bool was = g_held;
  g_held = held;
  return was;
}

Error interrupted() {
  struct signalfd_siginfo si {};
  ssize_t n = g_fd >= 0 ? ::read(g_fd, &si, sizeof si) : -1;
  int sig = n == static_cast<ssize_t>(sizeof si) ? static_cast<int>(si.ssi_signo) : SIGTERM;
  const char* name = sigabbrev_np(sig);
  return Error::generic(std::string("interrupted by SIG") + (name ? name : std::to_string(sig).c_str()) +
                        " before the container process ran");
}

}  // namespace berth::interrupt
