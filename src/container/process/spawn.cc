// clone3 wrapper (see spawn.h).
#include "container/process/spawn.h"

#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace berth::container::process {
namespace {

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
  pid_t pid = ::fork();
  if (pid < 0) return Error::sys(errno, "fork");
  if (pid == 0) ::_exit(child());
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  return OwnedPid(pid, std::move(pidfd));
}

}  // namespace berth::container::process
