// User namespace id maps (see userns.h).
#include "linux/userns.h"

#include <fcntl.h>

#include "util/file.h"

namespace berth::linux {

std::string format_id_map(const std::vector<spec::IdMapping>& maps) {
  std::string out;
  for (const auto& m : maps)
    out += std::to_string(m.container_id) + " " + std::to_string(m.host_id) + " " + std::to_string(m.size) + "\n";
  return out;
}

Status write_id_maps(pid_t pid, const std::vector<spec::IdMapping>& uids, const std::vector<spec::IdMapping>& gids,
                     bool deny_setgroups) {
  std::string base = "/proc/" + std::to_string(pid) + "/";
  if (deny_setgroups) BERTH_TRY(file::write_existing(AT_FDCWD, base + "setgroups", "deny"));
  // The whole map in one write(2): the kernel accepts exactly one write per map file.
  if (!uids.empty()) BERTH_TRY(file::write_existing(AT_FDCWD, base + "uid_map", format_id_map(uids)).context("write uid_map"));
  if (!gids.empty()) BERTH_TRY(file::write_existing(AT_FDCWD, base + "gid_map", format_id_map(gids)).context("write gid_map"));
  return ok();
}

int64_t map_to_host(const std::vector<spec::IdMapping>& maps, uint32_t id) {
  for (const auto& m : maps)
    if (id >= m.container_id && id - m.container_id < m.size) return static_cast<int64_t>(m.host_id) + (id - m.container_id);
  return -1;
}

}  // namespace berth::linux
