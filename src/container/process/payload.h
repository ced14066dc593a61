// The last steps of an init or exec tenant: identity (user, groups, HOME), capabilities,
// noNewPrivileges, umask, cwd, the executable lookup with runc's error texts, waiting for
// `start` on exec.fifo, startContainer hooks, and execve with only stdio (+ preserved fds).
#pragma once

#include "container/process/init_config.h"

namespace berth::container::process {

// Everything that can still fail with an error `create` must report (sent over the sync
// socket); then kReady, the wait for `start`, and execve. Returns only on failure.
int run_payload(InitConfig& cfg);

}  // namespace berth::container::process
