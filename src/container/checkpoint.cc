// `checkpoint`: a running (or paused) container saved by CRIU into --image-path, with
// descriptors.json beside the images; then destroyed as runc does, unless --leave-running or
// --pre-dump. GPU and RDMA containers are refused (CRIU cannot save device state).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "berth/checkpoint.h"
#include "berth/container.h"
#include "container/criu/config_file.h"
#include "container/criu/driver.h"
#include "container/criu/request.h"
#include "container/state_store.h"
#include "container/status.h"
#include "linux/paths.h"
#include "linux/sys.h"
#include "util/file.h"
#include "util/strings.h"

namespace berth {
namespace {

namespace cr = container::criu;

std::string cwd_path(const std::string& p) {
  if (!p.empty() && p[0] == '/') return linux::clean_path(p);
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) return p;
  return linux::clean_path(std::string(cwd) + "/" + p);
}

Status mkdir_all(const std::string& path) {
  std::string cur;
  for (const auto& c : linux::path_components(linux::clean_path(path))) {
    cur += "/" + c;
    if (::mkdir(cur.c_str(), 0700) < 0 && errno != EEXIST) return Error::sys(errno, "mkdir " + cur);
  }
  return ok();
}

// runc's prepareImagePaths: the image directory is made if missing (default ./checkpoint);
// --parent-path is relative to it and must be a directory there.
Status prepare_image_paths(CheckpointOptions& o) {
  o.image_path = cwd_path(o.image_path.empty() ? "checkpoint" : o.image_path);
  BERTH_TRY(mkdir_all(o.image_path));
  if (!o.work_path.empty()) {
    o.work_path = cwd_path(o.work_path);
    BERTH_TRY(mkdir_all(o.work_path));
  }
  if (o.parent_path.empty()) return ok();
  if (o.parent_path[0] == '/') return Error::invalid_argument("--parent-path must be relative");
  std::string real = o.image_path + "/" + o.parent_path;
  struct stat st;
  if (::stat(real.c_str(), &st) < 0) return Error::sys(errno, "invalid --parent-path: stat " + real);
  if (!S_ISDIR(st.st_mode)) return Error::sys(ENOTDIR, "invalid --parent-path: " + real);
  return ok();
}

// Device paths the container has: from its config and what its /dev shows now (a device
// module or CDI adds nodes the config does not list).
std::vector<std::string> device_paths(const spec::Spec& spec, int root_fd) {
  std::vector<std::string> out;
  if (spec.linux)
    for (const auto& d : spec.linux->devices) out.push_back(d.path);
  for (const char* dir : {"dev", "dev/infiniband"}) {
    int fd = ::openat(root_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    DIR* d = ::fdopendir(fd);
    if (!d) {
      ::close(fd);
      continue;
    }
    while (auto* e = ::readdir(d))
      if (e->d_name[0] != '.') out.push_back(std::string("/") + dir + "/" + e->d_name);
    ::closedir(d);
  }
  return out;
}

Result<cr::DumpFacts> dump_facts(const ContainerRecord& r, const spec::Spec& spec, int root_fd) {
  cr::DumpFacts f;
  f.pid = r.pid;
  f.rootfs = r.rootfs;
  f.cgroup_paths = r.cgroup_paths;
  if (spec.linux) {
    for (const auto& n : spec.linux->namespaces) {
      if ((n.type != "network" && n.type != "pid") || n.path.empty()) continue;
      struct stat st;
      if (::stat(n.path.c_str(), &st) < 0) return Error::sys(errno, "stat " + n.path);
      f.joined_ns_inodes[n.type] = st.st_ino;
    }
    // Seen from the container's root (never following a path out of it).
    for (const auto& p : spec.linux->masked_paths) {
      auto fd = linux::resolve_in_root(linux::real_sys(), root_fd, p);
      struct stat st;
      if (fd && ::fstat(fd->get(), &st) == 0 && S_ISDIR(st.st_mode)) f.masked_dirs.insert(p);
    }
  }
  return f;
}

// runc's descriptors.json: the init's stdio as /proc/<pid>/fd shows it.
Status write_descriptors(pid_t pid, const std::string& image_dir) {
  std::vector<std::string> fds;
  for (int i = 0; i < 3; ++i) {
    char buf[4096];
    std::string link = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(i);
    ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
    fds.push_back(n < 0 ? "/dev/null" : std::string(buf, static_cast<size_t>(n)));
  }
  UniqueFd dir(::open(image_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return Error::sys(errno, "open " + image_dir);
  return file::write_atomic(dir.get(), "descriptors.json", cr::descriptors_json(fds), 0600)
      .context("write descriptors.json");
}

Status dump(const CheckpointOptions& o, container::ContainerDir& dir) {
  BERTH_ASSIGN(ContainerRecord r, dir.read_record());
  ContainerStatus s = container::derive_status(dir, r);
  if (s != ContainerStatus::kRunning && s != ContainerStatus::kPaused)
    return Error(0, ErrorKind::kNotRunning, std::string("Container cannot be checkpointed in ") + status_name(s) + " state");
  BERTH_ASSIGN(spec::Spec spec, dir.read_config());
  UniqueFd root(::open(("/proc/" + std::to_string(r.pid) + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return Error::sys(errno, "open the container's root");
  std::string refusal = cr::native_device_refusal(device_paths(spec, root.get()));
  if (!refusal.empty()) return Error::unsupported(refusal);
  BERTH_ASSIGN(auto facts, dump_facts(r, spec, root.get()));
  BERTH_ASSIGN(cr::Request req, cr::dump_request(o, spec, facts));
  // Before anything is written or CRIU runs: a config file the container can write is refused.
  BERTH_ASSIGN(auto config, cr::check_config_file(spec, cr::container_paths(spec, r.bundle, r.rootfs)));
  cr::use_config_file(req, config);
  BERTH_TRY(write_descriptors(r.pid, o.image_path));
  BERTH_TRY(cr::execute(req, o.criu_binary, {}));
  return ok();
}

// --lazy-pages, as runc: the status fd must be open for writing, CRIU must have userfaultfd.
Status lazy_pages_ready(const CheckpointOptions& o) {
  if (o.status_fd >= 0) {
    int flags = ::fcntl(o.status_fd, F_GETFL);
    if (flags < 0) return Error::sys(errno, "invalid --status-fd argument " + std::to_string(o.status_fd));
    if ((flags & O_ACCMODE) == O_RDONLY)
      return Error::invalid_argument("invalid --status-fd argument " + std::to_string(o.status_fd) + ": not writable");
  }
  return cr::check_lazy_pages(o.criu_binary);
}

}  // namespace

bool criu_supported() { return container::criu::built_with_criu(); }

Status checkpoint_container(const CheckpointOptions& options) {
  if (!criu_supported()) return cr::not_built();
  CheckpointOptions o = options;
  {
    // As runc: a missing container is named before a bad flag.
    BERTH_ASSIGN(auto store, container::StateStore::open_existing(o.root));
    BERTH_ASSIGN(auto dir, store.open_container(o.id));
    BERTH_TRY(cr::parse_cgroups_mode(o.manage_cgroups_mode));
    BERTH_TRY(cr::parse_empty_ns(o.empty_ns));
    if (o.lazy_pages) BERTH_TRY(lazy_pages_ready(o));
    BERTH_TRY(dir.lock());
    BERTH_TRY(prepare_image_paths(o));
    BERTH_TRY(dump(o, dir));
  }  // the lock is released: delete takes it again
  // CRIU killed the dumped processes; runc then destroys the container (poststop hooks,
  // cgroups, state), as `delete --force` does.
  if (!o.leave_running && !o.pre_dump) BERTH_TRY(delete_container(o.root, o.id, true));
  return ok();
}

}  // namespace berth
