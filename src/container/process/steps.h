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
// The next message from the runtime, the notices the parent sends unasked ahead of it
// taken: kSettled (settle_pending cleared) and kPlaced (placement_pending cleared).
Result<Message> receive_from_runtime(InitConfig& cfg);
// The next message must be `type` (a kError becomes the error).
Status wait_for(InitConfig& cfg, Msg type);
// Returns once the parent's kSettled came (at once if it came already or none is due).
Status wait_settled(InitConfig& cfg);
// Returns once the parent's kPlaced came (at once if it came already or none is due).
Status wait_placed(InitConfig& cfg);
// cfg.cgroup_tasks: "0" to each (ourselves, a single thread), in the parent's order.
Status join_v1_cgroups(linux::Sys& sys, const InitConfig& cfg);
// process.rlimits, oomScoreAdj, the session keyring, scheduler, ioPriority,
// linux.personality and linux.memoryPolicy, applied to the calling process.
Status apply_process_attributes(linux::Sys& sys, const InitConfig& cfg);
// A container holding CAP_SYS_PTRACE in the host's user namespace can seize a process of
// ours from its birth in the container's pid namespace until its execve and make it call
// anything (docs/security.md, "The window before execve"). Called right before that birth:
// effective and permitted become the container's own capabilities plus the few our code
// still needs before the payload's sets (CAP_SETUID, CAP_SETGID, CAP_SETPCAP, CAP_CHOWN,
// CAP_DAC_OVERRIDE, CAP_SYS_RESOURCE, CAP_SYS_NICE; CAP_SYS_ADMIN for a filter loaded
// without noNewPrivileges, or an init's pty bound on /dev/console), all within `held`; the
// inheritable set empty; the bounding set the container's, so that an execve forced on us
// gains no more. Nothing where the payload's sets are root's own (no
// process.capabilities) or `held` is 0 (a user namespace: ptrace is refused there).
Status narrow_caps(linux::Sys& sys, const InitConfig& cfg, uint64_t held);
// Our permitted set (capget: an inspection, off the seam); 0 if it cannot be read.
uint64_t permitted_caps();
// A pty from the devpts behind <root_fd>/dev/ptmx, made the controlling terminal and stdio,
// its master sent to the parent (kConsole). fs: bind it on /dev/console too (the init).
Status open_console(linux::Sys& sys, InitConfig& cfg, int root_fd, linux::rootfs::Applier* fs);

}  // namespace berth::container::process
