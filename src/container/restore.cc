// `restore`: a new container (id, bundle) made from a checkpoint: state directory and
// cgroups (linux.cgroupsPath, linux.resources) as create makes them, the rootfs bound for
// CRIU, prestart and createRuntime hooks at CRIU's setup-namespaces, the restored init
// recorded in state.json; then detached, or supervised in the foreground as `run` does.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "berth/checkpoint.h"
#include "berth/container.h"
#include "cgroups/detect.h"
#include "container/cgroup_setup.h"
#include "container/criu/config_file.h"
#include "container/criu/driver.h"
#include "container/criu/request.h"
#include "container/hooks.h"
#include "container/init_builder.h"
#include "container/record.h"
#include "container/run.h"
#include "container/state_store.h"
#include "container/status.h"
#include "linux/console.h"
#include "linux/paths.h"
#include "linux/proc.h"
#include "linux/sys.h"
#include "util/file.h"
#include "util/rollback.h"
#include "util/strings.h"

namespace berth {
namespace {

namespace cr = container::criu;

Result<spec::Spec> load_bundle(const std::string& bundle) {
  BERTH_ASSIGN(std::string text, file::read_regular(AT_FDCWD, bundle + "/config.json", 64u << 20));
  BERTH_ASSIGN(spec::Spec spec, spec::parse_spec(text, "config.json"));
  BERTH_TRY(spec::validate(spec, "config.json"));
  if (!spec.process) return Error::invalid_spec("config.json: process: must be set to restore a container");
  if (!spec.root || spec.root->path.empty()) return Error::invalid_spec("config.json: root.path: must be set");
  BERTH_TRY(container::refuse_unsupported(spec));
  return spec;
}

struct Restoring {
  const RestoreOptions& o;
  spec::Spec spec;
  ContainerRecord record;
  std::optional<container::ContainerDir> dir;
  container::CgroupSetup cg;
  Rollback undo;
  std::vector<UniqueFd> ns_fds;
  std::optional<cr::ConfigFile> config;  // org.criu.config, checked before anything exists
  cr::Outcome out;
};

Status prepare_state(Restoring& c, const std::string& bundle) {
  BERTH_ASSIGN(auto store, container::StateStore::open(c.o.root));
  BERTH_ASSIGN(auto dir, store.create_locked(c.o.id, c.undo));
  c.dir.emplace(std::move(dir));
  c.record = container::new_record(c.spec, c.o.id, bundle, c.o.systemd_cgroup);
  BERTH_ASSIGN(c.record.cgroup_paths, container::planned_cgroup_paths(c.spec, c.o.id, c.o.systemd_cgroup));
  c.record.cgroup_created = true;
  BERTH_TRY(c.dir->write_record(c.record));
  BERTH_TRY(c.dir->write_config(c.spec));
  BERTH_ASSIGN(c.cg, container::setup_cgroups(c.spec, c.o.id, c.o.systemd_cgroup, c.o.rootless == "true", {}));
  // systemd: stops the unit once join_cgroups has started it (nothing before that).
  c.undo.push([&c] { (void)container::remove_cgroups(c.cg.paths, c.o.systemd_cgroup && c.cg.manager); });
  c.record.cgroup_paths = c.cg.paths;
  return c.dir->write_record(c.record);
}

// CRIU wants the root a mount point of its own; runc binds the rootfs at
// <state dir>/criu-root for the time of the restore.
Result<std::string> bind_root(Restoring& c) {
  std::string at = c.dir->path() + "/criu-root";
  if (::mkdir(at.c_str(), 0755) < 0) return Error::sys(errno, "mkdir " + at);
  c.undo.push([at] { ::rmdir(at.c_str()); });
  if (::mount(c.record.rootfs.c_str(), at.c_str(), nullptr, MS_BIND | MS_REC, nullptr) < 0)
    return Error::sys(errno, "bind " + c.record.rootfs + " for criu");
  return at;
}

void unbind_root(const std::string& at) {
  ::umount2(at.c_str(), MNT_DETACH);
  ::rmdir(at.c_str());
}

// Mount points missing from the rootfs are made as runc makes them before a restore (a bind's
// as its source, a file or a directory; every other mount's a directory), except under a
// tmpfs mount (CRIU restores the tmpfs with its content). A rootfs other than the
// checkpointed one (podman's restore --import) lacks those the create had made: /proc, /sys.
Status prepare_mountpoints(const Restoring& c) {
  std::vector<std::string> tmpfs;
  for (const auto& m : c.spec.mounts)
    if (m.type == "tmpfs") tmpfs.push_back(linux::clean_path("/" + m.destination));
  UniqueFd rootfd(::open(c.record.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!rootfd) return Error::sys(errno, "open rootfs " + c.record.rootfs);
  for (const auto& m : c.spec.mounts) {
    bool bind = m.type == "bind";
    for (const auto& o : m.options) bind = bind || o == "bind" || o == "rbind";
    std::string dest = linux::clean_path("/" + m.destination);
    bool under_tmpfs = false;
    for (const auto& t : tmpfs) under_tmpfs = under_tmpfs || str::starts_with(dest, t == "/" ? t : t + "/");
    if (under_tmpfs) continue;
    std::string src = m.source.empty() || m.source[0] == '/' ? m.source : c.record.bundle + "/" + m.source;
    struct stat st;
    bool file = bind && ::stat(src.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
    auto leaf = file ? linux::Leaf::kFile : linux::Leaf::kDirectory;
    BERTH_TRY(linux::make_in_root(linux::real_sys(), rootfd.get(), dest, leaf).context("mount point " + dest));
  }
  return ok();
}

Result<std::vector<std::string>> read_descriptors(const std::string& image_dir) {
  // The image directory is only as trusted as whoever wrote it: a FIFO here hung restore.
  BERTH_ASSIGN(std::string text, file::read_regular(AT_FDCWD, image_dir + "/descriptors.json", 1u << 20));
  return cr::parse_descriptors(text);
}

// CRIU restores into the cgroups of its worker (the restored init is the worker's sibling
// and inherits them; with manage_cgroups it places the tree below the cgroup roots we name).
// So the worker is what joins the container's cgroups, before it reads the request: with
// the systemd driver, the transient scope is started with the worker's pid, as runc starts
// it with its CRIU's. Never berth's own pid: a failure after systemd started the scope stops
// it, and systemd would SIGTERM whatever is inside (berth died with 143 and left the state,
// the criu-root mount and the id behind). The roots are where the worker landed, as its
// /proc/<pid>/cgroup names them (runc reads the same file).
Status place_worker(Restoring& c, pid_t worker, cr::Request& r) {
  BERTH_TRY(container::join_cgroups(c.cg, worker));
  c.record.cgroup_paths = c.cg.paths;
  BERTH_ASSIGN(std::string mountinfo, file::read("/proc/self/mountinfo", 16u << 20));
  BERTH_ASSIGN(std::string own, file::read("/proc/" + std::to_string(worker) + "/cgroup", 1u << 20));
  BERTH_ASSIGN(auto in, cgroups::parse_host(mountinfo, own));
  r.cg_roots.clear();
  for (const auto& h : in.v1) r.cg_roots.push_back({str::join(h.controllers, ","), h.own});
  if (in.unified) r.cg_roots.push_back({"", in.unified->own});
  return ok();
}

bool has_own_netns(const spec::Spec& spec) {
  if (!spec.linux) return false;
  for (const auto& n : spec.linux->namespaces)
    if (n.type == "network" && n.path.empty()) return true;
  return false;
}

// restore --empty-ns network of an image made by an earlier berth, which named the
// container's own network namespace as external (extRootNetNS) where CRIU's empty_ns is
// meant: a new namespace with nothing in it (loopback down) is handed over under that key
// (CRIU ignores the fd for any other image). Our thread enters it only to open a handle.
Result<UniqueFd> new_empty_netns() {
  UniqueFd home(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!home) return Error::sys(errno, "open /proc/thread-self/ns/net");
  if (::unshare(CLONE_NEWNET) < 0) return Error::sys(errno, "--empty-ns network: unshare a network namespace");
  UniqueFd ns(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  int err = errno;
  if (::setns(home.get(), CLONE_NEWNET) < 0) return Error::sys(errno, "--empty-ns network: return to our network namespace");
  if (!ns) return Error::sys(err, "--empty-ns network: open the new namespace");
  return ns;
}

std::string hook_state(const ContainerRecord& r, pid_t pid) {
  // "created", as create passes to the same hooks (create.cc, kHooks).
  OciState s = container::to_oci_state(r, ContainerStatus::kCreated);
  s.status = "created";
  s.pid = pid;
  return oci_state_json(s, false);
}

Status run_criu(Restoring& c, const std::string& bundle) {
  std::string root;
  {
    BERTH_ASSIGN(root, bind_root(c));
  }
  struct Unbind {
    std::string at;
    ~Unbind() { unbind_root(at); }
  } unbind{root};
  BERTH_TRY(prepare_mountpoints(c));
  cr::RestoreFacts f;
  f.root = root;
  f.bundle = bundle;
  f.cgroup_paths = c.cg.paths;
  BERTH_ASSIGN(f.descriptors, read_descriptors(c.o.image_path));
  for (const auto& n : c.spec.linux ? c.spec.linux->namespaces : std::vector<spec::Namespace>{}) {
    if ((n.type != "network" && n.type != "pid") || n.path.empty()) continue;
    UniqueFd fd(::open(n.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return Error::sys(errno, "open " + n.path);
    f.joined_ns_fds[n.type] = fd.get();
    c.ns_fds.push_back(std::move(fd));
  }
  if (!c.o.empty_ns.empty() && !f.joined_ns_fds.count("network") && has_own_netns(c.spec)) {
    BERTH_ASSIGN(UniqueFd fd, new_empty_netns());
    f.joined_ns_fds["network"] = fd.get();
    c.ns_fds.push_back(std::move(fd));
  }
  BERTH_ASSIGN(cr::Request req, cr::restore_request(c.o, c.spec, f));
  cr::use_config_file(req, c.config);
  // As runc: the runtime's hooks run when CRIU has made the namespaces.
  cr::Notify notify = [&](const std::string& action, pid_t pid) -> Status {
    if (action != "setup-namespaces" || !c.spec.hooks) return ok();
    std::string state = hook_state(c.record, pid);
    BERTH_TRY(container::run_hooks("prestart", c.spec.hooks->prestart, state, c.record.bundle));
    return container::run_hooks("createRuntime", c.spec.hooks->create_runtime, state, c.record.bundle);
  };
  cr::Placement place = [&c](pid_t worker, cr::Request& r) { return place_worker(c, worker, r); };
  BERTH_ASSIGN(c.out, cr::execute(req, c.o.criu_binary, notify, place));
  c.undo.push([pid = c.out.pid] { ::kill(pid, SIGKILL); });
  return ok();
}

Status restore_steps(Restoring& c) {
  std::string bundle = linux::absolute_path(c.o.bundle);
  BERTH_ASSIGN(c.spec, load_bundle(bundle));
  if (c.spec.process->terminal && c.o.console_socket.empty() && c.o.detach)
    return Error::invalid_argument("cannot allocate tty if berth will detach without setting console socket");
  if (!c.spec.process->terminal && !c.o.console_socket.empty())
    return Error::invalid_argument("cannot use console socket if berth will not detach or allocate tty");
  // The config file CRIU will read, checked before any state, cgroup or mount exists.
  std::string rootfs = c.spec.root->path[0] == '/' ? c.spec.root->path : bundle + "/" + c.spec.root->path;
  BERTH_ASSIGN(c.config, cr::check_config_file(c.spec, cr::container_paths(c.spec, bundle, linux::clean_path(rootfs))));
  BERTH_TRY(prepare_state(c, bundle));
  BERTH_TRY(run_criu(c, bundle));
  c.record.pid = c.out.pid;
  if (auto st = linux::read_proc_stat(c.out.pid)) c.record.pid_start_time = st->start_time;
  BERTH_TRY(c.dir->write_record(c.record));
  if (c.out.pts_master && !c.o.console_socket.empty())
    BERTH_TRY(linux::send_fd_to_socket(c.o.console_socket, c.out.pts_master.get(), "").context("console socket"));
  if (!c.o.pid_file.empty()) BERTH_TRY(container::write_pid_file(c.o.pid_file, c.out.pid));
  return ok();
}

}  // namespace

Result<int> restore_container(const RestoreOptions& options) {
  if (!criu_supported()) return cr::not_built();
  RestoreOptions o = options;
  BERTH_TRY(cr::parse_cgroups_mode(o.manage_cgroups_mode));
  BERTH_TRY(cr::parse_empty_ns(o.empty_ns));
  o.image_path = linux::absolute_path(o.image_path.empty() ? "checkpoint" : o.image_path);
  if (!o.work_path.empty()) o.work_path = linux::absolute_path(o.work_path);
  BERTH_TRY(container::validate_id(o.id));
  // CRIU restores as a sibling of its worker (rst_sibling), so the restored init is our child; a
  // subreaper also adopts what it leaves behind.
  if (!o.detach && !o.no_subreaper) ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  Restoring c{o, {}, {}, {}, {}, {}, {}, {}, {}};
  if (auto st = restore_steps(c); !st) return std::move(st).error();
  c.undo.commit();
  if (o.detach) return 0;
  pid_t pid = c.out.pid;
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  UniqueFd master = c.out.pts_master && o.console_socket.empty() ? std::move(c.out.pts_master) : UniqueFd();
  c.dir.reset();  // our lock: delete takes it after the container exits
  sigset_t old;
  sigset_t mask = block_forwarded_signals(&old);
  Created cr_{pid, pidfd.get(), master.get()};
  int code = supervise_foreground(cr_, mask);
  (void)delete_container(o.root, o.id, true);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  return code;
}

}  // namespace berth
