// clone3 onto a stack of ours (see clone3_vm.h): one inline-assembly block per architecture,
// written from the kernel's system-call ABI.
#include "container/process/clone3_vm.h"

#include <sys/syscall.h>

#include <cerrno>
#include <cstdint>

namespace berth::container::process {

// One asm block holds the system call and everything the child does: after clone3 the
// child runs on a different stack, so no compiler-generated code (which may address the
// parent's frame through the stack pointer) may run in it before fn. It calls fn, then
// exit_group with fn's value, and never leaves the block. The parent skips to the end of
// the block with the pid (or -errno) in the return register. Kept out of line and
// uninstrumented: nothing of it may be duplicated into a caller's frame, and the
// sanitizers' bookkeeping of stacks does not know the child's (spawn.h, kCanShareMemory).
__attribute__((noinline, no_sanitize_address)) long clone3_on_stack(struct clone_args* args, size_t size,
                                                                      int (*fn)(void*), void* arg) {
  if (!args || !fn || args->stack == 0 || ((args->stack + args->stack_size) & 15) != 0) return -EINVAL;
#if defined(__x86_64__)
  // syscall keeps every register but rax (the result), rcx and r11; the child starts with
  // the parent's registers, rax = 0 and rsp = the new stack's top. fn and arg travel in
  // r12 and r13, which the compiler cannot hand out as scratch for the other operands
  // here. The top is 16-byte aligned, so the call leaves fn's frame as the ABI wants it;
  // rbp = 0 ends a debugger's backtrace at fn.
  register long rax __asm__("rax") = SYS_clone3;
  register int (*r12)(void*) __asm__("r12") = fn;
  register void* r13 __asm__("r13") = arg;
  __asm__ volatile(
      "syscall\n\t"
      "testq %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xorl %%ebp, %%ebp\n\t"
      "movq %%r13, %%rdi\n\t"
      "callq *%%r12\n\t"
      "movl %%eax, %%edi\n\t"
      "movl %[exit_nr], %%eax\n\t"
      "syscall\n\t"
      "hlt\n"
      "1:\n\t"
      : "+r"(rax)
      : "D"(args), "S"(size), "r"(r12), "r"(r13), [exit_nr] "i"(SYS_exit_group)
      : "rcx", "r11", "memory", "cc");
  return rax;
#elif defined(__aarch64__)
  // svc keeps every register but x0 (the result); the child starts with the parent's
  // registers, x0 = 0 and sp = the new stack's top (16-byte aligned, as sp must always
  // be). fn and arg travel in x2 and x3. x29 = 0 and x30 = 0 end a backtrace at fn.
  register long x8 __asm__("x8") = SYS_clone3;
  register long x0 __asm__("x0") = reinterpret_cast<long>(args);
  register long x1 __asm__("x1") = static_cast<long>(size);
  register int (*x2)(void*) __asm__("x2") = fn;
  register void* x3 __asm__("x3") = arg;
  __asm__ volatile(
      "svc #0\n\t"
      "cbnz x0, 1f\n\t"
      "mov x29, xzr\n\t"
      "mov x30, xzr\n\t"
      "mov x0, x3\n\t"
      "blr x2\n\t"
      "mov x8, %[exit_nr]\n\t"
      "svc #0\n\t"
      "brk #1\n"
      "1:\n\t"
      : "+r"(x0)
      : "r"(x8), "r"(x1), "r"(x2), "r"(x3), [exit_nr] "i"(SYS_exit_group)
      : "memory", "cc");
  return x0;
#else
  (void)size;
  (void)arg;
  return -ENOSYS;  // spawn.h keeps clone(2) and the copies here
#endif
}

}  // namespace berth::container::process
