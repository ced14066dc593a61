// Running a CRIU request: berth starts `criu swrk` and speaks its RPC (criu_req/criu_resp,
// protobuf over a socketpair, as runc and crun do). Built only when configure found CRIU's
// rpc.proto code (BERTH_HAVE_CRIU); otherwise every call says berth was built without it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "berth/result.h"
#include "container/criu/request.h"
#include "util/unique_fd.h"

namespace berth::container::criu {

bool built_with_criu();
// "berth was built without CRIU support ...": what both commands answer without CRIU's code.
Error not_built();

// checkpoint --lazy-pages: CRIU's FEATURE_CHECK (userfaultfd), as runc asks before dumping.
Status check_lazy_pages(const std::string& criu_binary);

// CRIU's notifications during a restore ("setup-namespaces", "post-restore", ...), with the
// restored init's pid; an error aborts the restore.
using Notify = std::function<Status(const std::string& action, pid_t pid)>;

struct Outcome {
  pid_t pid = 0;        // restore: the restored init, our child (CRIU restores as our sibling)
  UniqueFd pts_master;  // restore: the terminal's master CRIU handed back (orphan pts)
};

// Restore: called with the worker's pid once it runs, before it reads the request: puts
// the worker in the container's cgroups (the systemd unit is started with its pid, as runc
// starts it with its CRIU's) and may complete the request (the cgroup roots, read from where
// the worker landed). The restored tree inherits the worker's cgroups; berth stays in its
// own, so that stopping the unit can never take berth with it.
using Placement = std::function<Status(pid_t worker, Request& r)>;

// Notifications berth answers itself: "orphan-pts-master" (its fd becomes pts_master) and
// "status-ready" (one \0 byte to r.status_fd, lazy pages). Error text as runc's ("criu
// failed: type DUMP errno 0\nlog file: <work>/dump.log"), followed by CRIU's first error line
// (the missing kernel feature when `criu check` fails).
Result<Outcome> execute(const Request& r, const std::string& criu_binary, const Notify& notify,
                        const Placement& place = {});

}  // namespace berth::container::criu
