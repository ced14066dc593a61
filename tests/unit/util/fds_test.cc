// close_fds_except: only the kept fds (any order, repeats, stdio listed) survive, in a child.
#include "util/fds.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace berth {
namespace {

TEST(CloseFdsExcept, KeepsExactlyTheListedFdsInAnyOrder) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Eight fds at known numbers from 20 up, then keep three of them, unsorted, one twice.
    for (int fd = 20; fd < 28; ++fd)
      if (::dup2(0, fd) != fd) ::_exit(10);
    close_fds_except({26, 1, 21, 26, 23, -1});
    int bits = 0;
    for (int fd = 3; fd < 64; ++fd)
      if (::fcntl(fd, F_GETFD) >= 0) bits |= fd == 21 ? 1 : fd == 23 ? 2 : fd == 26 ? 4 : 8;
    ::_exit(bits);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7) << "1|2|4: 21, 23 and 26 open; 8: another fd >= 3 open; 10: dup2 failed";
}

}  // namespace
}  // namespace berth
