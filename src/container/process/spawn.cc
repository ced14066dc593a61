// clone3 and clone wrappers: the init, forks, children in our memory (see spawn.h).
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

// The child's stack: what a child on a stack of its own runs on (and the process exec's
// tenant forks, on a copy of it, until its execve), with a guard page below. MAP_NORESERVE:
// only the pages touched cost anything. Unmapped when we are back: a child in our memory
// has exited or exec'd by then, a copy has its own.
class ChildStack {
 public:
  static constexpr size_t kGuard = 4096, kSize = 8u << 20;
  static Result<ChildStack> map() {
    void* m = ::mmap(nullptr, kGuard + kSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return Error::sys(errno, "mmap a stack for a child");
    ChildStack s(static_cast<char*>(m));
    if (::mprotect(s.map_, kGuard, PROT_NONE) < 0) return Error::sys(errno, "mprotect the stack guard of a child");
    return s;
  }
  ChildStack(ChildStack&& o) noexcept : map_(o.map_) { o.map_ = nullptr; }
  ChildStack& operator=(ChildStack&&) = delete;
  ~ChildStack() {
    if (map_) ::munmap(map_, kGuard + kSize);
  }
  char* bottom() const { return map_ + kGuard; }
  char* top() const { return map_ + kGuard + kSize; }

 private:
  explicit ChildStack(char* m) : map_(m) {}
  char* map_;
};

int run_child(void* arg) { return (*static_cast<const std::function<int()>*>(arg))(); }

// glibc's clone: the child calls run_child on the new stack and exits with its value (the
// exit system call itself: no atexit handlers, no stdio flush of our buffers). shared: in
// our memory while we sleep (CLONE_VM | CLONE_VFORK); else a copy, as fork makes.
Result<OwnedPid> clone_on_stack(int flags, const std::function<int()>& child, bool shared) {
  BERTH_ASSIGN(auto stack, ChildStack::map());
  int pidfd = -1;
  if (shared) flags |= CLONE_VM | CLONE_VFORK;
  HeldForChild held;
  int pid = ::clone(run_child, stack.top(), flags | CLONE_PIDFD | SIGCHLD, const_cast<std::function<int()>*>(&child),
                    &pidfd);
  if (pid < 0) return Error::sys(errno, "clone");
  return OwnedPid(static_cast<pid_t>(pid), UniqueFd(pidfd));
}

// vfork_child born in a v2 cgroup: clone3 onto our stack (clone3_vm.h). The kernel refuses
// CLONE_INTO_CGROUP for some cgroups (EOPNOTSUPP: threaded, domain invalid; EBUSY: one
// with controllers for its children): then the child is cloned without it, *in_cgroup
// false, and joins by itself (it reads *in_cgroup in our memory).
Result<OwnedPid> clone3_shared(int flags, int cgroup_fd, const std::function<int()>& child, bool* in_cgroup) {
  if (!kHaveClone3OnStack) return Error::sys(ENOSYS, "clone3 onto a stack of ours (not built for this architecture)");
  BERTH_ASSIGN(auto stack, ChildStack::map());
  int pidfd = -1;
  struct clone_args args {};
  args.flags = static_cast<uint64_t>(static_cast<unsigned>(flags)) | CLONE_VM | CLONE_VFORK | CLONE_PIDFD |
               CLONE_INTO_CGROUP;
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  args.stack = reinterpret_cast<uint64_t>(stack.bottom());
  args.stack_size = ChildStack::kSize;
  args.cgroup = static_cast<uint64_t>(cgroup_fd);
  auto fn = const_cast<std::function<int()>*>(&child);
  HeldForChild held;
  *in_cgroup = true;
  long pid = clone3_on_stack(&args, sizeof args, run_child, fn);
  if (pid == -EOPNOTSUPP || pid == -EBUSY) {
    *in_cgroup = false;
    args.flags &= ~static_cast<uint64_t>(CLONE_INTO_CGROUP);
    args.cgroup = 0;
    pid = clone3_on_stack(&args, sizeof args, run_child, fn);
  }
  if (pid < 0) {
    *in_cgroup = false;
    return Error::sys(static_cast<int>(-pid), "clone3 (a child in our memory, into its cgroup)");
  }
  return OwnedPid(static_cast<pid_t>(pid), UniqueFd(pidfd));
}

// A filter around us (EPERM, or ENOSYS as Docker's profile gave it for a while), a kernel
// without clone3 (ENOSYS) or without a field we set (E2BIG): clone(2) may still do.
bool clone3_refused(int err) { return err == ENOSYS || err == EPERM || err == E2BIG; }

}  // namespace

Result<OwnedPid> spawn(uint64_t flags, int cgroup_fd, const std::function<int()>& child, bool* in_cgroup) {
  *in_cgroup = false;
  auto r = do_clone(flags, cgroup_fd, child);
  if (r) {
    *in_cgroup = cgroup_fd >= 0;
    return r;
  }
  int err = r.error().err();
  // CLONE_INTO_CGROUP is refused for some cgroups (threaded, domain-invalid); the caller
  // then adds the pid to the cgroup itself.
  if (cgroup_fd >= 0 && (err == EOPNOTSUPP || err == EBUSY)) return do_clone(flags, -1, child);
  if (clone3_refused(err) && !(flags & CLONE_NEWTIME)) return clone_on_stack(static_cast<int>(flags), child, false);
  return r;
}

Result<OwnedPid> fork_child(const std::function<int()>& child) {
  auto r = do_clone(0, -1, child);
  if (r || !clone3_refused(r.error().err())) return r;
  // A seccomp filter already loaded (startContainer hooks run after it) may answer clone3
  // with ENOSYS, as Docker's profile does, or one around us with EPERM: fall back to fork.
  HeldForChild held;
  pid_t pid = ::fork();
  if (pid < 0) return Error::sys(errno, "fork");
  if (pid == 0) ::_exit(child());
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  return OwnedPid(pid, std::move(pidfd));
}

Result<OwnedPid> vfork_child(int flags, const std::function<int()>& child, int cgroup_fd, bool* in_cgroup) {
  bool placed = false;
  if (!in_cgroup) in_cgroup = &placed;
  *in_cgroup = false;
  if (cgroup_fd >= 0) return clone3_shared(flags, cgroup_fd, child, in_cgroup);
  return clone_on_stack(flags, child, true);
}

}  // namespace berth::container::process
