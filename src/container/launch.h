// The parent's side of starting a container's init: the launch shapes (process::Launch),
// direct_possible (which `run` may take the direct way), the clone of the init, the
// conversation while it sets up (kMapIds, kPid, kHooks, kMountSources, kReady; a direct
// init's expect_execve), the pid record, and the kill of a half-made init through its
// pidfd. create.cc and restore.cc keep only their own operation.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "berth/container.h"
#include "berth/result.h"
#include "berth/spec.h"
#include "berth/state.h"
#include "container/bundle.h"
#include "container/init_builder.h"
#include "container/process/init_config.h"
#include "container/process/spawn.h"
#include "container/rootless.h"
#include "container/shared_child.h"
#include "linux/netdev.h"
#include "linux/sys.h"
#include "util/owned_pid.h"
#include "util/rollback.h"
#include "util/unique_fd.h"

namespace berth::container {

// What decides a direct launch besides the spec and the init's config, all known before
// the clone.
struct DirectFacts {
  bool start_now = false;       // `run`: nothing waits for a `start`
  bool can_share_memory = process::kCanShareMemory;
  bool console_socket = false;  // --console-socket given
  bool net_moves = false;       // linux.netDevices or RDMA devices move at kHooks
  bool creates_userns = false;  // a new user namespace (its maps are ours to write)
  bool systemd = false;         // --systemd-cgroup: a D-Bus call places the init
  bool pure_v2 = false;         // CLONE_INTO_CGROUP's fd: the clone places it
  // clone3 onto our stack is built here (x86_64, aarch64): a child in our memory can be
  // born in a cgroup v2 directory.
  bool can_share_memory_into_cgroup = process::kCanShareMemoryIntoCgroup;
  bool ldconfig_fill = false;   // a device module's ldconfig cache to fill afterwards
};

// `run` where nothing needs us between the clone and the payload: no message the init
// would wait for an answer to (kMapIds, kHooks, kMountSources, kConsole, kSeccompFd, a
// second stage's kPid), no start to wait for. A pure function of what it is given.
bool direct_possible(const spec::Spec& spec, const process::InitConfig& cfg, const DirectFacts& f);

// The parent's side of one init, from the clone to its kReady (or its execve).
struct Launcher {
  Staged& s;              // spec, record, state directory, cgroups
  const CreateOptions& o;
  Rollback& undo;         // the init's kill goes on it at the clone
  linux::Sys& sys;
  UserNsPlan userns;
  linux::NetnsMoves moves;  // linux.netDevices and RDMA devices, moved at kHooks
  OwnedPid init;            // the cloned child (stage one)
  pid_t init_pid = 0;       // the container's init (stage two if any)
  UniqueFd init_pidfd;      // always names the container's init, whichever stage it is
  UniqueFd console;
  bool started = false;     // the init ran the payload at once (direct_possible)
};

DirectFacts direct_facts(const Launcher& l, const BuiltInit& b);
// Clones the init the way its shape says and converses with it until it is ready (blocked
// on exec.fifo) or, direct, until its execve.
Status launch_init(Launcher& l, BuiltInit& b);

// --systemd-cgroup, after the first go: the unit started with the init in it, its job
// awaited, then kPlaced. The init sets itself up
// meanwhile and waits for kPlaced before it forks, runs anything, makes its cgroup
// namespace or mounts its cgroup (process/init.cc); none of its questions is answered
// before: nothing of the container's runs outside the unit, and create never returns
// before the limits hold. Where the init sent an error (it ended first, so systemd had no
// pid to move) that error is reported, not the unit's. Nothing without a unit to start.
Status place_in_unit(Launcher& l, int sock);

// The state hooks get on stdin: the record with `status` and `pid`.
std::string hook_state(const ContainerRecord& r, const char* status, pid_t pid);
// The pid and its start time into state.json; setting_up: marked first (no one sees the
// pid without it), cleared at the init's kReady.
Status record_pid(ContainerDir& dir, ContainerRecord& record, pid_t pid, bool setting_up);
// exec.fifo in the state directory, opened read-write by us: the init keeps it and blocks
// reading until `start` writes.
Result<UniqueFd> open_exec_fifo(linux::Sys& sys, int state_dirfd);
// kMountSources: each runtime-opened bind source (linux/rootfs/idmap.h) opened beneath the
// init's root (/proc/<init_pid>/root) and sent, then the go.
Status send_bind_sources(linux::Sys& sys, pid_t init_pid, int sock, const linux::rootfs::RootfsPlan* plan);
// SIGKILL through `pidfd`, then wait (up to 5 s) until it has exited and left its cgroups:
// never a pid number, which may belong to another process by now.
void kill_through_pidfd(linux::Sys& sys, int pidfd);
// The direct init's report: kReady just before its execve, then EOF.
Status expect_execve(int sock);

}  // namespace berth::container
