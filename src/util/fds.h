// Closing every fd but a few: how a freshly cloned init drops what it inherited from the
// runtime (the state directory's lock, the store, the parent's socket end) at once.
#pragma once

#include <vector>

namespace berth {

// Closes all fds >= 3 that are not in `keep` (close_range over the gaps). `keep` may be in
// any order, with repeats and stdio in it. No allocation: callers run it between fork (or
// clone) and exec.
void close_fds_except(const std::vector<int>& keep);

}  // namespace berth
