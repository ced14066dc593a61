// The container init: what the cloned child does, step by step, from namespaces to
// execve. Runs only in the child; reports errors to the parent over the sync socket and
// exits instead of returning them.
#pragma once

#include "container/process/init_config.h"
#include "linux/sys.h"

namespace berth::container::process {

// The child's entry point; returns the exit status for _exit (only on failure).
int init_main(InitConfig& cfg);

// Our pid as the host sees it, read from /proc/self while /proc is still the host's
// procfs (before the pivot, in a new pid namespace too); 0 when it cannot be read.
pid_t host_pid_from_proc();

// The init's sequences over the seam (init_main runs them with linux::real_sys(); tests
// with a recording fake). Stage one: parent death signal, non-dumpable, wait for kGo,
// namespace joins in plan order, a late user namespace (kMapIds), the other unshares,
// root in a user namespace (groups < gid < uid), time offsets. Stage two: new session,
// hostname, domainname, chroot or the rootfs plan with its pivot, the pty, the process
// attributes (the payload follows: payload.h).
Status init_stage_one(linux::Sys& sys, InitConfig& cfg);
Status init_stage_two(linux::Sys& sys, InitConfig& cfg);

}  // namespace berth::container::process
