// A command run in the background (see child.h).
#include "reliability/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace berth::test {

Child::Child(const std::vector<std::string>& argv, const std::vector<int>& inherit) {
  out_ = ::memfd_create("child-output", MFD_CLOEXEC);
  int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(null_in, 0);
    ::dup2(out_, 1);
    ::dup2(out_, 2);
    // Out of the way first, so that no fd is overwritten before it is moved.
    for (size_t i = 0; i < inherit.size(); ++i) ::dup2(inherit[i], 100 + static_cast<int>(i));
    for (size_t i = 0; i < inherit.size(); ++i) {
      ::dup2(100 + static_cast<int>(i), 3 + static_cast<int>(i));
      ::close(100 + static_cast<int>(i));
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(null_in);
  if (pid_ > 0) pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
}

Child::Child(Child&& o) noexcept : pid_(o.pid_), pidfd_(o.pidfd_), out_(o.out_), code_(o.code_) {
  o.pid_ = -1;
  o.pidfd_ = -1;
  o.out_ = -1;
}

Child::~Child() {
  if (pid_ > 0 && code_ < 0) kill_now();
  if (pidfd_ >= 0) ::close(pidfd_);
  if (out_ >= 0) ::close(out_);
}

void Child::reap() {
  int status = 0;
  if (::waitpid(pid_, &status, 0) == pid_)
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool Child::wait_for(int timeout_ms) {
  if (code_ >= 0) return true;
  if (pid_ <= 0) return false;
  struct pollfd p = {pidfd_, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, timeout_ms); while (r < 0 && errno == EINTR);
  if (r <= 0) return false;
  reap();
  return true;
}

void Child::kill_now() {
  if (pid_ <= 0 || code_ >= 0) return;
  ::syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);
  reap();
}

std::string Child::output() const {
  std::string out;
  if (out_ < 0) return out;
  char buf[4096];
  ssize_t n;
  off_t off = 0;
  while ((n = ::pread(out_, buf, sizeof buf, off)) > 0) {
    out.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return out;
}

}  // namespace berth::test
