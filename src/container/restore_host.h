// What `restore` changes on the host around CRIU, each step through linux::Sys: the rootfs
// bound at <state dir>/criu-root, the missing mount points made in the rootfs (mounts[]),
// and the empty network namespace of `--empty-ns network`. Golden and fail-each-call tests
// pin the order (tests/unit/container/restore_host_test.cc).
#pragma once

#include <string>

#include "berth/result.h"
#include "berth/spec.h"
#include "linux/sys.h"
#include "util/rollback.h"
#include "util/unique_fd.h"

namespace berth::container {

// CRIU wants the root a mount point of its own; runc binds the rootfs at
// <state dir>/criu-root for the time of the restore. Returns that path; the directory's
// removal goes on `undo` (the bind's removal is unbind_root's, once CRIU is done).
Result<std::string> bind_root(linux::Sys& sys, int state_dirfd, const std::string& state_dir,
                              const std::string& rootfs, Rollback& undo);
void unbind_root(linux::Sys& sys, int state_dirfd, const std::string& at);

// Mount points missing from the rootfs, made as runc makes them before a restore.
Status prepare_mountpoints(linux::Sys& sys, const spec::Spec& spec, const std::string& rootfs,
                           const std::string& bundle);

// A new network namespace with nothing in it, for CRIU's empty_ns; our thread enters it
// only to open a handle and returns to its own.
Result<UniqueFd> new_empty_netns(linux::Sys& sys);

}  // namespace berth::container
