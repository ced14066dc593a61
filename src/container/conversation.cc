// The parent's side of the set-up conversation, shared by create and exec (see
// conversation.h).
#include "container/conversation.h"

#include "container/state_store.h"
#include "linux/console.h"
#include "seccomp/seccomp.h"

namespace berth::container {

Status answer_common(const Peer& peer, int sock, pid_t pid, process::Message& m) {
  using process::Msg;
  switch (m.type) {
    case Msg::kConsole:
      if (!peer.console_socket.empty())
        return linux::send_fd_to_socket(peer.console_socket, m.fd.get(), m.text).context("console socket");
      if (peer.console) *peer.console = std::move(m.fd);
      return ok();
    case Msg::kSeccompFd:
      // The agent gets the listener with the state as hooks see it; no listener, no start.
      if (!peer.seccomp || !m.fd) return Error::generic(std::string("sync: unexpected seccomp listener from the ") + peer.name);
      BERTH_TRY(seccomp::send_to_listener(m.fd.get(), *peer.seccomp, peer.state_json(), pid));
      return process::send(sock, Msg::kGo);
    case Msg::kError:
      return process::to_error(m);
    default:
      return Error::generic(std::string("sync: unexpected message from the ") + peer.name);
  }
}

Status publish_process(const std::string& pid_file, const std::string& pidfd_socket, pid_t pid, int pidfd) {
  if (!pid_file.empty()) BERTH_TRY(write_pid_file(pid_file, pid));
  if (!pidfd_socket.empty()) BERTH_TRY(linux::send_fd_to_socket(pidfd_socket, pidfd, "").context("pidfd socket"));
  return ok();
}

}  // namespace berth::container
