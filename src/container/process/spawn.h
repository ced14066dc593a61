// clone3 of the container init: the namespace flags at once, CLONE_INTO_CGROUP on cgroup v2
// (the child is in its final cgroup before it runs a single instruction), CLONE_PIDFD.
#pragma once

#include <functional>

#include "berth/result.h"
#include "util/owned_pid.h"

namespace berth::container::process {

// Runs `child` in the new process (its return value is the exit status; it must not
// return into the caller's code). cgroup_fd < 0: no CLONE_INTO_CGROUP. *in_cgroup tells
// whether the child was placed in the cgroup (the kernel refuses some; then the caller
// adds the pid itself).
Result<OwnedPid> spawn(uint64_t flags, int cgroup_fd, const std::function<int()>& child, bool* in_cgroup);
// fork() for the second stage and for hook processes: a plain child with a pidfd.
Result<OwnedPid> fork_child(const std::function<int()>& child);

}  // namespace berth::container::process
