// linux.seccomp.listenerPath and listenerMetadata: hand the SCMP_ACT_NOTIFY listener fd to
// the seccomp agent with the runtime-spec "container process state" message.
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "seccomp/seccomp.h"
#include "util/json.h"
#include "util/unique_fd.h"

namespace berth::seccomp {
namespace {

// The spec version berth implements (the message's own ociVersion, as runc sends its own).
constexpr std::string_view kSpecVersion = "1.3.0";

std::string quoted(std::string_view s) {
  json::Writer w;
  w.string(s);
  return w.str();
}

// {"ociVersion", "fds": ["seccompFd"], "pid", "metadata" (omitted when empty), "state"}:
// the field order and omission follow runtime-spec's Go bindings.
std::string message(const spec::Seccomp& p, const std::string& state_json, pid_t pid) {
  std::string out = "{\"ociVersion\":" + quoted(kSpecVersion) + ",\"fds\":[\"seccompFd\"],\"pid\":" +
                    std::to_string(pid);
  if (!p.listener_metadata.empty()) out += ",\"metadata\":" + quoted(p.listener_metadata);
  out += ",\"state\":" + state_json + "}";
  return out;
}

Status send_with_fd(int sock, std::string_view data, int fd) {
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{const_cast<char*>(data.data()), data.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t n;
  do n = ::sendmsg(sock, &msg, MSG_NOSIGNAL); while (n < 0 && errno == EINTR);
  if (n < 0) return Error::sys(errno, "sendmsg");
  // A stream socket may take the message in pieces; the fd travelled with the first one.
  for (data.remove_prefix(static_cast<size_t>(n)); !data.empty(); data.remove_prefix(static_cast<size_t>(n))) {
    do n = ::send(sock, data.data(), data.size(), MSG_NOSIGNAL); while (n < 0 && errno == EINTR);
    if (n < 0) return Error::sys(errno, "send");
  }
  return ok();
}

}  // namespace

Status send_to_listener(int notify_fd, const spec::Seccomp& profile, const std::string& state_json, pid_t pid) {
  const std::string& path = profile.listener_path;
  std::string where = "send seccomp listener fd to " + path;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return Error::invalid_spec("linux.seccomp.listenerPath: must be a socket path of 1 to " +
                               std::to_string(sizeof addr.sun_path - 1) + " bytes");
  // The state is embedded verbatim: make sure it is one JSON object.
  BERTH_ASSIGN(auto doc, json::Document::parse(state_json, "container state"));
  if (!YAJL_IS_OBJECT(doc.root())) return Error::generic(where + ": the container state is not a JSON object");
  std::memcpy(addr.sun_path, path.data(), path.size());
  UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) return Error::sys(errno, where + ": socket");
  int rc;
  do rc = ::connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr); while (rc < 0 && errno == EINTR);
  if (rc < 0) return Error::sys(errno, where + ": connect");
  return send_with_fd(sock.get(), message(profile, state_json, pid), notify_fd).context(where);
}

}  // namespace berth::seccomp
