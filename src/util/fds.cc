// close_fds_except (see fds.h).
#include "util/fds.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace berth {

void close_fds_except(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  unsigned from = 3;
  for (int fd : keep) {
    if (fd < static_cast<int>(from)) continue;
    if (static_cast<unsigned>(fd) > from) ::syscall(SYS_close_range, from, static_cast<unsigned>(fd) - 1, 0);
    from = static_cast<unsigned>(fd) + 1;
  }
  ::syscall(SYS_close_range, from, ~0U, 0);
}

}  // namespace berth
