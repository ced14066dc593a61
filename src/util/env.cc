// Environment lists (see env.h).
#include "util/env.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <unordered_map>

namespace berth::env {

std::vector<std::string> merge(const std::vector<std::string>& entries) {
  std::vector<std::string> out;
  std::unordered_map<std::string, size_t> at;
  for (const auto& e : entries) {
    auto [it, fresh] = at.emplace(e.substr(0, e.find('=')), out.size());
    if (fresh)
      out.push_back(e);
    else
      out[it->second] = e;
  }
  return out;
}

void scrub_own_environment() {
  ::tzset();
  if (!environ) return;
  // berth never calls setenv or putenv: every entry is one of the strings the kernel put
  // on our stack at execve, the range /proc/<pid>/environ shows.
  for (char** e = environ; *e; ++e) ::explicit_bzero(*e, ::strlen(*e));
  ::clearenv();
}

}  // namespace berth::env
