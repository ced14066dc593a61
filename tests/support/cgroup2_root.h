// The cgroup2 hierarchy as this host mounts it, for tests of placement on cgroup v2.
#pragma once

#include <sys/statfs.h>

#include <string>

namespace berth::test {

// /sys/fs/cgroup on a pure v2 host, /sys/fs/cgroup/unified on a hybrid one ("" when there is
// none).
inline std::string cgroup2_root() {
  constexpr long kCgroup2Magic = 0x63677270;
  for (const char* dir : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    struct statfs st {};
    if (::statfs(dir, &st) == 0 && st.f_type == kCgroup2Magic) return dir;
  }
  return "";
}

}  // namespace berth::test
