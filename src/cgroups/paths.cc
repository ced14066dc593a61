// linux.cgroupsPath resolution per hierarchy (runc's fs/fs2 rules): see paths.h.
#include "cgroups/paths.h"

#include <vector>

#include "util/strings.h"

namespace berth::cgroups {

// Lexical clean of an absolute path: no "", ".", ".." components left.
static std::string clean_abs(std::string_view p) {
  std::vector<std::string> parts;
  for (auto& part : str::split_nonempty(p, '/')) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(std::move(part));
  }
  return "/" + str::join(parts, "/");
}

std::string clean_path(std::string_view path) {
  if (path.empty()) return {};
  std::string abs = clean_abs(path);
  if (path.front() == '/') return abs;
  // Relative: cleaned as if rooted, so "../../x" stays below the base.
  return abs == "/" ? std::string() : abs.substr(1);
}

bool is_systemd_path(std::string_view path) {
  return path.find('/') == std::string_view::npos && str::split(path, ':').size() == 3;
}

Result<std::string> container_path(const Host& host, std::string_view cgroups_path,
                                   std::string_view id, bool systemd) {
  // The systemd driver (cgroups/systemd) resolves its units to absolute paths first.
  if (systemd) return Error::generic("cgroups: a systemd cgroupsPath reached the cgroupfs driver");
  if (is_systemd_path(cgroups_path)) {
    if (!host.systemd_running)
      return Error::generic("systemd cgroup driver requires a running systemd");
    return Error::invalid_spec("linux.cgroupsPath " + str::go_quote(cgroups_path) +
                               " has the systemd form slice:prefix:name: use --systemd-cgroup");
  }
  std::string path = clean_path(cgroups_path);
  if (path.empty()) {
    if (id.empty() || id.find('/') != std::string_view::npos || id == "." || id == "..")
      return Error::invalid_argument("cgroups: invalid container id \"" + std::string(id) + "\"");
    path = std::string(id);
  }
  if (path == "/")
    return Error::invalid_spec("linux.cgroupsPath: \"/\" would put the container in the root cgroup");
  return path;
}

static std::string parent_of(const std::string& p) {
  auto slash = p.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return p.substr(0, slash);
}

std::string hierarchy_path(const Host& host, const Hierarchy& h, const std::string& path,
                           bool pure_v2) {
  (void)host;
  if (!path.empty() && path.front() == '/') return path;
  std::string own = h.own.empty() ? "/" : h.own;
  // /proc/self/cgroup paths are from the hierarchy's root; the mount may show a subtree.
  if (h.root != "/" && str::starts_with(own, h.root) &&
      (own.size() == h.root.size() || own[h.root.size()] == '/')) {
    own = own.substr(h.root.size());
    if (own.empty()) own = "/";
  }
  if (pure_v2) own = parent_of(own);
  return clean_abs(own + "/" + path);
}

}  // namespace berth::cgroups
