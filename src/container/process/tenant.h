// An exec tenant: the clone of `berth exec` that puts a new process into a running
// container. It starts in berth's pid namespace and the container's cgroup
// (CLONE_INTO_CGROUP, or the parent wrote its pid, or, sharing the parent's memory, it
// wrote its own: parent_asleep), joins every namespace of the
// container's init, the pid namespace for its children, and forks the process: born in
// the pid namespace with the container's root and cwd, adopted by the parent (a child
// subreaper), it runs the init's own payload code. Nothing in the container ever sees a
// process of berth with a host view (docs/security.md).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "container/process/init_config.h"
#include "linux/sys.h"

namespace berth::container::process {

struct TenantConfig {
  InitConfig payload;   // process, capabilities, seccomp, sync_fd; launch = Launch::kTenant
  pid_t init_pid = 0;
  int init_pidfd = -1;  // pins the init whose namespaces are joined
  // linux.namespaces types to join ("user", "mount", "pid", ...): those whose namespace
  // differs from berth's own.
  std::vector<std::string> join_types;
  // `exec --user NAME[:GID]`: resolved in the container's /etc/passwd once inside.
  std::string user_name;
  // Cloned with CLONE_VM | CLONE_VFORK (spawn.h, vfork_child): the parent sleeps until we
  // exit, so no kGo comes; we joined the cgroups ourselves before tenant_main.
  bool parent_asleep = false;
  // The permitted capabilities the intermediate holds once it joined (the parent's own;
  // 0 when it joins a user namespace, where it holds all of that namespace's and nothing
  // the container can ptrace): the base of the narrowed sets the process is born with
  // (tenant.cc, narrow_caps).
  uint64_t held_caps = 0;
  // With the parent asleep, after our own v1 join (payload.cgroup_tasks): the unified
  // hierarchy's cgroup.procs and execCPUAffinity.final, which a cpuset join would reset.
  std::function<Status()> after_v1_join;
};

// The child's entry point: forks the process, reports it (kPid) and returns 0, or an exit
// status after reporting the error.
int tenant_main(TenantConfig& t);

// The tenant's sequences over the seam (tenant_main runs them with linux::real_sys()).
// Enter, in the intermediate: parent death signal, the v1 cgroups joined (tasks ← 0, with
// the parent asleep), wait for kGo (unless parent_asleep), process.oomScoreAdj
// through the host's /proc, the namespace joins (one setns on the init's pidfd; on older
// kernels one setns per namespace, user first, mount last), `--user NAME`, the
// attributes a fork inherits and the narrowed capability sets; the fork follows. Settle, in the process: wait for kGo
// (adopted), parent death signal, new session, rlimits and scheduler, the pty (the payload
// follows: payload.h).
Status tenant_enter(linux::Sys& sys, TenantConfig& t);
Status tenant_settle(linux::Sys& sys, TenantConfig& t);

}  // namespace berth::container::process
