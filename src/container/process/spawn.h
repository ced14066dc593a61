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

// A child without a copy of us (CLONE_VM | CLONE_VFORK, as posix_spawn does): exec's tenant,
// and the init of a `run` that needs nothing of us until its payload runs. `child`
// runs on a stack of its own in our memory while we sleep, and this returns once it has
// exited. No page tables are copied and neither process takes copy-on-write faults. The
// child shares our heap and thread-local state, which is safe only because we are
// single-threaded and asleep until it exits: it may allocate, but must not store anything
// we would read as ours (an fd of its own table, a pointer into its stack). False under
// AddressSanitizer, whose per-thread stack bookkeeping the child would share: callers
// fall back to spawn().
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kCanShareMemory = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kCanShareMemory = false;
#else
inline constexpr bool kCanShareMemory = true;
#endif
#else
inline constexpr bool kCanShareMemory = true;
#endif
// flags: namespaces the child is born in (clone(2) flags; CLONE_NEWTIME is clone3's only).
Result<OwnedPid> vfork_child(int flags, const std::function<int()>& child);

}  // namespace berth::container::process
