// The systemd driver's naming (linux.cgroupsPath "slice:prefix:name" with --systemd-cgroup):
// which unit berth asks systemd for, in which slice, and where its cgroup lives, as runc's
// specconv and libcontainer/cgroups/systemd compute them. Every part comes from a config, so
// every part is checked against systemd's unit-name rules before it names anything.
#pragma once

#include <string>
#include <string_view>

#include "berth/result.h"

namespace berth::cgroups::systemd {

// The runtime's name in the default form "<slice>:<kDefaultPrefix>:<id>" (runc uses "runc").
inline constexpr std::string_view kDefaultPrefix = "berth";

struct Unit {
  std::string slice;  // the Slice= (scope) or Wants= (slice) value: "system.slice"
  std::string name;   // "docker-abc.scope", or "<name>.slice" when the name asks for a slice
  std::string path;   // the cgroup below the hierarchy's root: "/system.slice/docker-abc.scope"
  bool is_slice = false;
};

// systemd's unit_name_is_valid for a plain (non-template) name: 1..255 bytes of
// [A-Za-z0-9:_.\-\\], a non-empty stem and a known suffix (".scope" or ".slice" here).
bool valid_unit_name(std::string_view name);

// runc's ExpandSlice: "a-b-c.slice" → "/a.slice/a-b.slice/a-b-c.slice"; "-.slice" → "/".
// Refused as runc refuses them: no ".slice" suffix, a '/', an empty component ("a--b",
// "-a"), plus any name systemd itself would refuse.
Result<std::string> expand_slice(std::string_view slice);

// linux.cgroupsPath → the unit. Empty: "<system.slice|user.slice>:berth:<id>" (user.slice
// when rootless, as runc). Otherwise exactly three ':'-separated parts; an empty slice
// means the default; the name gets "<prefix>-<name>.scope" unless it ends in ".slice".
Result<Unit> unit_for(std::string_view cgroups_path, std::string_view id, bool rootless);

}  // namespace berth::cgroups::systemd
