// linux.uidMappings / linux.gidMappings: written by the parent into /proc/<pid>/{uid,gid}_map
// of a child that created a user namespace and waits for it. Root writes them itself; a
// rootless caller writes a map of its own id alone itself too, and anything more through the
// setuid newuidmap/newgidmap helpers, within its ranges in /etc/subuid and /etc/subgid.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::linux {

std::string format_id_map(const std::vector<spec::IdMapping>& maps);
// A container id mapped to the host, or -1.
int64_t map_to_host(const std::vector<spec::IdMapping>& maps, uint32_t id);

struct SubIdRange {
  uint64_t start = 0, count = 0;
};
// The ranges of `name` (or of its numeric id, as shadow-utils also accepts) in a text in the
// /etc/subuid format ("name:start:count" lines).
std::vector<SubIdRange> subid_ranges(std::string_view text, const std::string& name, unsigned id);

// Who the caller is, for planning the map writes (tests pass their own).
struct MapCaller {
  bool privileged = true;  // euid 0: writes any map itself
  unsigned uid = 0, gid = 0;
  std::string name;                      // the caller's user name ("" when it has none)
  std::string subuid_text, subgid_text;  // /etc/subuid, /etc/subgid ("" when absent)
  std::string newuidmap, newgidmap;      // helper paths ("" when not found)
  static MapCaller current();
};

// How each map is written: by us, or by a helper (its path), and whether setgroups is
// denied first (the kernel demands it for an unprivileged gid_map write).
struct MapPlan {
  std::string uid_helper, gid_helper;  // "" = written directly
  bool deny_setgroups = false;
};

// Checks the maps against what the caller may map and says how to write them; the error
// names the field, the ids that are not the caller's, and the missing helper or range.
Result<MapPlan> plan_id_maps(const std::vector<spec::IdMapping>& uids, const std::vector<spec::IdMapping>& gids,
                             const MapCaller& caller);
Status write_id_maps(pid_t pid, const std::vector<spec::IdMapping>& uids, const std::vector<spec::IdMapping>& gids,
                     const MapPlan& plan);

}  // namespace berth::linux
