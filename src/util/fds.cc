// close_fds_except (see fds.h).
#include "util/fds.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace berth {

void close_fds_except(const std::vector<int>& keep) {
  unsigned from = 3;
  for (;;) {
    // The next kept fd at or above `from`: a few fds, scanned in place, never sorted into a
    // copy (the caller may be a child between fork and exec).
    long next = -1;
    for (int fd : keep)
      if (fd >= 0 && static_cast<unsigned>(fd) >= from && (next < 0 || fd < next)) next = fd;
    if (next < 0) break;
    if (static_cast<unsigned>(next) > from) ::syscall(SYS_close_range, from, static_cast<unsigned>(next) - 1, 0);
    from = static_cast<unsigned>(next) + 1;
  }
  ::syscall(SYS_close_range, from, ~0U, 0);
}

}  // namespace berth
