// Child: a command started without waiting for it, so that a test can SIGKILL it at a
// chosen moment (the kill loop) or run many at once (the load tests). stdout and stderr
// go to an anonymous file read back once the command ended; stdin is /dev/null.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace berth::test {

class Child {
 public:
  // `inherit`: fds the command gets at 3, 4, ... (not close-on-exec), as from a leaky caller.
  explicit Child(const std::vector<std::string>& argv, const std::vector<int>& inherit = {});
  ~Child();  // SIGKILLs and reaps a child still running
  Child(const Child&) = delete;
  Child(Child&& o) noexcept;

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }
  // Waits up to timeout_ms for the child to exit; true when it has (and was reaped).
  bool wait_for(int timeout_ms);
  // SIGKILL now, then reap.
  void kill_now();
  int code() const { return code_; }  // exit status or 128+signal; -1 while running
  std::string output() const;         // stdout and stderr, interleaved

 private:
  void reap();
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int out_ = -1;  // memfd holding the output
  int code_ = -1;
};

}  // namespace berth::test
