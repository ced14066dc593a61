// Passing a file descriptor over an AF_UNIX socket (SCM_RIGHTS): the console socket, the
// pidfd socket, the seccomp listener and the parent↔init channel all send exactly one fd
// with a payload.
#pragma once

#include <string>
#include <string_view>

#include "berth/result.h"
#include "util/unique_fd.h"

namespace berth {

// Sends `data` with `fd` attached (fd < 0: no fd). On a stream socket the rest of a
// partially taken payload follows in plain sends; the fd travels with the first piece.
Status send_with_fd(int sock, std::string_view data, int fd);
// Connects a SOCK_STREAM AF_UNIX socket to `path`.
Result<UniqueFd> connect_unix(const std::string& path);

}  // namespace berth
