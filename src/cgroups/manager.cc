// Manager placement and lifecycle: create (mkdir in every hierarchy, linux.cgroupsPath
// resolution, cpuset inheritance), load from state paths, add_process, pids, destroy, and
// remove_empty (one rmdir per hierarchy).
#include "cgroups/manager.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <set>

#include "cgroups/paths.h"
#include "cgroups/v1/v1.h"
#include "cgroups/v2/v2.h"
#include "util/rollback.h"

namespace berth::cgroups {
namespace {

bool known_v1(const Hierarchy& h) {
  for (const auto* c : v1::controllers())
    if (h.has(c->name)) return true;
  return false;
}

bool permission_error(int e) { return e == EPERM || e == EACCES || e == EROFS; }

Result<UniqueFd> open_dir(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open " + path);
  return fd;
}

Result<const Host*> host_of(const Config& cfg) {
  if (cfg.host) return cfg.host;
  const auto& probed = cgroups::host();
  if (!probed) return probed.error();
  return &*probed;
}

// Where the container goes in each hierarchy: the v1 ones berth knows, then the unified.
struct Placement {
  const Hierarchy* h;
  std::vector<std::string> names;
  bool v2;
  std::string rel;
};

std::vector<Placement> placements(const Host& host, const std::string& path) {
  std::vector<Placement> out;
  for (const auto& h : host.v1)
    if (known_v1(h)) out.push_back({&h, h.controllers, false, hierarchy_path(host, h, path, false)});
  if (host.unified) {
    bool v2 = host.layout == Layout::kV2;
    out.push_back({&*host.unified, {""}, v2, hierarchy_path(host, *host.unified, path, v2)});
  }
  return out;
}

}  // namespace

Result<std::map<std::string, std::string>> Manager::planned_paths(const Config& cfg) {
  BERTH_ASSIGN(const Host* host, host_of(cfg));
  BERTH_ASSIGN(std::string path, container_path(*host, cfg.cgroups_path, cfg.id, cfg.systemd));
  std::map<std::string, std::string> out;
  for (const auto& p : placements(*host, path))
    for (const auto& n : p.names) out[n] = host->dir(*p.h, p.rel);
  return out;
}

Result<Manager> Manager::create(const Config& cfg) {
  BERTH_ASSIGN(const Host* host, host_of(cfg));
  BERTH_ASSIGN(std::string path, container_path(*host, cfg.cgroups_path, cfg.id, cfg.systemd));
  Manager m;
  m.layout_ = host->layout;
  m.rootless_ = cfg.rootless;
  m.explicit_path_ = !cfg.cgroups_path.empty();
  Rollback undo;
  // mkdir one hierarchy; undo removes what it made, leaf first.
  auto place = [&](const Placement& p) -> Status {
    std::string mount = host->prefix + p.h->mountpoint;
    auto made = p.v2 ? v2::make_path(mount, p.rel) : make_dirs(mount, p.rel);
    if (!made) {
      // Rootless without an explicit path: a hierarchy we may not write is left out (runc).
      if (cfg.rootless && cfg.cgroups_path.empty() && permission_error(made.error().err())) return ok();
      return std::move(made).error().context("create cgroup");
    }
    undo.push([created = *made] {
      for (auto it = created.rbegin(); it != created.rend(); ++it) ::rmdir(it->c_str());
    });
    if (!p.v2 && p.h->has("cpuset")) BERTH_TRY(v1::cpuset_inherit(mount, p.rel).context("create cgroup"));
    BERTH_ASSIGN(auto fd, open_dir(host->dir(*p.h, p.rel)));
    m.hiers_.push_back({p.names, host->dir(*p.h, p.rel), std::move(fd)});
    return ok();
  };
  for (const auto& p : placements(*host, path)) BERTH_TRY(place(p));
  static const spec::Resources kNone;
  const auto* devices = cfg.device_rules.empty() ? nullptr : &cfg.device_rules;
  BERTH_TRY(m.apply(cfg.resources ? *cfg.resources : kNone, devices, false));
  undo.commit();
  return m;
}

Result<Manager> Manager::load(const std::map<std::string, std::string>& paths) {
  if (paths.empty()) return Error::generic("cgroups: no cgroup paths in the container's state");
  Manager m;
  bool unified = false, v1 = false;
  for (const auto& [name, path] : paths) {
    if (path.empty() || path.front() != '/')
      return Error::generic("cgroups: invalid path \"" + path + "\" for \"" + name + "\"");
    (name.empty() ? unified : v1) = true;
    const std::string& dir = path;  // clang 14 cannot capture structured bindings
    auto it = std::find_if(m.hiers_.begin(), m.hiers_.end(), [&](const Hier& h) { return h.path == dir; });
    if (it != m.hiers_.end()) it->names.push_back(name);
    else m.hiers_.push_back({{name}, path, UniqueFd()});
  }
  m.layout_ = unified ? (v1 ? Layout::kHybrid : Layout::kV2) : Layout::kV1;
  // The unified hierarchy last, as create() orders them.
  std::stable_partition(m.hiers_.begin(), m.hiers_.end(),
                        [](const Hier& h) { return !(h.names.size() == 1 && h.names[0].empty()); });
  return m;
}

std::map<std::string, std::string> Manager::paths() const {
  std::map<std::string, std::string> out;
  for (const auto& h : hiers_)
    for (const auto& n : h.names) out[n] = h.path;
  return out;
}

Dir Manager::dir(std::string_view controller) const {
  for (const auto& h : hiers_) {
    if (std::find(h.names.begin(), h.names.end(), controller) == h.names.end()) continue;
    if (!h.fd && !opened_all_) {
      h.fd.reset(::open(h.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      h.open_err = h.fd ? 0 : errno;
    }
    return Dir(h.fd.get(), h.path);
  }
  return Dir();
}

void Manager::open_all() const {
  for (const auto& h : hiers_) (void)dir(h.names.front());
  opened_all_ = true;
}

std::vector<int> Manager::held_fds() const {
  std::vector<int> fds;
  for (const auto& h : hiers_)
    if (h.fd) fds.push_back(h.fd.get());
  return fds;
}

int Manager::v2_dir_fd() const {
  if (layout_ != Layout::kV2) return -1;
  return dir("").fd();
}

int Manager::unified_dir_fd() const {
  if (layout_ == Layout::kV2) return v2_dir_fd();
  if (layout_ != Layout::kHybrid || rootless_) return -1;
  return dir("").fd();
}

// The kernel refuses (EINVAL) a task still in TASK_NEW; runc retries such writes.
static Status write_pid(const Dir& d, pid_t pid) {
  std::string value = std::to_string(pid);
  for (int i = 0;; ++i) {
    auto st = d.write("cgroup.procs", value);
    if (st || st.error().err() != EINVAL || i == 4) return st;
    struct timespec ts = {0, 10 * 1000 * 1000};
    ::nanosleep(&ts, nullptr);
  }
}

static bool is_unified(const std::vector<std::string>& names) { return names.size() == 1 && names[0].empty(); }

Result<std::vector<TasksFile>> Manager::open_v1_tasks() const {
  std::vector<TasksFile> out;
  if (rootless_) return out;
  for (const auto& h : hiers_) {
    if (is_unified(h.names)) continue;
    Dir d = dir(h.names.front());
    std::string path = h.path + "/tasks";
    if (!d.valid()) return Error::sys(h.open_err, "open " + path).context("join cgroups");
    UniqueFd fd(::openat(d.fd(), "tasks", O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) return Error::sys(errno, "open " + path).context("join cgroups");
    out.push_back({std::move(fd), path});
  }
  return out;
}

Status Manager::add_process(pid_t pid, bool v1, bool unified) {
  for (const auto& h : hiers_) {
    if (!(is_unified(h.names) ? unified : v1)) continue;
    Dir d = dir(h.names.front());
    // runc's wording ("adding pid N to cgroups: ...: <dir>/cgroup.procs: no such file"):
    // runc's exec tests and scripts match it for an `exec --cgroup` sub-cgroup that is gone.
    std::string what = "adding pid " + std::to_string(pid) + " to cgroups";
    if (!d.valid()) return Error::sys(h.open_err, "open " + h.path + "/cgroup.procs").context(what);
    auto st = write_pid(d, pid);
    if (!st) {
      if (rootless_ && !explicit_path_ && permission_error(st.error().err())) continue;
      return std::move(st).context(what);
    }
  }
  return ok();
}

Result<std::vector<pid_t>> Manager::pids() const {
  // A process the container started is in every hierarchy, but one put into a cgroup that
  // existed before create (runc warns and goes on) may be in some only, and `delete` must
  // still find it, or the rmdir fails: the union of all, a missing directory skipped.
  std::vector<pid_t> out;
  std::set<pid_t> seen;
  std::optional<Error> failed;
  bool listed_any = false;
  for (const auto& h : hiers_) {
    auto in = list_pids(h.path);
    if (!in) {
      if (in.error().err() != ENOENT && !failed) failed = std::move(in).error();
      continue;
    }
    listed_any = true;
    for (pid_t p : *in)
      if (seen.insert(p).second) out.push_back(p);
  }
  if (!listed_any && failed) return std::move(*failed);
  std::sort(out.begin(), out.end());
  return out;
}

bool Manager::remove_empty() {
  bool all = true;
  for (auto& h : hiers_) {
    h.fd.reset();
    if (::rmdir(h.path.c_str()) != 0 && errno != ENOENT) all = false;
  }
  return all;
}

Status Manager::destroy() {
  std::optional<Error> first;
  for (auto& h : hiers_) {
    h.fd.reset();
    auto st = remove_cgroup(h.path);
    if (!st && !first) first = std::move(st).error();
  }
  if (first) return std::move(*first).context("remove cgroups");
  return ok();
}

}  // namespace berth::cgroups
