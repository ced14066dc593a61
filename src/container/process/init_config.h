// Everything the container init needs, computed by the parent before clone3. The init is
// a copy of the parent's memory (no re-exec), so this is plain C++ data; the init never
// returns into the parent's code paths.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "berth/spec.h"
#include "berth/state.h"
#include "linux/caps.h"
#include "linux/namespaces.h"
#include "linux/rootfs/plan.h"
#include "seccomp/seccomp.h"
#include "util/unique_fd.h"

namespace berth::container::process {

// Where compiled linux.seccomp filters are cached: inside the state root, root-owned 0700
// (the seccomp library refuses a directory others could write).
inline std::string seccomp_cache_dir(const std::string& state_root) { return state_root + "/.seccomp-cache"; }

// A v1 hierarchy's `tasks` file, opened write-only by the parent before the clone.
struct CgroupTasks {
  int fd = -1;
  std::string path;  // for the error only
};

// How the process is launched, which says what the parent and the child wait for. One
// value where five booleans had encoded the shapes.
enum class Launch {
  kInit,         // one clone3, the parent's go and kSettled, then exec.fifo until `start`
  kSecondStage,  // stage one forks the init after joins/unshares (pid ns joined/created
                 // late, time offsets) and reports it (kPid)
  kForkLast,     // a joined pid namespace (linux.namespaces[].path) whose procfs can be
                 // made from outside (fsconfig "pidns"): stage one sets up the rootfs and
                 // pivots, and forks the init into the pid namespace last (kPid), so its
                 // members never see a process of ours with a host view
  kDirect,       // a `run` with nothing for the parent to do until the payload runs
                 // (container/launch.cc, direct_possible): cloned in the parent's memory
                 // while it sleeps (vfork_child), the init joined its cgroups and recorded
                 // its pid itself; it waits for no go and execs the payload as soon as it
                 // is set up (no exec.fifo), sending kReady just before
  kTenant,       // an exec tenant's payload: no exec.fifo; the parent waits for execve
                 // itself (the sync socket is close-on-exec, so EOF means the payload
                 // runs) or for an error sent in its place
};

// A stage one that hands over to a forked init (kPid).
inline bool forks_init(Launch l) { return l == Launch::kSecondStage || l == Launch::kForkLast; }
// The payload's end is an exec tenant's: execve at once, no exec.fifo.
inline bool execs_at_once(Launch l) { return l == Launch::kTenant || l == Launch::kDirect; }

struct InitConfig {
  // Channel and lifecycle.
  int sync_fd = -1;          // the init's end of the sync socket
  int fifo_fd = -1;          // exec.fifo, opened O_RDWR (never blocks); -1 for exec tenants
  bool parent_death_kill = true;
  // An unprivileged parent writes our id maps (itself, or through newuidmap, which checks
  // that it owns us): /proc/<pid>/uid_map of a non-dumpable process belongs to root, so we
  // stay dumpable until the maps are written, as runc's init does. Nothing of the container
  // runs before that, and that parent may ptrace us anyway.
  bool dumpable_until_mapped = false;
  // `create` records our pid after its first go, while we set up, then sends kSettled
  // (steps.h, wait_settled): the payload waits for it before it clears the parent death
  // signal or runs anything of the container's. Cleared once received.
  bool settle_pending = false;
  // --systemd-cgroup: systemd places us (the unit's start job) while we set up, and
  // `create` sends kPlaced once it has (steps.h, wait_placed). Until then nothing may run
  // or be forked (it would stay outside the container's cgroup) and no cgroup namespace
  // made (it would take our cgroup of now as its root): the init waits for it first
  // (init.cc, placed). Cleared once received.
  bool placement_pending = false;
  // The cgroup namespace held back until kPlaced (CLONE_NEWCGROUP, or 0).
  int deferred_unshare = 0;
  Launch launch = Launch::kInit;
  // The container's v1 hierarchies, which we move ourselves into (tasks ← "0") before
  // anything else: the kernel skips the global threadgroup rwsem for a thread that moves
  // itself, where the parent's write of our pid to cgroup.procs waits for an RCU grace
  // period (docs/performance.md). Empty where the parent writes instead (a user namespace
  // made by the clone, rootless, systemd); the unified hierarchy is never here (cgroup2 has
  // no tasks file, and cgroup.threads refuses a move across domains).
  std::vector<CgroupTasks> cgroup_tasks;

  // Namespaces: one clone3 does the common case; joins/unshares/second stage otherwise.
  linux::NamespacePlan* ns = nullptr;
  int clone_flags = 0;       // what clone3 created already
  int unshare_flags = 0;     // to create after the joins (user first, then the rest)
  int proc_pidns_fd = -1;    // the joined pid namespace (owned by ns), for /proc (kForkLast)
  std::map<std::string, spec::TimeOffset> time_offsets;

  std::string hostname, domainname;
  bool set_hostname = false, set_domainname = false;

  // Filesystem.
  std::optional<linux::rootfs::RootfsPlan> rootfs;  // absent: no mount namespace
  // In a user namespace, the runtime (root on the host) opens the bind sources for us:
  // runc's mount source fds (see linux/rootfs/idmap.h).
  bool sources_from_runtime = false;
  std::string chroot;  // without a mount namespace: the root to chroot into
  std::map<std::string, std::string> sysctl;

  // Process.
  spec::Process process;
  std::string container_id;
  bool new_keyring = true;
  linux::CapSets caps;
  bool has_caps = false;
  std::optional<spec::Personality> personality;
  std::optional<spec::MemoryPolicy> memory_policy;
  int preserve_fds = 0;       // fds 3.. kept for the payload
  // linux.seccomp: compiled (through the cache) by the parent, loaded by the init or tenant
  // as late as the no_new_privs rules allow (payload.cc, docs/seccomp.md).
  std::optional<spec::Seccomp> seccomp;
  seccomp::Program seccomp_program;
  dev_t self_dev = 0;         // the runtime binary, refused as a payload (CVE-2019-5736)
  ino_t self_ino = 0;

  // Hooks run by the init itself, in the container's namespaces, with this state (pid as
  // the container sees it).
  std::vector<spec::Hook> create_container_hooks;
  std::vector<spec::Hook> start_container_hooks;
  // How: set by the parent (container/init_builder.cc), so that process/ never includes
  // from container/ above it. `inherit`: the environment of a hook without `env`.
  // `last_step`: run in each hook's process right before it execs the hook (the
  // container's seccomp filter for startContainer hooks: payload.cc); nullptr: none.
  std::function<Status(const char* kind, const std::vector<spec::Hook>& hooks, const OciState& state,
                       const std::vector<std::string>* inherit, const std::function<Status()>* last_step)>
      run_hooks;
  bool wants_runtime_hooks = false;  // ask the parent to run prestart/createRuntime
  OciState state;
};

}  // namespace berth::container::process
