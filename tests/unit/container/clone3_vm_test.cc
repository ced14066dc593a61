// clone3_on_stack, the trampoline under vfork_child's cgroup v2 path: fn runs on the stack
// we give, its value is the exit status waitid reports, a CLONE_VM child writes where we
// read (and a copy does not), a misaligned stack is refused before any system call.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "container/process/clone3_vm.h"
#include "container/process/spawn.h"

namespace berth::container::process {
namespace {

#define SKIP_WITHOUT_TRAMPOLINE()                                                                 \
  if (!kHaveClone3OnStack) GTEST_SKIP() << "no clone3 trampoline for this architecture";         \
  if (!kCanShareMemory) GTEST_SKIP() << "AddressSanitizer build: no child runs in our memory, " \
                                        "the trampoline is not used"

struct Probe {
  const char* sp = nullptr;  // an address on the stack fn ran on
  int written = 0;
};

int probe(void* arg) {
  auto* p = static_cast<Probe*>(arg);
  char local = 0;
  p->sp = &local;
  p->written = 42;
  return 9;
}

class Stack {
 public:
  static constexpr size_t kSize = 1u << 16;
  Stack() : base_(static_cast<char*>(::mmap(nullptr, kSize, PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0))) {}
  ~Stack() {
    if (base_ != MAP_FAILED) ::munmap(base_, kSize);
  }
  bool ok() const { return base_ != MAP_FAILED; }
  char* base() const { return base_; }

 private:
  char* base_;
};

struct clone_args stack_args(const Stack& s, uint64_t flags, int* pidfd) {
  struct clone_args a {};
  a.flags = flags | CLONE_PIDFD;
  a.pidfd = reinterpret_cast<uint64_t>(pidfd);
  a.exit_signal = SIGCHLD;
  a.stack = reinterpret_cast<uint64_t>(s.base());
  a.stack_size = Stack::kSize;
  return a;
}

// The child's exit status as waitid reports it (-1 on a wait error or a signal).
int exit_status(long pid) {
  siginfo_t info {};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED) < 0) return -1;
  return info.si_code == CLD_EXITED ? info.si_status : -1;
}

TEST(Clone3OnStack, RunsFnOnTheNewStackInOurMemoryWhileWeSleep) {
  SKIP_WITHOUT_TRAMPOLINE();
  Stack s;
  ASSERT_TRUE(s.ok());
  Probe p;
  int pidfd = -1;
  auto args = stack_args(s, CLONE_VM | CLONE_VFORK, &pidfd);
  long pid = clone3_on_stack(&args, sizeof args, probe, &p);
  ASSERT_GT(pid, 0) << std::strerror(static_cast<int>(-pid));
  EXPECT_EQ(p.written, 42) << "the child's write (in our memory) is there once we are back";
  EXPECT_GE(p.sp, s.base());
  EXPECT_LT(p.sp, s.base() + Stack::kSize) << "fn ran on the stack we gave";
  EXPECT_GE(pidfd, 0);
  EXPECT_EQ(exit_status(pid), 9);
  ::close(pidfd);
}

// Without CLONE_VM the child is a copy: fn still runs on the (copied) stack, and what it
// writes stays its own.
TEST(Clone3OnStack, ACopyRunsFnAndKeepsItsWritesToItself) {
  SKIP_WITHOUT_TRAMPOLINE();
  Stack s;
  ASSERT_TRUE(s.ok());
  Probe p;
  int pidfd = -1;
  auto args = stack_args(s, 0, &pidfd);
  long pid = clone3_on_stack(&args, sizeof args, probe, &p);
  ASSERT_GT(pid, 0) << std::strerror(static_cast<int>(-pid));
  EXPECT_EQ(exit_status(pid), 9);
  EXPECT_EQ(p.written, 0);
  EXPECT_EQ(p.sp, nullptr);
  ::close(pidfd);
}

// The parent is back with -errno from the kernel, and no child ran: CLONE_THREAD without
// CLONE_SIGHAND (and with an exit signal) is EINVAL.
TEST(Clone3OnStack, AKernelRefusalComesBackAsMinusErrno) {
  SKIP_WITHOUT_TRAMPOLINE();
  Stack s;
  ASSERT_TRUE(s.ok());
  Probe p;
  int pidfd = -1;
  auto args = stack_args(s, CLONE_VM | CLONE_THREAD, &pidfd);
  EXPECT_EQ(clone3_on_stack(&args, sizeof args, probe, &p), -EINVAL);
  EXPECT_EQ(p.written, 0);
}

TEST(Clone3OnStack, AMisalignedOrMissingStackIsRefusedBeforeTheCall) {
  SKIP_WITHOUT_TRAMPOLINE();
  Stack s;
  ASSERT_TRUE(s.ok());
  Probe p;
  int pidfd = -1;
  auto args = stack_args(s, CLONE_VM | CLONE_VFORK, &pidfd);
  args.stack_size -= 8;
  EXPECT_EQ(clone3_on_stack(&args, sizeof args, probe, &p), -EINVAL);
  args = stack_args(s, CLONE_VM | CLONE_VFORK, &pidfd);
  args.stack = 0;
  EXPECT_EQ(clone3_on_stack(&args, sizeof args, probe, &p), -EINVAL);
  EXPECT_EQ(p.written, 0);
  EXPECT_EQ(pidfd, -1);
}

}  // namespace
}  // namespace berth::container::process
