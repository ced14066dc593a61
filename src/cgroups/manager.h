// berth::cgroups::Manager: a container's cgroups on any host layout (v1, pure v2, hybrid),
// with berth's own cgroupfs driver (no systemd). create() places the container (linux.
// cgroupsPath, runc's rules) and writes the limits that are set; load() rebuilds it from
// the paths kept in the container's state; the rest is what create/start/exec/kill/pause/
// update/events/delete need. One directory fd per hierarchy, opened once; mountinfo is read
// once per process (detect.h), never per operation.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "cgroups/common/device_rule.h"
#include "cgroups/controller.h"
#include "cgroups/detect.h"
#include "cgroups/fs.h"
#include "cgroups/stats.h"
#include "util/unique_fd.h"

namespace berth::cgroups {

struct Config {
  std::string cgroups_path;  // linux.cgroupsPath; empty → "<caller's cgroup>/<id>"
  std::string id;
  const spec::Resources* resources = nullptr;  // may be null
  // The final list: the spec's rules, then default_allowed_devices(), then GPU/RDMA rules
  // (runc's order). Empty leaves the device controller alone.
  std::vector<DeviceRule> device_rules;
  bool systemd = false;   // --systemd-cgroup: cgroups/systemd/driver.h plans it; refused here
  bool rootless = false;  // no explicit path: hierarchies we may not write are skipped
  const Host* host = nullptr;  // null: this machine; tests pass a fake tree's Host
};

// A v1 hierarchy's `tasks` file, open for writing (Manager::open_v1_tasks).
struct TasksFile {
  UniqueFd fd;
  std::string path;
};

class Manager {
 public:
  Manager(Manager&&) = default;
  Manager& operator=(Manager&&) = default;

  // mkdir in every hierarchy, copy cpuset from the parents (v1), write the limits. On
  // failure every directory it made is removed again.
  static Result<Manager> create(const Config& config);
  // The paths create() would use (controller → dir, "" = unified), touching nothing: the
  // caller records them before the directories exist, so that a runtime killed in the
  // middle of create() leaves cgroups that a later delete knows of.
  static Result<std::map<std::string, std::string>> planned_paths(const Config& config);
  // From the state's paths (controller → dir, "" = unified). Opens nothing yet.
  static Result<Manager> load(const std::map<std::string, std::string>& paths);

  Layout layout() const { return layout_; }
  // controller ("" = unified) → absolute directory; co-mounted controllers share one.
  std::map<std::string, std::string> paths() const;
  // The unified directory for clone3(CLONE_INTO_CGROUP) on a pure v2 host; -1 on v1 and
  // hybrid (where the v1 hierarchies need add_process anyway).
  int v2_dir_fd() const;
  // The cgroup2 directory a child can be born in (CLONE_INTO_CGROUP): v2_dir_fd on pure v2,
  // and on a hybrid host its unified hierarchy's (then only the v1 ones are left to join;
  // the parent's cgroup.procs write there waits for an RCU grace period). -1 on v1, where
  // the directory did not open, and for a rootless hybrid create (a cgroup we may not
  // write is skipped there, which a clone into it would refuse instead).
  int unified_dir_fd() const;

  // Writes pid to cgroup.procs of every hierarchy (v1, hybrid; v2 without clone3);
  // v1 = false: not the v1 ones (joined through open_v1_tasks); unified = false: not the
  // unified one (the child was born there, unified_dir_fd). Both false: nothing is
  // written (callers need not check), and nothing allocated (a shared-memory child calls it).
  Status add_process(pid_t pid, bool v1 = true, bool unified = true);
  // The tasks file of every v1 hierarchy, opened now for a child that moves itself there
  // (writes "0" while it is one thread): the kernel takes no global lock for that, where a
  // write to cgroup.procs waits for an RCU grace period. Empty when rootless (a hierarchy
  // we may not write is skipped, which the parent decides on the way).
  Result<std::vector<TasksFile>> open_v1_tasks() const;
  // Opens every hierarchy's directory now, and none later: add_process run by a child that
  // shares our memory (exec's tenant, CLONE_VM) then writes only through fds that are ours
  // too, and caches none that would be open in its fd table alone.
  void open_all() const;
  // The hierarchy directory fds open now: what such a child must leave as it found them.
  std::vector<int> held_fds() const;
  Status freeze();
  Status thaw();
  Result<bool> frozen() const;
  // Every process of the container, sub-cgroups included: the union of all hierarchies
  // (sorted), so that one put into a pre-existing cgroup of some hierarchies is found too.
  Result<std::vector<pid_t>> pids() const;
  // `runc update`: zero or absent fields stay as they are (Docker sends zeros). Device
  // rules change only when `devices` is given: on v2 the new program replaces the old one
  // atomically; on v1 only the difference is written.
  Status update(const spec::Resources& resources, const std::vector<DeviceRule>* devices = nullptr);
  Result<Stats> stats() const;
  // Readable on OOM: v1 an eventfd on memory.oom_control (also signalled when the cgroup is
  // removed); v2 an inotify fd on memory.events. Then read oom_kill_count().
  Result<UniqueFd> oom_event_fd();
  Result<uint64_t> oom_kill_count() const;
  // SIGKILL to every process of the container, before its cgroup (or its systemd unit) goes:
  // cgroup.kill where the kernel has it (5.14; the whole subtree at once, so nothing forks
  // past it), else frozen, each listed pid signalled, thawed. Does not wait for them.
  Status kill();
  // rmdir everywhere (children first, EBUSY retried briefly); a missing directory is fine.
  Status destroy();
  // One rmdir per hierarchy, no retry, no listing: true when none is left (gone or
  // missing). A cgroup still busy (a process, a sub-cgroup) stays for destroy().
  bool remove_empty();

 private:
  struct Hier {
    std::vector<std::string> names;  // v1 controllers sharing the directory; {""} unified
    std::string path;
    mutable UniqueFd fd;
    mutable int open_err = 0;  // errno of the failed open
  };
  Manager() = default;
  Dir dir(std::string_view controller) const;  // invalid Dir when absent
  Status apply(const spec::Resources& r, const std::vector<DeviceRule>* devices, bool update);
  Status apply_v1(const SetContext& ctx);
  Status apply_v2(const SetContext& ctx);
  Status rootless_without_cgroup(const SetContext& ctx);

  Layout layout_ = Layout::kV1;
  std::vector<Hier> hiers_;  // v1 hierarchies, then the unified one (v2, hybrid)
  bool rootless_ = false;
  bool explicit_path_ = false;
  mutable bool opened_all_ = false;
};

}  // namespace berth::cgroups
