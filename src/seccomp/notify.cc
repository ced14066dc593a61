// linux.seccomp.listenerPath and listenerMetadata: hand the SCMP_ACT_NOTIFY listener fd to
// the seccomp agent with the runtime-spec "container process state" message.
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "seccomp/seccomp.h"
#include "util/fd_passing.h"
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

}  // namespace

Status send_to_listener(int notify_fd, const spec::Seccomp& profile, const std::string& state_json, pid_t pid) {
  const std::string& path = profile.listener_path;
  std::string where = "send seccomp listener fd";
  constexpr size_t kMaxPath = sizeof(sockaddr_un::sun_path) - 1;
  if (path.empty() || path.size() > kMaxPath)
    return Error::invalid_spec("linux.seccomp.listenerPath: must be a socket path of 1 to " +
                               std::to_string(kMaxPath) + " bytes");
  // The state is embedded verbatim: make sure it is one JSON object.
  BERTH_ASSIGN(auto doc, json::Document::parse(state_json, "container state"));
  if (!YAJL_IS_OBJECT(doc.root())) return Error::generic(where + ": the container state is not a JSON object");
  // runc's words for an agent that is not there ("failed to connect with seccomp agent"):
  // engines and runc's own tests match them.
  BERTH_ASSIGN(UniqueFd sock, connect_unix(path).context("failed to connect with seccomp agent").context(where));
  return send_with_fd(sock.get(), message(profile, state_json, pid), notify_fd).context(where);
}

}  // namespace berth::seccomp
