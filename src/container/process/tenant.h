// An exec tenant: the clone3 of `berth exec` that becomes a new process of a running
// container. It starts in the container's pid namespace (the parent joined it for its
// children) and cgroup (CLONE_INTO_CGROUP, or the parent wrote its pid), then joins every
// other namespace of the container's init, and runs the init's own payload code.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "container/process/init_config.h"

namespace berth::container::process {

struct TenantConfig {
  InitConfig payload;   // process, capabilities, seccomp, sync_fd; exec_tenant = true
  pid_t init_pid = 0;
  int init_pidfd = -1;  // pins the init whose namespaces are joined
  // linux.namespaces types to join ("user", "mount", ...): those whose namespace differs
  // from berth's own, pid excluded (the parent joined it).
  std::vector<std::string> join_types;
  // `exec --user NAME[:GID]`: resolved in the container's /etc/passwd once inside.
  std::string user_name;
};

// The child's entry point; returns the exit status for _exit (only on failure).
int tenant_main(TenantConfig& t);

}  // namespace berth::container::process
