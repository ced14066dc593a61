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

// Bind sources of a container with a user namespace, which its root may not reach (a 0700
// directory of the host's root): as runc, the runtime opens them on the host's side, but
// in the init's mount namespace (/proc/<init>/root), so that the clone the init cuts from
// the fd keeps the locks the kernel put on the mounts copied into a less privileged
// namespace (a host read-only bind stays read-only). The indexes into plan.mounts: binds
// that are not remounts and not prepared idmapped trees.
std::vector<size_t> runtime_opened_binds(const RootfsPlan& plan);
// The runtime's side: source `i` opened O_PATH beneath the init's root (`init_root`, an
// fd of /proc/<init>/root); absolute symlinks stay inside that view.
Result<UniqueFd> open_bind_source(Sys& sys, int init_root, const RootfsPlan& plan, size_t i);
// The init's side: the detached tree of source fd `src` (recursive for rbind), put into
// MountStep::prepared, where mount_bind attaches it beneath the rootfs.
Status adopt_bind_source(Sys& sys, RootfsPlan& plan, size_t i, int src);

}  // namespace berth::linux::rootfs
