// libberth's container operations: what the CLI's create/start/run/kill/delete/state/list
// call. Each takes the state root (--root) and a container id.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/state.h"

namespace berth {

struct CreateOptions {
  std::string root;     // state root
  std::string id;
  std::string bundle;   // as given; "" = current directory
  std::string pid_file;
  std::string console_socket;
  std::string pidfd_socket;
  bool no_pivot = false;
  bool no_new_keyring = false;
  int preserve_fds = 0;  // in all, listen_fds included
  // systemd socket activation: the first listen_fds of the preserved fds are sockets the
  // container gets with LISTEN_FDS=<n> and LISTEN_PID=1 in its environment.
  int listen_fds = 0;
  bool systemd_cgroup = false;
  std::string rootless = "auto";
  // `run` in the foreground keeps the pty master and the init as its child.
  bool foreground = false;
  // `run`: where nothing needs the runtime between the clone and the payload (no hooks,
  // terminal, seccomp listener, user namespace, ...), the init starts it at once and
  // Created::started says so; elsewhere the caller starts it as after a plain create.
  bool start_now = false;
};

struct Created {
  pid_t pid = 0;
  int pidfd = -1;          // owned by the caller when foreground
  int console_master = -1; // owned by the caller when foreground with a terminal
  bool started = false;    // the payload runs already (CreateOptions::start_now)
};

Result<Created> create_container(const CreateOptions& options);
Status start_container(const std::string& root, const std::string& id);
// signal: a name (KILL, SIGKILL) or number; "" = SIGTERM.
Status kill_container(const std::string& root, const std::string& id, const std::string& signal, bool all);
Status delete_container(const std::string& root, const std::string& id, bool force);
Result<OciState> container_state(const std::string& root, const std::string& id);
// Every container under root, with the owner's user name filled in (for `list`).
Result<std::vector<OciState>> list_containers(const std::string& root);

// Signals as runc accepts them: "KILL", "SIGKILL", "sigkill", "9", "0". -1 when unknown.
int parse_signal(const std::string& s);

}  // namespace berth
