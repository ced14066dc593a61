// CDI spec directories and device name resolution (see registry.h).
#include "devices/cdi/registry.h"

#include <dirent.h>

#include <algorithm>

#include "util/file.h"
#include "util/strings.h"

namespace berth::devices::cdi {
namespace {

std::vector<std::string> spec_files(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n[0] == '.') continue;
    if (str::ends_with(n, ".json") || str::ends_with(n, ".yaml") || str::ends_with(n, ".yml")) out.push_back(dir + "/" + n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string known_devices(const Registry& reg, const std::string& kind) {
  std::vector<std::string> names;
  for (const auto& s : reg.specs)
    if (s.kind == kind)
      for (const auto& d : s.devices)
        if (std::find(names.begin(), names.end(), d.name) == names.end()) names.push_back(d.name);
  return names.empty() ? "none" : str::join(names, ", ");
}

}  // namespace

Registry load_registry(const std::vector<std::string>& dirs) {
  Registry reg;
  for (size_t i = 0; i < dirs.size(); ++i)
    for (const auto& path : spec_files(dirs[i])) {
      auto text = file::read(path, 4u << 20);
      auto spec = text ? parse_spec(*text, path) : Result<Spec>(std::move(text).error());
      if (!spec) {
        reg.errors.push_back(spec.error().message());
        continue;
      }
      reg.specs.push_back(std::move(*spec));
      reg.priority.push_back(i);
    }
  return reg;
}

Result<std::vector<Resolved>> resolve(const Registry& reg, const std::vector<QualifiedName>& names) {
  std::vector<Resolved> out;
  for (const auto& n : names) {
    std::vector<Resolved> hits;
    size_t best = 0;
    for (size_t i = 0; i < reg.specs.size(); ++i) {
      const Spec& s = reg.specs[i];
      if (s.kind != n.kind) continue;
      for (const auto& d : s.devices) {
        if (d.name != n.device) continue;
        if (!hits.empty() && reg.priority[i] > best) hits.clear();
        if (hits.empty() || reg.priority[i] == best) hits.push_back({n, &s, &d}), best = reg.priority[i];
      }
    }
    if (hits.size() > 1)
      return Error::invalid_spec("CDI device " + n.text() + " is defined by both " + hits[0].spec->source + " and " +
                                 hits[1].spec->source);
    if (hits.empty()) {
      std::string msg = "unknown CDI device " + n.text() + " (" + n.kind + " devices: " + known_devices(reg, n.kind) + ")";
      if (!reg.errors.empty()) msg += "; unusable spec files: " + str::join(reg.errors, "; ");
      return Error::invalid_spec(msg);
    }
    out.push_back(hits[0]);
  }
  return out;
}

}  // namespace berth::devices::cdi
