// The floor of the process engine: the steps the init (init.cc), an exec tenant
// (tenant.cc) and their payload (payload.cc) share. Those three are leaves over it: none
// includes another's header but payload.h (the common tail both stages end in), and
// nothing in process/ includes from container/ above it (hooks come in through
// InitConfig::run_hooks).
#pragma once

#include "container/process/init_config.h"
#include "container/process/sync.h"
#include "linux/sys.h"

namespace berth::linux::rootfs {
class Applier;
}

namespace berth::container::process {

// Empty signal mask, default dispositions: the payload inherits both across execve. Left
// off the seam: process-local state, and neither call can fail with these arguments.
void reset_signals();
// The next message from the runtime, a kSettled ahead of it taken (settle_pending cleared).
Result<Message> receive_from_runtime(InitConfig& cfg);
// The next message must be `type` (a kError becomes the error).
Status wait_for(InitConfig& cfg, Msg type);
// Returns once the parent's kSettled came (at once if it came already or none is due).
Status wait_settled(InitConfig& cfg);
// process.rlimits, oomScoreAdj, the session keyring, scheduler, ioPriority,
// linux.personality and linux.memoryPolicy, applied to the calling process.
Status apply_process_attributes(linux::Sys& sys, const InitConfig& cfg);
// A pty from the devpts behind <root_fd>/dev/ptmx, made the controlling terminal and stdio,
// its master sent to the parent (kConsole). fs: bind it on /dev/console too (the init).
Status open_console(linux::Sys& sys, InitConfig& cfg, int root_fd, linux::rootfs::Applier* fs);

}  // namespace berth::container::process
