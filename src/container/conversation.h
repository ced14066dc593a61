// The parent's side of the sync conversation that `create` (with the init) and `exec`
// (with the tenant and its process) share: a pty master (kConsole) goes to
// --console-socket or is kept for the foreground; a seccomp listener (kSeccompFd) goes to
// linux.seccomp.listenerPath and is answered with kGo; kError ends the conversation with
// the child's error; anything else is a protocol error. Once the process runs, its pid
// goes to --pid-file and its pidfd to --pidfd-socket. launch.cc (create's side) and exec.cc
// handle only the messages of their own (kMapIds, kHooks, kMountSources, kReady; kPid,
// which differs).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "berth/result.h"
#include "berth/spec.h"
#include "container/process/sync.h"
#include "util/unique_fd.h"

namespace berth::container {

struct Peer {
  const char* name = "";         // "container init", "exec process": for errors
  std::string console_socket;    // --console-socket; "" keeps the master in *console
  UniqueFd* console = nullptr;
  const spec::Seccomp* seccomp = nullptr;  // linux.seccomp, for its listenerPath
  std::function<std::string()> state_json;  // what the listener's agent is sent
};

// Answers one message of the common kinds; `pid` names the process to the listener agent.
Status answer_common(const Peer& peer, int sock, pid_t pid, process::Message& m);
// --pid-file and --pidfd-socket, once the process is known.
Status publish_process(const std::string& pid_file, const std::string& pidfd_socket, pid_t pid, int pidfd);

}  // namespace berth::container
