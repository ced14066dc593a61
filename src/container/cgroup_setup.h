// The container's cgroups as create/start/delete/state see them: created from
// linux.cgroupsPath + linux.resources (+ the device rules of the spec, runc's defaults and
// device modules) before the init exists, joined by the init (clone3 CLONE_INTO_CGROUP on
// v2, tasks ← 0 by the child itself on v1, the parent writing where it cannot), frozen for pause, removed on delete. Wraps the
// cgroups library for the container layer.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "cgroups/manager.h"
#include "cgroups/systemd/driver.h"
#include "container/process/init_config.h"
#include "linux/rootfs/plan.h"

namespace berth::container {

struct CgroupSetup {
  std::optional<cgroups::Manager> manager;
  std::map<std::string, std::string> paths;  // controller ("" = unified) → host dir
  int v2_fd = -1;       // pure cgroup v2: the container's directory (Manager::v2_dir_fd)
  // For CLONE_INTO_CGROUP: v2_fd, or a hybrid host's unified hierarchy, where a child born
  // there has only the v1 hierarchies left to join (Manager::unified_dir_fd).
  int unified_fd = -1;
  // --systemd-cgroup: the unit is started once the init's pid exists (systemd puts it in
  // the scope itself): begin_unit/finish_unit for create, join_cgroups for restore; until
  // then there is no manager.
  std::optional<cgroups::systemd::Plan> systemd;
  std::unique_ptr<cgroups::systemd::Bus> bus;
  std::map<std::string, std::string> annotations;
  // create: the unit's start job (begin_unit) until finish_unit awaits it.
  std::string job;
};

// Where setup_cgroups() will put the container, creating nothing (recorded in the state
// first, so that a create killed halfway leaves cgroups `delete` can find).
Result<std::map<std::string, std::string>> planned_cgroup_paths(const spec::Spec& spec, const std::string& id,
                                                                bool systemd);
// extra_rules: device rules added by device modules (GPU/RDMA nodes).
Result<CgroupSetup> setup_cgroups(const spec::Spec& spec, const std::string& id, bool systemd, bool rootless,
                                  const std::vector<spec::DeviceRule>& extra_rules);
// v1_joined: the process moved itself into the v1 hierarchies (self_placement);
// unified_joined: it was born in the unified one (unified_fd). What is left is written.
Status join_cgroups(CgroupSetup& cg, pid_t pid, bool v1_joined = false, bool unified_joined = false);
// --systemd-cgroup's create, in two halves so that the init sets itself up while systemd
// runs the unit's start job: begin_unit starts the unit with `pid` (StartTransientUnit,
// cg.job);
// finish_unit awaits the job, writes the limits and joins `pid` (the same) to the v1
// hierarchies (cg.manager; nothing if no job is pending; a failure has undone the unit);
// abandon_unit, a create's undo when it failed in between, kills what the unit holds and
// stops it.
Status begin_unit(CgroupSetup& cg, pid_t pid);
Status finish_unit(CgroupSetup& cg, pid_t pid);
void abandon_unit(CgroupSetup& cg);
// The v1 hierarchies' tasks files for a child that moves itself there (tasks ← "0", on
// these fds, before anything else), kept in *files for as long as the child may write;
// *out lists them for its config. None (the parent writes) with the systemd driver, when
// rootless, or for a child that cannot write them (user namespace made by its clone).
Status self_placement(const CgroupSetup& cg, std::vector<cgroups::TasksFile>* files,
                      std::vector<process::CgroupTasks>* out);
// systemd: what the container's unit (named by its paths) still holds is killed, then the unit
// is stopped (kill_and_stop: no stop job waiting on an init that ignores SIGTERM).
Status remove_cgroups(const std::map<std::string, std::string>& paths, bool systemd);
// cgroupfs only: removes the container's cgroups if all are empty leaves, one rmdir each;
// false when any is left (busy, or paths that do not load), for the long way.
bool remove_empty_cgroups(const std::map<std::string, std::string>& paths);
bool cgroups_frozen(const std::map<std::string, std::string>& paths);
// What a "cgroup" mount inside the container shows (rootfs plan); the first form for a given
// host layout (tests).
void cgroup_mount_view(const cgroups::Host& host, const std::map<std::string, std::string>& paths,
                       std::vector<linux::rootfs::CgroupDir>* dirs, std::vector<linux::rootfs::LinkStep>* links);
void cgroup_mount_view(const CgroupSetup& cg, std::vector<linux::rootfs::CgroupDir>* dirs,
                       std::vector<linux::rootfs::LinkStep>* links);

}  // namespace berth::container
