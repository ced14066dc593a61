// OwnedPid: a child process this code is responsible for. Unless released, the child is
// killed with SIGKILL and reaped when the owner goes away, so an error path never leaves
// a half-set-up container init behind.
#pragma once

#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "util/unique_fd.h"

namespace berth {

class OwnedPid {
 public:
  OwnedPid() = default;
  OwnedPid(pid_t pid, UniqueFd pidfd) : pid_(pid), pidfd_(std::move(pidfd)) {}
  OwnedPid(const OwnedPid&) = delete;
  OwnedPid& operator=(const OwnedPid&) = delete;
  OwnedPid(OwnedPid&& o) noexcept : pid_(std::exchange(o.pid_, -1)), pidfd_(std::move(o.pidfd_)) {}
  OwnedPid& operator=(OwnedPid&& o) noexcept {
    if (this != &o) {
      kill_and_reap();
      pid_ = std::exchange(o.pid_, -1);
      pidfd_ = std::move(o.pidfd_);
    }
    return *this;
  }
  ~OwnedPid() { kill_and_reap(); }

  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }
  bool valid() const { return pid_ > 0; }
  // Stop owning: the process lives on (it became the container).
  pid_t release() {
    pidfd_.reset();
    return std::exchange(pid_, -1);
  }
  // Wait for exit; returns the raw wait status or -1.
  int wait() {
    if (pid_ <= 0) return -1;
    int status = 0;
    pid_t r;
    do r = ::waitpid(pid_, &status, __WALL); while (r < 0 && errno == EINTR);
    pid_ = -1;
    pidfd_.reset();
    return r < 0 ? -1 : status;
  }
  // Through the pidfd where there is one: the signal can only reach this process. (An
  // unreaped child's pid cannot be reused either, but the pidfd says so by construction.)
  void kill_and_reap() {
    if (pid_ <= 0) return;
    if (!pidfd_ || ::syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0) < 0) ::kill(pid_, SIGKILL);
    wait();
  }

 private:
  pid_t pid_ = -1;
  UniqueFd pidfd_;
};

}  // namespace berth
