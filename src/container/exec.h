// `exec`: a new process in a running (or created, or paused with ignore_paused) container,
// with every runc flag. See docs/exec.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "berth/result.h"

namespace berth {

struct ExecOptions {
  std::string root;  // state root
  std::string id;
  std::vector<std::string> args;  // the command, after the id
  std::string process_file;       // --process: a process.json, or "-" for stdin
  // Overrides of the container's process (ignored with --process, as runc does).
  std::string cwd;
  std::vector<std::string> env;       // appended
  bool tty = false;                   // process.terminal is always this (runc)
  std::string user;                   // uid[:gid] or name[:gid]
  std::vector<std::string> additional_gids;
  std::optional<bool> no_new_privs;   // set only when the flag was given
  std::vector<std::string> caps;      // added to bounding/effective/permitted (+ambient)
  std::string apparmor;
  std::string process_label;
  // How the process is run.
  bool detach = false;
  std::string pid_file;
  std::string console_socket;
  std::string pidfd_socket;
  int preserve_fds = 0;
  std::vector<std::string> cgroups;   // --cgroup [<controller>[,...]:]<sub-cgroup>
  bool ignore_paused = false;
  // Called with the status once the process is reaped (or published, detached), before
  // any destructor of the call runs. The CLI, whose process ends with the call, passes one
  // that ends the process there: by then the tenant has forked the process from our memory,
  // so each page a destructor writes is a copy-on-write fault in it. Empty: return.
  std::function<void(int)> when_done;
};

// Returns the process's exit status in the foreground (128+signal when killed), 0 when
// detached.
Result<int> exec_container(const ExecOptions& options);

}  // namespace berth
