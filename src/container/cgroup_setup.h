// The container's cgroups as create/start/delete/state see them: created from
// linux.cgroupsPath + linux.resources before the init exists, joined by the init, frozen
// for pause, removed on delete. Wraps the cgroups library for the container layer.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "linux/rootfs/plan.h"

namespace berth::container {

struct CgroupSetup {
  std::map<std::string, std::string> paths;  // controller ("" = unified) → host dir
  int v2_fd = -1;                            // for CLONE_INTO_CGROUP
  bool created = false;
  std::vector<linux::rootfs::CgroupDir> mount_dirs;  // what a "cgroup" mount shows
  std::vector<linux::rootfs::LinkStep> mount_links;
};

Result<CgroupSetup> setup_cgroups(const spec::Spec& spec, const std::string& id, bool systemd, bool rootless);
Status join_cgroups(const CgroupSetup& cg, pid_t pid);
Status remove_cgroups(const std::map<std::string, std::string>& paths);
bool cgroups_frozen(const std::map<std::string, std::string>& paths);
void close_cgroup_fd(CgroupSetup& cg);

}  // namespace berth::container
