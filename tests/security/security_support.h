// Shared by the attack tests: which processes live in a pid namespace (zombies left to a
// host init that does not reap them are not alive: they hold no resource but a pid).
#pragma once

#include <filesystem>
#include <string>

#include "support/exec_helpers.h"

namespace berth::test {

inline int live_in_pidns(const std::string& ns) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (link_of("/proc/" + name + "/ns/pid") != ns) continue;
    std::string stat = read_text("/proc/" + name + "/stat");
    size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z') ++n;
  }
  return n;
}

}  // namespace berth::test
