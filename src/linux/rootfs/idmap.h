// Idmapped binds (mounts[].options idmap/ridmap, mounts[].uidMappings/gidMappings): the
// runtime cuts each source tree and idmaps it before the container's user namespace exists,
// because the kernel wants CAP_SYS_ADMIN over the source's filesystem for MOUNT_ATTR_IDMAP,
// which the init no longer has inside the container's user namespace. The init inherits the
// detached trees and only moves them into place (mounts.cc).
#pragma once

#include <vector>

#include "berth/result.h"
#include "linux/rootfs/plan.h"
#include "linux/sys.h"

namespace berth::linux::rootfs {

// For every idmapped MountStep: a user namespace with its maps (one per distinct pair of
// maps), open_tree(OPEN_TREE_CLONE[|AT_RECURSIVE]) of the source, mount_setattr
// MOUNT_ATTR_IDMAP (recursive for ridmap). Fills MountStep::prepared.
Status prepare_idmapped_mounts(Sys& sys, RootfsPlan& plan);

// The fds of the prepared trees, which the runtime keeps open across its fd cleanup before
// the init runs.
std::vector<int> prepared_fds(const RootfsPlan& plan);

}  // namespace berth::linux::rootfs
