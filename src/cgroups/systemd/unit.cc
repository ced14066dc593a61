// systemd unit naming for linux.cgroupsPath "slice:prefix:name" (runc's rules): see unit.h.
#include "cgroups/systemd/unit.h"

#include "util/strings.h"

namespace berth::cgroups::systemd {
namespace {

constexpr size_t kUnitNameMax = 255;  // systemd's UNIT_NAME_MAX less the NUL

bool valid_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' ||
         c == '_' || c == '.' || c == '-' || c == '\\';
}

Error invalid(std::string_view what, std::string_view name) {
  return Error::invalid_spec("linux.cgroupsPath: invalid " + std::string(what) + " name: " +
                             str::go_quote(name));
}

}  // namespace

bool valid_unit_name(std::string_view name) {
  if (name.empty() || name.size() > kUnitNameMax) return false;
  for (char c : name)
    if (!valid_char(c)) return false;
  std::string_view stem;
  if (str::ends_with(name, ".scope")) stem = name.substr(0, name.size() - 6);
  else if (str::ends_with(name, ".slice")) stem = name.substr(0, name.size() - 6);
  else return false;
  // systemd takes the suffix from the last '.', so "a.b.scope" is fine but ".scope" is not.
  return !stem.empty();
}

Result<std::string> expand_slice(std::string_view slice) {
  constexpr std::string_view kSuffix = ".slice";
  if (slice.size() < kSuffix.size() || !str::ends_with(slice, kSuffix) ||
      slice.find('/') != std::string_view::npos)
    return invalid("slice", slice);
  std::string_view stem = slice.substr(0, slice.size() - kSuffix.size());
  if (stem == "-") return std::string("/");  // the root slice
  if (!valid_unit_name(slice)) return invalid("slice", slice);
  std::string path, prefix;
  for (const auto& part : str::split(stem, '-')) {
    if (part.empty()) return invalid("slice", slice);  // "a--b.slice", "-a.slice", "a-.slice"
    path += "/" + prefix + part + std::string(kSuffix);
    prefix += part + "-";
  }
  return path;
}

Result<Unit> unit_for(std::string_view cgroups_path, std::string_view id, bool rootless) {
  std::string slice, prefix, name;
  if (cgroups_path.empty()) {
    prefix = kDefaultPrefix;
    name = std::string(id);
  } else {
    auto parts = str::split(cgroups_path, ':');
    if (parts.size() != 3)
      return Error::invalid_spec(
          "expected cgroupsPath to be of format \"slice:prefix:name\" for systemd cgroups, got " +
          str::go_quote(cgroups_path) + " instead");
    slice = parts[0];
    prefix = parts[1];
    name = parts[2];
  }
  if (slice.empty()) slice = rootless ? "user.slice" : "system.slice";
  if (name.empty()) return invalid("unit", name);

  Unit u;
  u.slice = slice;
  u.is_slice = str::ends_with(name, ".slice");
  // runc: a name ending in ".slice" asks for that slice itself (kubelet's pod slices).
  u.name = u.is_slice ? name : prefix + "-" + name + ".scope";
  // The root slice "-.slice" always exists and is nobody's to create or stop.
  if (!valid_unit_name(u.name) || (u.is_slice && (u.name == "-.slice" || !expand_slice(u.name))))
    return invalid("unit", u.name);
  BERTH_ASSIGN(std::string parent, expand_slice(slice));
  u.path = (parent == "/" ? "" : parent) + "/" + u.name;
  return u;
}

}  // namespace berth::cgroups::systemd
