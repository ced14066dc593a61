// SharedChildCheck (shared_child.h): the fds berth's objects hold, before and after a child
// that shared its memory.
#include "container/shared_child.h"

#include <fcntl.h>

#include <algorithm>
#include <string>

namespace berth::container {

SharedChildCheck::SharedChildCheck(HeldFds held) : held_(std::move(held)), before_(held_()) {}

Status SharedChildCheck::verify() const {
  std::vector<int> now = held_();
  for (int fd : now) {
    bool ours = std::find(before_.begin(), before_.end(), fd) != before_.end();
    if (!ours || ::fcntl(fd, F_GETFD) < 0)
      return Error::generic("a child sharing our memory left fd " + std::to_string(fd) + " of its own in it");
  }
  if (now.size() != before_.size()) return Error::generic("a child sharing our memory closed an fd of ours in it");
  return ok();
}

}  // namespace berth::container
