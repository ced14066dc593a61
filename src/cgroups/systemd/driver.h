// The systemd cgroup driver (--systemd-cgroup): the container's cgroup is a transient unit
// (a scope, Delegate=yes, in its slice) that systemd creates with the init's pid in it, as
// runc's and crun's systemd managers do; the limits go both to the unit's properties and
// to its cgroup files (the cgroupfs Manager over the unit's path), so that pause/resume,
// ps, kill --all, events and exec work on the paths as with the cgroupfs driver. update
// sets the properties, then the files; delete stops the unit.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <string_view>

#include "berth/result.h"
#include "cgroups/manager.h"
#include "cgroups/systemd/bus.h"
#include "cgroups/systemd/properties.h"
#include "cgroups/systemd/unit.h"

namespace berth::cgroups::systemd {

struct Plan {
  Unit unit;
  Config files;  // the cgroupfs Manager's config for the unit's cgroup (absolute path)
  bool v2 = true;
};

// The unit and cgroup for `cfg` (cgroups_path "slice:prefix:name", or empty); touches nothing.
// Rootless (cfg.rootless) units are the user's manager's (runc's systemdUser, cgroup v2
// only): `manager_cgroup` is that manager's ControlGroup (Bus::control_group), below which
// the unit's slice lies, as runc places it; a rootless plan without one is refused.
Result<Plan> plan(const Config& cfg, const std::string& manager_cgroup = {});

// Whether a unit's cgroup lies in a user manager's subtree (a "user@<uid>.service"
// component, which no slice expansion can produce): the bus that delete and update use.
bool in_user_manager(std::string_view cgroup_path);

// What StartTransientUnit gets, in runc's order: Description, Slice= (Wants= for a slice),
// Delegate=yes, PIDs=[pid], the accounting switches, DefaultDependencies=no, the resources,
// the annotations' properties, OOMPolicy from unified memory.oom.group.
Result<std::vector<Property>> start_properties(const Plan& p, pid_t pid,
                                               const std::map<std::string, std::string>& annotations,
                                               const PropertyOptions& o);

// StartTransientUnit + the job's end (runc: a unit left over as "failed" is reset and the
// start tried once more; a job that does not end "done" is an error, and the unit reset).
Status start_unit(Bus& bus, const std::string& name, const std::vector<Property>& props);
// Its halves: the call (→ the job's path), then the job's end (a unit whose job failed is
// reset; one whose job timed out, stopped, so nothing is left if it ever comes).
Result<std::string> start_job(Bus& bus, const std::string& name, const std::vector<Property>& props);
Status await_start(Bus& bus, const std::string& name, const std::string& job);
// StopUnit + the job's end, then ResetFailedUnit; a unit systemd does not know is fine.
Status stop_unit(Bus& bus, const std::string& name);

// SIGKILL to every process in the unit's cgroup (`paths`, controller → dir; cgroup.kill
// where there is one), then stop_unit: a failed create's or restore's unit, whose init
// (PID 1 of its pid namespace) would ignore the stop's SIGTERM.
Status kill_and_stop(Bus& bus, const std::string& name, const std::map<std::string, std::string>& paths);
// Whether systemd is done with a container's unit, so that delete need not connect at all:
// its cgroup is pruned (the unit stopped) and the unit itself freed, which is when the
// manager removes the unit's file from `transient_dir` (a transient unit's file lives there
// from its start; a failed unit stays loaded, its file with it, until reset). The system
// manager's folder by default; a user's manager keeps its own.
inline constexpr const char* kTransientDir = "/run/systemd/transient";
bool unit_gone(const std::string& name, const std::map<std::string, std::string>& paths,
               const std::string& transient_dir = kTransientDir);
// What delete does with a container's unit: kill_and_stop, unless systemd stopped the unit
// already (its cgroup is gone): then only ResetFailedUnit, for the same end state (a unit
// neither active nor failed) without the StopUnit that would make systemd load it again.
Status remove_unit(Bus& bus, const std::string& name, const std::map<std::string, std::string>& paths);

// The whole create step: start the unit with `pid`, then the cgroupfs Manager over its
// cgroup writes every limit and adds `pid` to the hierarchies systemd left out (v1). On any
// failure after the start, what the unit holds is killed and the unit stopped
// (kill_and_stop): `pid` must not be the caller's own (restore starts it with CRIU's worker).
Result<Manager> start(Bus& bus, const Plan& p, pid_t pid, const std::map<std::string, std::string>& annotations);
// start's halves, for a create whose init sets itself up while systemd runs the job (the
// init waits for finish_start before anything of the container's can run, launch.cc):
// begin_start asks (StartTransientUnit with PIDs=[pid]) and returns the job without
// waiting for it; finish_start awaits it, then writes the files and joins the v1
// hierarchies, undoing the unit on any failure as start does. A begun unit that is never
// finished is the caller's to kill_and_stop.
Result<std::string> begin_start(Bus& bus, const Plan& p, pid_t pid, const std::map<std::string, std::string>& annotations);
Result<Manager> finish_start(Bus& bus, const Plan& p, pid_t pid, const std::string& job);

// `update`: SetUnitProperties (runtime), then the files.
Status update(Bus& bus, const std::string& unit, Manager& m, const spec::Resources& r,
              const std::vector<DeviceRule>* devices = nullptr);

// The unit of a container from its recorded cgroup paths (the last component of each, the
// same everywhere by construction); empty when they disagree or do not name a unit.
std::string unit_of(const std::map<std::string, std::string>& paths);

}  // namespace berth::cgroups::systemd
