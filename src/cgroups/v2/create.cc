// v2 cgroup creation: mkdir each level and enable the available controllers for the level
// below (cgroup.subtree_control), so the container's cgroup has every controller's files.
#include <sys/stat.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>

#include "cgroups/v2/v2.h"
#include "util/strings.h"
#include "util/unique_fd.h"

namespace berth::cgroups::v2 {
namespace {

// Enables at `path` what its cgroup.controllers offers and cgroup.subtree_control lacks.
// Failures are not fatal (a level with processes cannot enable domain controllers; a
// delegated subtree may not own everything): a limit that then lacks its file fails later
// with the field's name.
void enable_below(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return;
  Dir d(fd.get(), path);
  auto avail = d.read("cgroup.controllers");
  auto enabled = d.read("cgroup.subtree_control");
  if (!avail || !enabled) return;
  auto on = str::split_nonempty(str::trim(*enabled), ' ');
  std::vector<std::string> missing;
  for (const auto& c : str::split_nonempty(str::trim(*avail), ' '))
    if (std::find(on.begin(), on.end(), c) == on.end()) missing.push_back("+" + c);
  if (missing.empty()) return;
  if (d.write("cgroup.subtree_control", str::join(missing, " "))) return;
  for (const auto& c : missing) (void)d.write("cgroup.subtree_control", c);
}

}  // namespace

Result<std::vector<std::string>> make_path(const std::string& mount, const std::string& rel) {
  std::vector<std::string> created;
  auto parts = str::split_nonempty(rel, '/');
  std::string path = mount;
  for (const auto& part : parts) {
    enable_below(path);
    path += "/" + part;
    if (::mkdir(path.c_str(), 0755) == 0) {
      created.push_back(path);
    } else if (errno != EEXIST) {
      int e = errno;
      for (auto it = created.rbegin(); it != created.rend(); ++it) ::rmdir(it->c_str());
      return Error::sys(e, "mkdir " + path);
    }
  }
  return created;
}

}  // namespace berth::cgroups::v2
