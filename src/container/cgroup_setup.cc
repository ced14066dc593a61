// Container-level cgroup glue (see cgroup_setup.h). Until the cgroups library lands, the
// container stays in the caller's cgroups and linux.resources / a cgroup mount are refused
// with a clear error, never ignored.
#include "container/cgroup_setup.h"

#include <unistd.h>

#include "util/file.h"
#include "util/strings.h"

namespace berth::container {

Result<CgroupSetup> setup_cgroups(const spec::Spec& spec, const std::string&, bool systemd, bool) {
  if (systemd) return Error::unsupported("systemd cgroup driver requires a running systemd");
  if (spec.linux && spec.linux->resources) {
    const auto& r = *spec.linux->resources;
    bool only_devices = !r.memory && !r.cpu && !r.pids && !r.block_io && r.hugepage_limits.empty() &&
                        !r.network && r.rdma.empty() && r.unified.empty();
    if (!only_devices) return Error::unsupported("linux.resources: cgroup limits are not supported by this build yet");
  }
  return CgroupSetup{};
}

Status join_cgroups(const CgroupSetup&, pid_t) { return ok(); }
Status remove_cgroups(const std::map<std::string, std::string>&) { return ok(); }

bool cgroups_frozen(const std::map<std::string, std::string>& paths) {
  if (auto it = paths.find("freezer"); it != paths.end()) {
    auto t = file::read(it->second + "/freezer.state");
    return t && str::trim(*t) == "FROZEN";
  }
  if (auto it = paths.find(""); it != paths.end()) {
    auto t = file::read(it->second + "/cgroup.freeze");
    return t && str::trim(*t) == "1";
  }
  return false;
}

void close_cgroup_fd(CgroupSetup& cg) {
  if (cg.v2_fd >= 0) ::close(cg.v2_fd);
  cg.v2_fd = -1;
}

}  // namespace berth::container
