// process.terminal / process.consoleSize: the container's pty, made from the container's own
// devpts (/dev/ptmx inside its root), its terminal side taken with TIOCGPTPEER (never by a
// path the image controls), and the console socket hand-off (one message, one fd, the pty
// name as payload — what containerd's shim expects) to the socket the caller named, resolved
// without links of other parties.
#pragma once

#include <string>

#include "berth/result.h"
#include "berth/spec.h"
#include "util/unique_fd.h"

namespace berth::linux {

struct Pty {
  UniqueFd master;
  UniqueFd peer;  // the terminal side
  std::string name;  // /dev/pts/N
};

// Opens ptmx at `ptmx_path` relative to root_fd (resolved inside the root), unlocks it and
// opens the peer; applies the console size when given.
Result<Pty> open_pty(int root_fd, const std::string& ptmx_path, const std::optional<spec::Box>& size);
// In the init: new session, controlling terminal, stdio on the peer.
Status make_controlling_tty(int peer_fd);
// The socket the caller named (--console-socket), opened O_PATH. The last component is
// never followed (the caller made the socket at that name: a link there is someone
// else's); a parent link is followed only when root or the caller owns it; the result must
// be a socket. Each refusal is one line naming the path.
Result<UniqueFd> open_named_socket(const std::string& path);
// Sends `fd` with `payload` over the AF_UNIX socket at `socket_path` (open_named_socket),
// connected through the opened inode.
Status send_fd_to_socket(const std::string& socket_path, int fd, const std::string& payload);
Status set_window_size(int fd, uint32_t rows, uint32_t cols);

}  // namespace berth::linux
