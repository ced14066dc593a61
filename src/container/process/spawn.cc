// clone3 wrapper (see spawn.h).
#include "container/process/spawn.h"

#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "util/interrupt.h"

namespace berth::container::process {
namespace {

// Taken before a clone and put back in the parent once it returns (a child in our memory
// has exited or exec'd by then); a child never runs the destructor (it ends in _exit or
// execve), so it keeps the hold: its sync waits are not ended by our SIGTERM.
class HeldForChild {
 public:
  HeldForChild() : was_(interrupt::hold(true)) {}
  ~HeldForChild() { interrupt::hold(was_); }
  HeldForChild(const HeldForChild&) = delete;
  HeldForChild& operator=(const HeldForChild&) = delete;

 private:
  bool was_;
};

Result<OwnedPid> do_clone(uint64_t flags, int cgroup_fd, const std::function<int()>& child) {
  int pidfd = -1;
  struct clone_args args {};
  args.flags = flags | CLONE_PIDFD;
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  if (cgroup_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = static_cast<uint64_t>(cgroup_fd);
  }
  HeldForChild held;
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) return Error::sys(errno, "clone3");
  if (pid == 0) {
    // The child: a copy of this single-threaded process. It runs to _exit, never back.
    int status = child();
    ::_exit(status);
  }
  return OwnedPid(static_cast<pid_t>(pid), UniqueFd(pidfd));
}

}  // namespace

Result<OwnedPid> spawn(uint64_t flags, int cgroup_fd, const std::function<int()>& child, bool* in_cgroup) {
  auto r = do_clone(flags, cgroup_fd, child);
  *in_cgroup = r.ok() && cgroup_fd >= 0;
  // CLONE_INTO_CGROUP is refused for some cgroups (threaded, domain-invalid); the caller
  // then adds the pid to the cgroup itself.
  if (!r && cgroup_fd >= 0 && (r.error().err() == EOPNOTSUPP || r.error().err() == EBUSY))
    return do_clone(flags, -1, child);
  return r;
}

Result<OwnedPid> fork_child(const std::function<int()>& child) {
  auto r = do_clone(0, -1, child);
  if (r || r.error().err() != ENOSYS) return r;
  // A seccomp filter already loaded (startContainer hooks run after it) may answer clone3
  // with ENOSYS, as Docker's profile does: fall back to fork.
  HeldForChild held;
  pid_t pid = ::fork();
  if (pid < 0) return Error::sys(errno, "fork");
  if (pid == 0) ::_exit(child());
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  return OwnedPid(pid, std::move(pidfd));
}

// The child's stack: what it runs on (and the process exec's tenant forks, on a copy of it,
// until its execve), with a guard page below. MAP_NORESERVE: only the pages
// touched cost anything.
Result<OwnedPid> vfork_child(int flags, const std::function<int()>& child) {
  constexpr size_t kGuard = 4096, kStack = 8u << 20;
  void* map = ::mmap(nullptr, kGuard + kStack, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) return Error::sys(errno, "mmap a stack for a child in our memory");
  char* base = static_cast<char*>(map);
  if (::mprotect(base, kGuard, PROT_NONE) < 0) {
    int err = errno;
    ::munmap(map, kGuard + kStack);
    return Error::sys(err, "mprotect the stack guard of a child in our memory");
  }
  int pidfd = -1;
  auto entry = [](void* arg) -> int { return (*static_cast<const std::function<int()>*>(arg))(); };
  // glibc's clone: the child calls entry on the new stack and exits with its value (the
  // exit system call itself: no atexit handlers, no stdio flush of our buffers).
  HeldForChild held;
  int pid = ::clone(entry, base + kGuard + kStack, flags | CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD,
                    const_cast<std::function<int()>*>(&child), &pidfd);
  int err = errno;
  ::munmap(map, kGuard + kStack);  // the child has exited: its stack is free
  if (pid < 0) return Error::sys(err, "clone");
  return OwnedPid(static_cast<pid_t>(pid), UniqueFd(pidfd));
}

}  // namespace berth::container::process
