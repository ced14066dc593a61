// The init's stdio on the host's /dev/null, moved onto the container's own /dev/null after
// the pivot (runc's reOpenDevNull), so that no descriptor of the host's /dev is left in the
// container (CRIU cannot dump one: "Can't lookup mount=N for fd=0 path=/dev/null").
#pragma once

#include "berth/result.h"
#include "linux/sys.h"

namespace berth::linux::rootfs {

// For each of fds 0-2 that is the null device (1:3), dup the container's /dev/null (opened
// without following symlinks and checked to be 1:3) over it. Nothing is done when the
// container's /dev/null is missing or is not the null device. Call after the pivot, only
// when berth made /dev (RootfsPlan::setup_dev), as runc does.
Status reopen_stdio_dev_null(Sys& sys);

}  // namespace berth::linux::rootfs
