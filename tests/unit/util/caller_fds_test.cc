// caller_fds: the record is what was open before berth opened anything; a preserved fd
// opened later (one of berth's own) is refused by number, and only the caller's fds cross
// a re-exec. Each case runs in a child: the record is process-wide.
#include "util/caller_fds.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace berth {
namespace {

// Runs f in a child with only stdio and the caller's fds 3 and 5 open; its exit status.
int in_child(int (*f)()) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::syscall(SYS_close_range, 3, ~0U, 0);
    if (::dup2(0, 3) != 3 || ::dup2(0, 5) != 5) ::_exit(100);
    ::_exit(f());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CallerFds, AnFdOpenedAfterTheRecordIsNotTheCallers) {
  EXPECT_EQ(in_child([] {
              caller_fds::record();
              int ours = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // takes 4, the gap
              if (ours != 4) return 1;
              if (!caller_fds::passed(3) || caller_fds::passed(4) || !caller_fds::passed(5)) return 2;
              auto one = caller_fds::check(0, 1);
              if (!one || *one != 1) return 3;
              auto three = caller_fds::check(0, 3);
              if (three || three.error().message() != "--preserve-fds 3: fd 4 was not passed by the caller") return 4;
              auto listen = caller_fds::check(2, 1);
              if (listen || listen.error().message() != "LISTEN_FDS=2: fd 4 was not passed by the caller") return 5;
              return 0;
            }),
            0);
}

TEST(CallerFds, OnlyTheCallersFdsStayInheritableForAReexec) {
  EXPECT_EQ(in_child([] {
              caller_fds::record();
              int ours = ::open("/", O_RDONLY | O_DIRECTORY);  // without O_CLOEXEC, by mistake
              int high = ::fcntl(ours, F_DUPFD, 40);
              caller_fds::cloexec_all_but_passed();
              if (::fcntl(3, F_GETFD) != 0 || ::fcntl(5, F_GETFD) != 0) return 1;
              if (::fcntl(ours, F_GETFD) != FD_CLOEXEC || ::fcntl(high, F_GETFD) != FD_CLOEXEC) return 2;
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace berth
