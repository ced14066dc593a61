// The last steps of an init or exec tenant: identity (user, groups, HOME), capabilities,
// noNewPrivileges, linux.seccomp (loaded as late as no_new_privs allows), umask, cwd, the
// executable lookup with runc's error texts, waiting for `start` on exec.fifo (init),
// startContainer hooks, and execve with only stdio (+ preserved fds).
#pragma once

#include "container/process/init_config.h"
#include "linux/sys.h"

namespace berth::container::process {

// Everything that can still fail with an error the parent must report (sent over the sync
// socket); then, for the init, kReady and the wait for `start`; for a tenant, execve right
// away (its parent sees the sync socket close). Returns only on failure (or, with a test's
// Sys standing in for execve, 0 where the payload would run). Every call that changes the
// process goes through `sys`.
int run_payload(linux::Sys& sys, InitConfig& cfg);

}  // namespace berth::container::process
