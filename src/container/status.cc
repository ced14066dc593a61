// Status derivation (see status.h).
#include "container/status.h"

#include <time.h>

#include "container/cgroup_setup.h"
#include "linux/paths.h"
#include "linux/proc.h"
#include "util/utc_time.h"

namespace berth::container {

ContainerStatus derive_status(const ContainerDir& dir, const ContainerRecord& r) {
  if (r.pid == 0) return ContainerStatus::kCreating;
  if (!linux::process_alive(r.pid, r.pid_start_time)) return ContainerStatus::kStopped;
  if (dir.setting_up()) return ContainerStatus::kCreating;
  // Frozen first: a created container can be paused too, and runc then says "paused"
  // (start refuses it, kill KILL thaws it, resume makes it "created" again).
  if (cgroups_frozen(r.cgroup_paths)) return ContainerStatus::kPaused;
  if (dir.has_fifo()) return ContainerStatus::kCreated;
  return ContainerStatus::kRunning;
}

OciState to_oci_state(const ContainerRecord& r, ContainerStatus s) {
  OciState o;
  o.oci_version = r.oci_version;
  o.id = r.id;
  o.status = status_name(s);
  // runc reports pid 0 for a stopped container.
  o.pid = s == ContainerStatus::kStopped ? 0 : r.pid;
  o.bundle = r.bundle;
  o.rootfs = r.rootfs;
  o.created = r.created;
  o.owner = r.owner;
  o.annotations = r.annotations;
  return o;
}

ContainerRecord new_record(const spec::Spec& spec, const std::string& id, const std::string& bundle,
                           bool systemd_cgroup) {
  ContainerRecord r;
  r.oci_version = spec.oci_version;
  r.id = id;
  r.bundle = bundle;
  // As runc: an absolute root.path is kept as written, a relative one joined to the bundle.
  const std::string& root = spec.root->path;
  r.rootfs = root[0] == '/' ? root : linux::clean_path(bundle + "/" + root);
  r.created = now_rfc3339_nano();
  r.annotations = spec.annotations;
  r.systemd_cgroup = systemd_cgroup;
  return r;
}

std::string now_rfc3339_nano() {
  // Go's RFC3339Nano in UTC, formatted without gmtime_r: glibc's first gmtime_r in a
  // process reads /etc/localtime (util/utc_time.h).
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return utc::rfc3339_nano(ts);
}

}  // namespace berth::container
