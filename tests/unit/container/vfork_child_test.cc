// vfork_child (exec's tenant in our memory): the child writes where we read, we sleep until
// it has exited, and its fd table is its own copy.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "container/process/spawn.h"

namespace berth::container::process {
namespace {

// Not built into the sanitizer build (spawn.h): there exec clones a copy as before.
#define SKIP_WITHOUT_SHARED_MEMORY()                                                      \
  if (!kCanShareMemory) GTEST_SKIP() << "AddressSanitizer build: exec's tenant is a copy, " \
                                        "vfork_child is not used"

TEST(VforkChild, RunsInOurMemoryAndWeSleepUntilItExits) {
  SKIP_WITHOUT_SHARED_MEMORY();
  int seen = 0;
  auto child = vfork_child(0, [&] {
    ::usleep(50 * 1000);  // were we not asleep, we would read 0 below
    seen = 42;
    return 7;
  });
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(seen, 42);
  EXPECT_GE(child->pidfd(), 0);
  int status = child->wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

// The tenant closes everything but its sync socket (close_fds_except): our fds stay open.
TEST(VforkChild, ItsFdTableIsItsOwn) {
  SKIP_WITHOUT_SHARED_MEMORY();
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  int closed = -2;
  auto child = vfork_child(0, [&] {
    closed = ::close(fd);
    return 0;
  });
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(closed, 0);
  EXPECT_GE(::fcntl(fd, F_GETFD), 0) << "the child's close reached our fd table";
  EXPECT_EQ(child->wait(), 0);
  ::close(fd);
}

// A process the tenant forks is a copy as ever: what it writes stays its own.
TEST(VforkChild, AForkOfTheChildIsACopy) {
  SKIP_WITHOUT_SHARED_MEMORY();
  int value = 1;
  int grandchild_status = -1;
  auto child = vfork_child(0, [&] {
    auto g = fork_child([&] {
      value = 2;
      return value == 2 ? 0 : 1;
    });
    if (!g) return 1;
    grandchild_status = g->wait();
    return 0;
  });
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(child->wait(), 0);
  EXPECT_EQ(grandchild_status, 0);
  EXPECT_EQ(value, 1);
}

}  // namespace
}  // namespace berth::container::process
