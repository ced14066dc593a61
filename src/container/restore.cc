// `restore`: a new container (id, bundle) made from a checkpoint: state directory and
// cgroups (linux.cgroupsPath, linux.resources) as create makes them, the rootfs bound for
// CRIU, prestart and createRuntime hooks at CRIU's setup-namespaces, the restored init
// recorded in state.json; then detached, or supervised in the foreground as `run` does.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "berth/checkpoint.h"
#include "berth/container.h"
#include "cgroups/detect.h"
#include "container/bundle.h"
#include "container/cgroup_setup.h"
#include "container/conversation.h"
#include "container/criu/config_file.h"
#include "container/criu/driver.h"
#include "container/criu/request.h"
#include "container/hooks.h"
#include "container/launch.h"
#include "container/restore_host.h"
#include "container/run.h"
#include "container/state_store.h"
#include "linux/console.h"
#include "linux/paths.h"
#include "linux/sys.h"
#include "util/file.h"
#include "util/rollback.h"
#include "util/scope_exit.h"
#include "util/strings.h"

namespace berth {
namespace {

namespace cr = container::criu;

struct Restoring {
  const RestoreOptions& o;
  linux::Sys& sys;
  container::Staged s;
  UniqueFd init_pidfd;  // the restored init, killed only through it
  Rollback undo;
  std::vector<UniqueFd> ns_fds;
  std::optional<cr::ConfigFile> config;  // org.criu.config, checked before anything exists
  cr::Outcome out;
};

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
  BERTH_TRY(container::join_cgroups(c.s.cg, worker));
  c.s.record.cgroup_paths = c.s.cg.paths;
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
// (CRIU ignores the fd for any other image).
Status namespace_fds(Restoring& c, cr::RestoreFacts& f) {
  for (const auto& n : c.s.spec.linux ? c.s.spec.linux->namespaces : std::vector<spec::Namespace>{}) {
    if ((n.type != "network" && n.type != "pid") || n.path.empty()) continue;
    UniqueFd fd(::open(n.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return Error::sys(errno, "open " + n.path);
    f.joined_ns_fds[n.type] = fd.get();
    c.ns_fds.push_back(std::move(fd));
  }
  if (!c.o.empty_ns.empty() && !f.joined_ns_fds.count("network") && has_own_netns(c.s.spec)) {
    BERTH_ASSIGN(UniqueFd fd, container::new_empty_netns(c.sys));
    f.joined_ns_fds["network"] = fd.get();
    c.ns_fds.push_back(std::move(fd));
  }
  return ok();
}

// The restored init: CRIU restores it as a sibling of its worker (rst_sibling), so it is
// our child and its pidfd names it until we reap it; the undo kills it through that.
Status hold_restored(Restoring& c) {
  c.init_pidfd = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, c.out.pid, 0)));
  if (!c.init_pidfd) return Error::sys(errno, "pidfd_open of the restored init");
  c.undo.push([&c] { container::kill_through_pidfd(c.sys, c.init_pidfd.get()); });
  return ok();
}

Status run_criu(Restoring& c, const std::string& bundle) {
  BERTH_ASSIGN(std::string root,
               container::bind_root(c.sys, c.s.dir->fd(), c.s.dir->path(), c.s.record.rootfs, c.undo));
  ScopeExit unbind([&] { container::unbind_root(c.sys, c.s.dir->fd(), root); });
  BERTH_TRY(container::prepare_mountpoints(c.sys, c.s.spec, c.s.record.rootfs, c.s.record.bundle));
  cr::RestoreFacts f;
  f.root = root;
  f.bundle = bundle;
  f.cgroup_paths = c.s.cg.paths;
  BERTH_ASSIGN(f.descriptors, read_descriptors(c.o.image_path));
  BERTH_TRY(namespace_fds(c, f));
  BERTH_ASSIGN(cr::Request req, cr::restore_request(c.o, c.s.spec, f));
  cr::use_config_file(req, c.config);
  // As runc: the runtime's hooks run when CRIU has made the namespaces.
  cr::Notify notify = [&](const std::string& action, pid_t pid) -> Status {
    if (action != "setup-namespaces" || !c.s.spec.hooks) return ok();
    std::string state = container::hook_state(c.s.record, "created", pid);
    BERTH_TRY(container::run_hooks("prestart", c.s.spec.hooks->prestart, state, c.s.record.bundle));
    return container::run_hooks("createRuntime", c.s.spec.hooks->create_runtime, state, c.s.record.bundle);
  };
  cr::Placement place = [&c](pid_t worker, cr::Request& r) { return place_worker(c, worker, r); };
  BERTH_ASSIGN(c.out, cr::execute(req, c.o.criu_binary, notify, place));
  return hold_restored(c);
}

Status restore_steps(Restoring& c) {
  container::StageRequest req = container::stage_request(c.o, c.o.detach, "restore");
  BERTH_TRY(container::load_staged(req, c.s));
  // The config file CRIU will read, checked before any state, cgroup or mount exists.
  std::string bundle = linux::absolute_path(c.o.bundle);
  const std::string& path = c.s.spec.root->path;
  std::string rootfs = linux::clean_path(path[0] == '/' ? path : bundle + "/" + path);
  BERTH_ASSIGN(c.config, cr::check_config_file(c.s.spec, cr::container_paths(c.s.spec, bundle, rootfs)));
  BERTH_TRY(container::prepare_state(req, c.s, c.undo));
  BERTH_TRY(container::make_cgroups(req, c.s, {}, c.undo));
  BERTH_TRY(run_criu(c, bundle));
  BERTH_TRY(container::record_pid(*c.s.dir, c.s.record, c.out.pid, false));
  if (c.out.pts_master && !c.o.console_socket.empty())
    BERTH_TRY(linux::send_fd_to_socket(c.o.console_socket, c.out.pts_master.get(), "").context("console socket"));
  return container::publish_process(c.o.pid_file, "", c.out.pid, c.init_pidfd.get());
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
  linux::Sys& sys = linux::real_sys();
  // CRIU restores as a sibling of its worker (rst_sibling), so the restored init is our child; a
  // subreaper also adopts what it leaves behind.
  if (!o.detach && !o.no_subreaper) (void)sys.prctl(PR_SET_CHILD_SUBREAPER, 1);
  Restoring c{o, sys, {}, {}, {}, {}, {}, {}};
  if (auto st = restore_steps(c); !st) return std::move(st).error();
  c.undo.commit();
  if (o.detach) return 0;
  UniqueFd master = c.out.pts_master && o.console_socket.empty() ? std::move(c.out.pts_master) : UniqueFd();
  c.s.dir.reset();  // our lock: delete takes it after the container exits
  sigset_t old;
  sigset_t mask = block_forwarded_signals(&old);
  Created cr_{c.out.pid, c.init_pidfd.get(), master.get()};
  int code = supervise_foreground(cr_, mask);
  (void)delete_container(o.root, o.id, true);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  return code;
}

}  // namespace berth
