// clone3 of the container init: the namespace flags at once, CLONE_INTO_CGROUP on cgroup v2
// (the child is in its final cgroup before it runs a single instruction), CLONE_PIDFD; the
// children that share our memory (vfork_child), born in their v2 cgroup too.
#pragma once

#include <functional>

#include "berth/result.h"
#include "container/process/clone3_vm.h"
#include "util/owned_pid.h"

namespace berth::container::process {

// Runs `child` in the new process (its return value is the exit status; it must not
// return into the caller's code). cgroup_fd < 0: no CLONE_INTO_CGROUP. *in_cgroup tells
// whether the child was placed in the cgroup (the kernel refuses some; then the caller
// adds the pid itself). Where clone3 is refused (ENOSYS, EPERM or E2BIG: an old kernel,
// a seccomp filter around us, as Docker's profile answered clone3 for a while), a
// clone(2) copy, which the caller places: not for CLONE_NEWTIME, which is clone3's only.
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
// Where vfork_child can also give the child a cgroup v2 directory to be born in: clone3
// with a stack of ours (clone3_vm.h) exists for this architecture. Elsewhere a pure v2
// host takes the copies, as before.
inline constexpr bool kCanShareMemoryIntoCgroup = kCanShareMemory && kHaveClone3OnStack;
// flags: namespaces the child is born in (clone(2) flags; CLONE_NEWTIME is clone3's only).
// cgroup_fd >= 0, a cgroup v2 directory (kCanShareMemoryIntoCgroup only): the child is
// born there by clone3 (CLONE_INTO_CGROUP), where the clone(2) child would have to
// join by itself. *in_cgroup says whether it was, written before the child runs: the child
// shares our memory and reads it to know whether to join (the kernel refuses some
// cgroups: threaded, domain invalid, one with controllers for its children). A clone3
// that is refused (ENOSYS from an old kernel or a filter around us, EPERM from a filter,
// E2BIG from a kernel without CLONE_INTO_CGROUP) is an error: callers then take spawn().
Result<OwnedPid> vfork_child(int flags, const std::function<int()>& child, int cgroup_fd = -1,
                             bool* in_cgroup = nullptr);

}  // namespace berth::container::process
