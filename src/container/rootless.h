// What create checks and decides for a rootless caller before anything exists: runc's
// rules (an unprivileged caller needs a user namespace it creates with both maps, or one it
// joins) and how linux.uidMappings/gidMappings will be written (linux/userns.h).
#pragma once

#include "berth/result.h"
#include "berth/spec.h"
#include "linux/userns.h"

namespace berth::container {

struct UserNsPlan {
  bool creates = false;           // a new user namespace (no path)
  bool unprivileged = false;      // the writer of its maps is not root
  linux::MapPlan maps;
};

Result<UserNsPlan> plan_user_ns(const spec::Spec& spec, const linux::MapCaller& caller);

}  // namespace berth::container
