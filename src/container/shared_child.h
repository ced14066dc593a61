// SharedChildCheck: the rule of a child that shares berth's memory (process::vfork_child:
// the direct init of `run`, exec's tenant on v1 and hybrid hosts), checked instead of only
// stated: such a child writes where berth reads, so it must store no fd of its own table.
#pragma once

#include <functional>
#include <vector>

#include "berth/result.h"

namespace berth::container {

// The rule of a child that shares our memory (process::vfork_child): it keeps no fds of
// its own where we read. Taken before the clone from what the objects it may use hold; any
// difference once it has exited, or an fd no longer open in our table, is an error.
class SharedChildCheck {
 public:
  using HeldFds = std::function<std::vector<int>()>;
  explicit SharedChildCheck(HeldFds held);
  Status verify() const;

 private:
  HeldFds held_;
  std::vector<int> before_;
};

}  // namespace berth::container
