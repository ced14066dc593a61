// Environment lists (see env.h).
#include "util/env.h"

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

}  // namespace berth::env
