// clone3 onto a stack of ours: the per-architecture entry (x86_64, aarch64) that runs a
// function on the child's new stack. It lets a child share our memory (CLONE_VM |
// CLONE_VFORK) and still be born in a cgroup v2 directory (CLONE_INTO_CGROUP, which
// clone(2) lacks); glibc has no public clone3 wrapper that calls a function.
#pragma once

#include <linux/sched.h>

#include <cstddef>

namespace berth::container::process {

#if defined(__x86_64__) || defined(__aarch64__)
inline constexpr bool kHaveClone3OnStack = true;
#else
inline constexpr bool kHaveClone3OnStack = false;
#endif

// The raw clone3(args, size). In the child, which starts with its stack pointer at
// args->stack + args->stack_size (the kernel adds the two; the sum must be 16-byte
// aligned), fn(arg) runs and its value becomes the exit status (exit_group: the child
// never returns into our frames, which belong to the parent). In the parent: the child's
// pid, or -errno. -ENOSYS where kHaveClone3OnStack is false, -EINVAL for a misaligned or
// missing stack.
long clone3_on_stack(struct clone_args* args, size_t size, int (*fn)(void*), void* arg);

}  // namespace berth::container::process
