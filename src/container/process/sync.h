// The parent↔init channel: a SOCK_SEQPACKET socketpair carrying small typed messages, an
// error as {errno, kind, text}, and at most one fd per message (SCM_RIGHTS).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "berth/result.h"
#include "util/unique_fd.h"

namespace berth::container::process {

enum class Msg : uint32_t {
  kGo = 1,        // parent → init: maps written, cgroup joined; go on
  kHooks,         // init → parent: run prestart/createRuntime hooks now
  kHooksDone,     // parent → init: prestart/createRuntime hooks done; no payload (the
                  // init's own hooks take the state from InitConfig::state and its pid)
  kConsole,       // init → parent: fd = pty master
  kPid,           // init/tenant → parent: value = pid of the real init (second stage) or
                  // of the exec process (fd = its pidfd); the tenant answers kGo once adopted
  kReady,         // init → parent: set up, waiting for `start`
  kError,         // init → parent: err/kind/text
  kMapIds,        // init → parent: write my uid/gid maps (after a late user-ns unshare)
  kSeccompFd,     // init/tenant → parent: fd = seccomp notify listener; parent answers kGo
                  // once it reached linux.seccomp.listenerPath
  kMountSources,  // init → parent: open my bind sources (linux/rootfs/idmap.h); the parent
                  // answers one kMountSource each, then kGo
  kMountSource,   // parent → init: value = mount index, fd = O_PATH source (none: bind it
                  // the usual way)
  kSettled,       // parent → init: the init's pid is recorded (written after the first go,
                  // while the init sets up); sent right after that go, before any answer
  kPlaced,        // parent → init: systemd's start job is done and the v1 hierarchies are
                  // joined (--systemd-cgroup); sent once, unasked, after the first go
};

struct Message {
  Msg type = Msg::kError;
  int32_t err = 0;
  uint32_t kind = 0;
  int64_t value = 0;
  std::string text;
  UniqueFd fd;  // received fd, if any
};

Result<std::pair<UniqueFd, UniqueFd>> sync_pair();
Status send(int sock, Msg type, int64_t value = 0, const std::string& text = "", int fd = -1);
Status send_error(int sock, const Error& e);
// EOF (the peer exited) is an error mentioning it.
Result<Message> receive(int sock);
// The same, where EOF is an answer (the peer's execve closed its end): nothing then.
Result<std::optional<Message>> receive_or_eof(int sock);
// Turns a kError message back into an Error.
Error to_error(const Message& m);

}  // namespace berth::container::process
