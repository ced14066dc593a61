// `run` in the foreground: create + start, then stay as the container's parent (child
// subreaper unless --no-subreaper), forward signals to the init, proxy a terminal, and exit
// with the init's status (128+signal when killed), deleting the container unless --keep.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>  // PR_SET_CHILD_SUBREAPER
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "berth/container.h"
#include "container/run.h"
#include "linux/sys.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/scope_exit.h"
#include "util/unique_fd.h"

namespace berth {
namespace {

class RawTerminal {
 public:
  explicit RawTerminal(int fd) : fd_(fd) {
    if (::isatty(fd) && ::tcgetattr(fd, &saved_) == 0) {
      struct termios raw = saved_;
      ::cfmakeraw(&raw);
      active_ = ::tcsetattr(fd, TCSANOW, &raw) == 0;
    }
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(fd_, TCSANOW, &saved_);
  }

 private:
  int fd_;
  struct termios saved_ {};
  bool active_ = false;
};

void copy_window_size(int from, int to) {
  struct winsize ws;
  if (::ioctl(from, TIOCGWINSZ, &ws) == 0) ::ioctl(to, TIOCSWINSZ, &ws);
}

// Moves what is readable from `in` to `out`; false at EOF/error.
bool pump(int in, int out) {
  char buf[8192];
  ssize_t n = ::read(in, buf, sizeof buf);
  if (n <= 0) return n < 0 && (errno == EAGAIN || errno == EINTR);
  return file::write_all(out, std::string_view(buf, static_cast<size_t>(n))).ok();
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

struct Waiter {
  pid_t init;
  int status = -1;
  bool done = false;
  // Reaps every child (we are a subreaper: orphans of the container land here).
  void reap() {
    int st;
    pid_t p;
    while ((p = ::waitpid(-1, &st, WNOHANG | __WALL)) > 0)
      if (p == init) status = st, done = true;
  }
};

int supervise(const Created& c, int sigfd) {
  Waiter w{c.pid};
  int master = c.console_master;
  bool stdin_open = master >= 0;
  if (master >= 0) copy_window_size(STDIN_FILENO, master);
  while (!w.done) {
    struct pollfd fds[4] = {{sigfd, POLLIN, 0}, {c.pidfd, POLLIN, 0}, {master, POLLIN, 0},
                            {stdin_open ? STDIN_FILENO : -1, POLLIN, 0}};
    if (::poll(fds, 4, -1) < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (::read(sigfd, &si, sizeof si) == sizeof si) {
        int sig = static_cast<int>(si.ssi_signo);
        if (sig == SIGCHLD) continue;
        if (sig == SIGWINCH) {
          if (master >= 0) copy_window_size(STDIN_FILENO, master);
          continue;
        }
        ::kill(c.pid, sig);
      }
    }
    w.reap();
    if (fds[1].revents & POLLIN) w.reap();
    if (master >= 0 && (fds[2].revents & (POLLIN | POLLHUP)) && !pump(master, STDOUT_FILENO)) master = -1;
    if (stdin_open && (fds[3].revents & (POLLIN | POLLHUP)) && !pump(STDIN_FILENO, c.console_master)) stdin_open = false;
  }
  // Drain what the container wrote before exiting.
  if (master >= 0) {
    ::fcntl(master, F_SETFL, O_NONBLOCK);
    while (pump(master, STDOUT_FILENO)) {
    }
  }
  return w.done ? exit_code(w.status) : 255;
}

}  // namespace

sigset_t block_forwarded_signals(sigset_t* old) {
  sigset_t mask;
  sigfillset(&mask);
  for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS}) sigdelset(&mask, s);
  ::sigprocmask(SIG_BLOCK, &mask, old);
  return mask;
}

int supervise_foreground(const Created& c, const sigset_t& forwarded) {
  UniqueFd sigfd(::signalfd(-1, &forwarded, SFD_CLOEXEC | SFD_NONBLOCK));
  RawTerminal raw(c.console_master >= 0 ? STDIN_FILENO : -1);
  return supervise(c, sigfd.get());
}

Result<int> run_container(const CreateOptions& options, const RunOptions& run) {
  CreateOptions o = options;
  o.foreground = !run.detach;
  o.start_now = true;
  if (!run.no_subreaper && !run.detach) (void)linux::real_sys().prctl(PR_SET_CHILD_SUBREAPER, 1);
  // Signals are taken through a signalfd; the init resets its own mask before execve.
  sigset_t mask, old;
  if (!run.detach) mask = block_forwarded_signals(&old);
  // Until the container runs, SIGTERM and the like end berth's waits and undo the create;
  // once it runs they are forwarded to it.
  if (!run.detach) BERTH_TRY(interrupt::arm());
  ScopeExit disarm([] { interrupt::disarm(); });
  BERTH_ASSIGN(Created c, create_container(o));
  UniqueFd pidfd(c.pidfd), master(c.console_master);
  auto st = c.started ? ok() : start_container(o.root, o.id);
  if (!st) {
    (void)delete_container(o.root, o.id, true);
    return std::move(st).error();
  }
  interrupt::disarm();
  if (run.detach) return 0;
  int code = supervise_foreground(c, mask);
  if (!run.keep) (void)delete_container(o.root, o.id, true);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  return code;
}

}  // namespace berth
