// linux.resources.unified (v2 and the hybrid unified hierarchy): each key is a file of the
// container's cgroup, written verbatim (one line per write, as runc does), after checking
// that the key names a control file and not one the runtime owns.
#include <cerrno>

#include "cgroups/v2/v2.h"
#include "util/strings.h"

namespace berth::cgroups::v2 {
namespace {

Status check_key(const std::string& key, const std::string& field) {
  if (key.empty() || key.find('/') != std::string::npos || key == "." || key == "..")
    return Error::invalid_spec(field + ": must be a file name (no slashes)");
  auto dot = key.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == key.size())
    return Error::invalid_spec(field + ": must be in the form CONTROLLER.PARAMETER");
  // Membership, pause state and kill belong to the runtime; writing them here would put
  // the container's processes (or its state) out of the runtime's sight.
  for (const char* owned : {"cgroup.procs", "cgroup.threads", "cgroup.kill", "cgroup.freeze"})
    if (key == owned) return Error::invalid_spec(field + ": " + key + " is managed by the runtime");
  return ok();
}

// A failed write: say whether the controller is missing, the more useful message.
Error explain(const Dir& d, const std::string& key, const std::string& field, Error err) {
  int e = err.err();
  if (e == ENOENT || e == EPERM || e == EACCES) {
    std::string controller = key.substr(0, key.find('.'));
    auto avail = d.read("cgroup.controllers");
    bool present = controller == "cgroup";
    if (avail)
      for (const auto& c : str::split_nonempty(str::trim(*avail), ' ')) present |= c == controller;
    if (!present)
      return Error::unsupported(field + ": controller \"" + controller + "\" is not available in " + d.path());
  }
  return std::move(err).context(field);
}

}  // namespace

Status set_unified(const Dir& d, const std::map<std::string, std::string>& unified) {
  for (const auto& [key, value] : unified) {
    std::string field = "linux.resources.unified[\"" + key + "\"]";
    BERTH_TRY(check_key(key, field));
    auto lines = str::split_nonempty(value, '\n');
    if (lines.empty()) lines.push_back(value);
    for (const auto& line : lines) {
      auto st = d.write(key, line);
      if (!st) return explain(d, key, field, std::move(st).error());
    }
  }
  return ok();
}

}  // namespace berth::cgroups::v2
