// `create`: from a bundle to an init blocked on exec.fifo. Order matters for recovery: the
// state directory and record exist before anything they describe, the init's pid is
// recorded as soon as it exists, and a Rollback undoes every step of a failed create.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "berth/container.h"
#include "container/cgroup_setup.h"
#include "container/conversation.h"
#include "container/device_modules.h"
#include "container/hooks.h"
#include "container/init_builder.h"
#include "container/process/init.h"
#include "container/process/spawn.h"
#include "container/process/sync.h"
#include "container/record.h"
#include "container/rootless.h"
#include "container/state_store.h"
#include "container/status.h"
#include "linux/netdev.h"
#include "linux/paths.h"
#include "linux/proc.h"
#include "linux/rootfs/idmap.h"
#include "linux/rootless.h"
#include "linux/sys.h"
#include "linux/userns.h"
#include "util/caller_fds.h"
#include "util/fds.h"
#include "util/file.h"
#include "util/log.h"
#include "util/phases.h"
#include "util/rollback.h"

namespace berth {
namespace {

using container::process::Message;
using container::process::Msg;

Result<spec::Spec> load_bundle(const std::string& bundle) {
  // The bundle is the caller's, but may be written by others (a FIFO there hung create).
  auto text = file::read_regular(AT_FDCWD, bundle + "/config.json", 64u << 20);
  if (!text) {
    if (text.error().err() == ENOENT) return Error::sys(ENOENT, "open " + bundle + "/config.json");
    return std::move(text).error();
  }
  BERTH_ASSIGN(spec::Spec spec, spec::parse_spec(*text, "config.json"));
  BERTH_TRY(spec::validate(spec, "config.json"));
  if (!spec.process) return Error::invalid_spec("config.json: process: must be set to create a container");
  if (!spec.root || spec.root->path.empty()) return Error::invalid_spec("config.json: root.path: must be set");
  BERTH_TRY(container::refuse_unsupported(spec));
  return spec;
}

std::string hook_state(const ContainerRecord& r, const char* status) {
  OciState s = container::to_oci_state(r, ContainerStatus::kCreating);
  s.status = status;
  s.pid = r.pid;
  return oci_state_json(s, false);
}

struct Creation {
  const CreateOptions& o;
  spec::Spec spec;
  ContainerRecord record;
  std::optional<container::ContainerDir> dir;
  container::CgroupSetup cg;
  OwnedPid init;        // the cloned child (stage one)
  pid_t init_pid = 0;   // the container's init (stage two if any)
  UniqueFd init_pidfd;  // always names the container's init, whichever stage it is
  UniqueFd console;
  linux::NetnsMoves moves;  // linux.netDevices and RDMA devices, moved at kHooks
  bool rootless = false;    // --rootless resolved: cgroups we may not write are left out
  container::UserNsPlan userns;
  bool started = false;  // the init ran the payload at once (direct_possible)
  // Declared last, so destroyed first: its steps still find the init, its pidfd and the
  // cgroups they undo (create_container also runs it explicitly on failure).
  Rollback undo;
};

// The init's undo step. The first step of every rollback: the cgroups can only go once it
// is dead. Only ever through a pidfd: a forked init is not our child, and after kPid stage
// one is reaped, so either pid number may already belong to another process.
void kill_init(Creation& c) {
  if (c.init_pidfd && c.init_pid != c.init.pid()) {
    if (linux::real_sys().pidfd_kill(c.init_pidfd.get())) {
      // Not our child, so no waitpid: the pidfd turns readable once it has exited, and
      // then it has left its cgroups.
      pollfd p{c.init_pidfd.get(), POLLIN, 0};
      while (::poll(&p, 1, 5000) < 0 && errno == EINTR) {
      }
    }
  }
  c.init.kill_and_reap();  // stage one, while it is still ours (through its pidfd)
}

Status record_pid(Creation& c, pid_t pid) {
  c.init_pid = pid;
  c.record.pid = pid;
  auto st = linux::read_proc_stat(pid);
  if (st) c.record.pid_start_time = st->start_time;
  // Marked first: no one sees the pid without it. Cleared at the init's kReady (a direct
  // init's execve), below.
  BERTH_TRY(c.dir->mark_setting_up());
  return c.dir->write_record(c.record);
}

// linux.netDevices, and the devices of org.berth.rdma.devices (which move only in exclusive
// rdma netns mode), go into the container's network namespace.
Result<linux::NetnsMoves> network_moves(const spec::Spec& spec) {
  linux::NetnsMoves m;
  if (spec.linux) m.net_devices = spec.linux->net_devices;
  BERTH_ASSIGN(auto rdma, container::rdma_netns_moves(spec));
  for (auto& r : rdma) m.rdma.push_back({r.device, r.netdevs});
  return m;
}

// The parent's side of the set-up conversation with the init.
// The init's bind sources, opened as root on the host's side but in the init's own mount
// namespace (see linux/rootfs/idmap.h), before it mounts anything. One that cannot be
// opened that way (a magic link) goes without an fd: the init binds it as before.
Status send_bind_sources(const Creation& c, int sock, const linux::rootfs::RootfsPlan* plan) {
  if (!plan) return Error::generic("sync: bind sources asked for without a mount namespace");
  auto& sys = linux::real_sys();
  BERTH_ASSIGN(UniqueFd root, sys.openat2(AT_FDCWD, "/proc/" + std::to_string(c.init_pid) + "/root",
                                          O_PATH | O_DIRECTORY, 0, 0));
  for (size_t i : linux::rootfs::runtime_opened_binds(*plan)) {
    auto src = linux::rootfs::open_bind_source(sys, root.get(), *plan, i);
    if (!src) log::debug("bind source " + plan->mounts[i].source + ": " + src.error().message() + "; the init binds it");
    BERTH_TRY(container::process::send(sock, Msg::kMountSource, static_cast<int64_t>(i), "", src ? src->get() : -1));
  }
  return container::process::send(sock, Msg::kGo);
}

Status converse(Creation& c, int sock, bool maps_on_clone, bool forks_init, const linux::rootfs::RootfsPlan* plan) {
  // With a second stage, stage one reports the real init (kPid) and exits while the init
  // carries on over the same socket. The init waits for our go after kPid, so its kReady
  // cannot overtake kPid; one that did would make `create` name stage one in the pid file
  // and kill it by exiting (its parent death signal), while the real init ran on unwatched
  // (seen through containerd's CRI, 1 in ~100 creates, before the go): refused as the
  // protocol error it is.
  bool pid_pending = forks_init;
  const auto& l = c.spec.linux ? *c.spec.linux : spec::Linux{};
  container::Peer peer;
  peer.name = "container init";
  peer.console_socket = c.o.console_socket;
  peer.console = &c.console;
  peer.seccomp = c.spec.linux && c.spec.linux->seccomp ? &*c.spec.linux->seccomp : nullptr;
  peer.state_json = [&c] { return hook_state(c.record, "creating"); };
  if (maps_on_clone)
    BERTH_TRY(linux::write_id_maps(c.init.pid(), l.uid_mappings, l.gid_mappings, c.userns.maps));
  BERTH_TRY(container::process::send(sock, Msg::kGo));
  if (!forks_init) {
    // The pid record while the init sets up (0.3-0.7 ms less on the way to kReady). The
    // init keeps its parent death signal until our kSettled: killed before the record is
    // written, we take the init with us, and no init lives on that the state does not name.
    Phases t("create");
    BERTH_TRY(record_pid(c, c.init.pid()));
    // An init that failed meanwhile has sent its error and closed its end: the loop below
    // reads that error (or the end), which says more than our broken pipe.
    if (auto st = container::process::send(sock, Msg::kSettled); !st && st.error().err() != EPIPE)
      return st;
    t.mark("pid recorded beside the init");
  }
  while (true) {
    BERTH_ASSIGN(Message m, container::process::receive(sock));
    switch (m.type) {
      case Msg::kMapIds:
        BERTH_TRY(linux::write_id_maps(c.init.pid(), l.uid_mappings, l.gid_mappings, c.userns.maps));
        BERTH_TRY(container::process::send(sock, Msg::kGo));
        break;
      case Msg::kPid:
        // Stage one handed over to the init it forked and exits: reap it, follow the new
        // init, and let it go on (everything it reports from now on names its pid).
        // Its pidfd comes with the message, made by its parent while it could not have
        // been reaped: from here on the undo step signals only through it.
        if (!m.fd) return Error::generic("sync: the container init's pid came without its pidfd");
        c.init_pidfd = std::move(m.fd);
        c.init.wait();
        BERTH_TRY(record_pid(c, static_cast<pid_t>(m.value)));
        pid_pending = false;
        BERTH_TRY(container::process::send(sock, Msg::kGo));
        break;
      case Msg::kHooks:
        // The network namespace exists by now (created or joined); hooks see the devices.
        BERTH_TRY(linux::move_into_netns(c.moves, c.init_pid));
        if (c.spec.hooks) {
          // "created": runtime-spec 1.3 runtime.md numbers these hooks steps 3 and 4 of the
          // lifecycle and defines `created` as "after step 2" (`creating` is step 2 itself);
          // crun passes it, runc 1.1 "creating" (docs/conformance.md, "Hook states").
          std::string state = hook_state(c.record, "created");
          // From the bundle directory, as runc (whose cwd it is) runs them.
          BERTH_TRY(container::run_hooks("prestart", c.spec.hooks->prestart, state, c.record.bundle));
          BERTH_TRY(container::run_hooks("createRuntime", c.spec.hooks->create_runtime, state, c.record.bundle));
        }
        BERTH_TRY(container::process::send(sock, Msg::kHooksDone));
        break;
      case Msg::kMountSources:
        BERTH_TRY(send_bind_sources(c, sock, plan));
        break;
      case Msg::kReady:
        if (pid_pending) return Error::generic("sync: the container init reported ready before its pid");
        return ok();
      default:  // kConsole, kSeccompFd, kError
        BERTH_TRY(container::answer_common(peer, sock, c.init_pid, m));
    }
  }
}

Status prepare_state(Creation& c, container::StateStore& store, const std::string& bundle) {
  BERTH_ASSIGN(auto dir, store.create_locked(c.o.id, c.undo));
  c.dir.emplace(std::move(dir));
  c.record = container::new_record(c.spec, c.o.id, bundle, c.o.systemd_cgroup);
  c.record.rootless = c.rootless;
  // The cgroups are recorded before any directory exists: killed between the mkdirs and
  // the next write, we would otherwise leave cgroups that no delete knows of.
  BERTH_ASSIGN(c.record.cgroup_paths, container::planned_cgroup_paths(c.spec, c.o.id, c.o.systemd_cgroup));
  c.record.cgroup_created = true;
  BERTH_TRY(c.dir->write_record(c.record));
  return c.dir->write_config(c.spec);
}

// In the init, first: only what it needs stays open; above all not the state directory,
// whose flock would otherwise stay held by the waiting init.
void keep_only_the_inits_fds(const container::BuiltInit& built) {
  const auto& cfg = built.cfg;
  std::vector<int> keep = {cfg.sync_fd, cfg.fifo_fd, log::fd()};
  for (int fd = 3; fd < 3 + cfg.preserve_fds; ++fd) keep.push_back(fd);
  for (const auto& j : built.ns.joins) keep.push_back(j.fd.get());
  for (int fd : linux::rootfs::prepared_fds(*cfg.rootfs)) keep.push_back(fd);  // idmapped binds
  for (const auto& t : cfg.cgroup_tasks) keep.push_back(t.fd);
  close_fds_except(keep);
}

Result<pid_t> spawn_init(Creation& c, container::BuiltInit* built, UniqueFd& fifo) {
  BERTH_ASSIGN(auto socks, container::process::sync_pair());
  auto& cfg = built->cfg;
  cfg.sync_fd = socks.second.get();
  cfg.fifo_fd = fifo.get();
  cfg.parent_death_kill = true;
  // A second stage is recorded when it reports its pid, before its go (converse).
  cfg.settle_pending = !cfg.second_stage && !cfg.fork_init_last;
  cfg.dumpable_until_mapped = c.userns.creates && c.userns.unprivileged;
  struct stat self;
  if (::stat("/proc/self/exe", &self) == 0) cfg.self_dev = self.st_dev, cfg.self_ino = self.st_ino;
  int parent_end = socks.first.get();
  bool in_cgroup = false;
  // A user namespace made by the clone holds the init until we wrote its maps: we place it.
  std::vector<cgroups::TasksFile> tasks;
  if (!(cfg.clone_flags & CLONE_NEWUSER)) BERTH_TRY(container::self_placement(c.cg, &tasks, &cfg.cgroup_tasks));
  Phases t("create");
  BERTH_ASSIGN(c.init, container::process::spawn(cfg.clone_flags, c.cg.v2_fd, [&] {
    keep_only_the_inits_fds(*built);
    return container::process::init_main(cfg);
  }, &in_cgroup));
  socks.second.reset();
  fifo.reset();
  c.init_pidfd.reset(::fcntl(c.init.pidfd(), F_DUPFD_CLOEXEC, 0));  // hooks must not inherit it
  c.undo.push([&c] { kill_init(c); });
  c.init_pid = c.init.pid();
  t.mark("clone");
  bool forks_init = !cfg.settle_pending;
  if (forks_init) BERTH_TRY(record_pid(c, c.init.pid()));  // stage one, until kPid
  tasks.clear();  // the init has its own copies of the fds
  if (!in_cgroup) BERTH_TRY(container::join_cgroups(c.cg, c.init.pid(), !cfg.cgroup_tasks.empty()));
  t.mark("init joined the cgroups (the unified one; it moves itself into the v1 ones)");
  bool maps_on_clone = (cfg.clone_flags & CLONE_NEWUSER) != 0;
  const linux::rootfs::RootfsPlan* plan = cfg.rootfs ? &*cfg.rootfs : nullptr;
  BERTH_TRY(converse(c, parent_end, maps_on_clone, forks_init, plan));
  return c.init_pid;
}

// `run` (start_now) where nothing needs us between the clone and the payload: no message
// the init would wait for an answer to (kMapIds, kHooks, kMountSources, kConsole,
// kSeccompFd, a second stage's kPid), no start to wait for. Then the init can share our
// memory while we sleep: it is the only process of its new pid namespace until its
// execve (a joined one is refused below; without one it is in the host's, where it is no
// more exposed than we are), so nothing of a container sees it. On pure cgroup v2 it is
// born in its cgroup (clone3 onto our stack, CLONE_INTO_CGROUP; a join of its own would
// wait for an RCU grace period), so not where that clone3 is not built
// (kCanShareMemoryIntoCgroup). Not with the systemd driver (a D-Bus call), a new time
// namespace (clone3 only) or the sanitizers.
bool direct_possible(const Creation& c, const container::BuiltInit& b) {
  const auto& cfg = b.cfg;
  const spec::Spec& s = c.spec;
  if (!c.o.start_now || !container::process::kCanShareMemory) return false;
  if (s.process->terminal || !c.o.console_socket.empty()) return false;
  if (s.hooks && (!s.hooks->prestart.empty() || !s.hooks->create_runtime.empty() ||
                  !s.hooks->create_container.empty() || !s.hooks->start_container.empty() ||
                  !s.hooks->poststart.empty()))
    return false;
  if (s.linux && s.linux->seccomp && !s.linux->seccomp->listener_path.empty()) return false;
  if (!c.moves.empty() || cfg.wants_runtime_hooks || cfg.sources_from_runtime) return false;
  if (cfg.second_stage || cfg.fork_init_last || !cfg.ns || !cfg.ns->joins.empty()) return false;
  if (((cfg.clone_flags | cfg.unshare_flags) & (CLONE_NEWUSER | CLONE_NEWTIME)) || c.userns.creates) return false;
  if (c.o.systemd_cgroup || b.ldconfig_fill) return false;
  if (c.cg.v2_fd >= 0 && !container::process::kCanShareMemoryIntoCgroup) return false;
  return true;
}

// The direct init's report: kReady just before its execve, then EOF (the socket is
// close-on-exec) or the error that stopped the execve. EOF without kReady: it died.
Status expect_execve(int sock) {
  bool ready = false;
  while (true) {
    BERTH_ASSIGN(auto m, container::process::receive_or_eof(sock));
    if (!m && ready) return ok();
    if (!m) return Error::generic("container init exited before it started its process");
    if (m->type == Msg::kError) return container::process::to_error(*m);
    if (m->type != Msg::kReady || ready) return Error::generic("sync: unexpected message from the container init");
    ready = true;
  }
}

// The direct init (direct_possible): it joins its cgroups and records its pid itself,
// then goes on as any init but with no go to wait for and no start (cfg.direct); we wake
// at its execve, or its exit. False, with nothing done, where the shared clone is refused
// (a seccomp filter around us, a kernel): the caller takes the usual way.
Result<bool> spawn_init_direct(Creation& c, container::BuiltInit* built) {
  BERTH_ASSIGN(auto socks, container::process::sync_pair());
  auto& cfg = built->cfg;
  cfg.sync_fd = socks.second.get();
  cfg.parent_death_kill = true;
  cfg.direct = true;
  struct stat self;
  if (::stat("/proc/self/exe", &self) == 0) cfg.self_dev = self.st_dev, cfg.self_ino = self.st_ino;
  if (c.cg.manager) c.cg.manager->open_all();  // the init writes through our fds, caching none
  std::vector<cgroups::TasksFile> tasks;  // written by the init's stage one (tasks ← 0)
  BERTH_TRY(container::self_placement(c.cg, &tasks, &cfg.cgroup_tasks));
  bool v1_joined = !cfg.cgroup_tasks.empty();
  Phases t("create");
  bool in_cgroup = false;  // pure v2: born there (vfork_child sets it before we run)
  auto child = container::process::vfork_child(cfg.clone_flags, [&] {
    // A parent killed in its sleep takes us along, before anything is recorded.
    (void)linux::real_sys().prctl(PR_SET_PDEATHSIG, SIGKILL);
    // cgroup.procs reads a pid in the writer's pid namespace, where ours is 1: "0" is us.
    pid_t pid = container::process::host_pid_from_proc();  // not 1, as getpid() says here
    Status st = ok();
    if (pid <= 0) st = Error::generic("cannot read our pid in /proc/self");
    else if (!in_cgroup) st = container::join_cgroups(c.cg, 0, v1_joined);
    if (st) st = record_pid(c, pid);
    if (!st) {
      (void)container::process::send_error(cfg.sync_fd, st.error());
      return 1;
    }
    keep_only_the_inits_fds(*built);
    return container::process::init_main(cfg);
  }, c.cg.v2_fd, &in_cgroup);
  if (!child) {
    cfg.direct = false;
    cfg.cgroup_tasks.clear();  // their fds close with `tasks`
    return false;
  }
  socks.second.reset();
  c.init = std::move(*child);
  c.init_pidfd.reset(::fcntl(c.init.pidfd(), F_DUPFD_CLOEXEC, 0));  // hooks must not inherit it
  c.undo.push([&c] { kill_init(c); });
  c.init_pid = c.init.pid();
  t.mark(in_cgroup ? "init set up and started, in our memory, born in its cgroup (CLONE_INTO_CGROUP)"
                   : "init set up and started, in our memory");
  BERTH_TRY(expect_execve(socks.first.get()));
  c.started = true;
  return true;
}

Status create_steps(Creation& c) {
  Phases t("create");
  std::string bundle = linux::absolute_path(c.o.bundle);
  BERTH_ASSIGN(c.spec, load_bundle(bundle));
  t.mark("config");
  if (c.spec.process->terminal && c.o.console_socket.empty() && !c.o.foreground)
    return Error::invalid_argument("cannot allocate tty if berth will detach without setting console socket");
  if (!c.spec.process->terminal && !c.o.console_socket.empty())
    return Error::invalid_argument("cannot use console socket if berth will not detach or allocate tty");
  // Rootless decisions before anything exists: a refused config leaves nothing behind.
  BERTH_ASSIGN(c.rootless, linux::resolve_rootless(c.o.rootless, linux::Caller::current()));
  BERTH_ASSIGN(c.userns, container::plan_user_ns(c.spec, linux::MapCaller::current()));
  BERTH_ASSIGN(auto store, container::StateStore::open(c.o.root));
  BERTH_TRY(prepare_state(c, store, bundle));
  t.mark("state");
  // The whole plan first: device modules add cgroup rules before the cgroup exists.
  OciState state = container::to_oci_state(c.record, ContainerStatus::kCreating);
  BERTH_ASSIGN(auto built, container::build_init(c.spec, c.o, c.record.rootfs, state));
  // start and delete run poststart/poststop hooks from the config copy: those added by
  // device modules (CDI) must be in it.
  if (built->spec_changed) BERTH_TRY(c.dir->write_config(c.spec));
  BERTH_ASSIGN(c.moves, network_moves(c.spec));
  if (!c.moves.empty()) built->cfg.wants_runtime_hooks = true;  // the init pauses at kHooks
  t.mark("plan");
  BERTH_ASSIGN(c.cg, container::setup_cgroups(c.spec, c.o.id, c.o.systemd_cgroup, c.rootless,
                                              built->device_rules));
  c.undo.push([&c] {
    // systemd: only a unit this create started is stopped. One that existed already
    // (StartTransientUnit answered UnitExists) is another container's.
    if (c.o.systemd_cgroup && !c.cg.manager) return;
    (void)container::remove_cgroups(c.cg.paths, c.o.systemd_cgroup);
  });
  c.record.cgroup_paths = c.cg.paths;
  BERTH_TRY(c.dir->write_record(c.record));  // only if they differ from the planned paths
  t.mark("cgroups");
  if (built->cfg.rootfs)
    container::cgroup_mount_view(c.cg, &built->cfg.rootfs->cgroups, &built->cfg.rootfs->cgroup_links);
  bool started = false;
  if (direct_possible(c, *built)) {
    BERTH_ASSIGN(bool direct, spawn_init_direct(c, built.get()));
    started = direct;
  }
  if (!started) {
    if (::mkfifoat(c.dir->fd(), "exec.fifo", 0622) < 0) return Error::sys(errno, "create exec.fifo");
    // Opened read-write by us: the init keeps it and blocks reading until `start` writes.
    UniqueFd fifo(::openat(c.dir->fd(), "exec.fifo", O_RDWR | O_CLOEXEC));
    if (!fifo) return Error::sys(errno, "open exec.fifo");
    BERTH_TRY(spawn_init(c, built.get(), fifo));
  }
  t.mark("init ready");
  if (built->ldconfig_fill) {
    devices::fill_ldconfig_cache(*built->ldconfig_fill);
    t.mark("ldconfig cache filled");
  }
  BERTH_TRY(c.dir->write_record(c.record));
  BERTH_TRY(c.dir->clear_setting_up());
  BERTH_TRY(container::publish_process(c.o.pid_file, c.o.pidfd_socket, c.init_pid, c.init_pidfd.get()));
  t.mark("finish");
  return ok();
}

}  // namespace

Result<Created> create_container(const CreateOptions& o) {
  // Before anything exists: a preserved fd that is not the caller's would be one of ours
  // (the state root, this container's locked directory) in the container.
  BERTH_TRY(caller_fds::check(o.listen_fds, o.preserve_fds - o.listen_fds));
  Creation c{o, {}, {}, {}, {}, {}, 0, {}, {}, {}, false, {}, false, {}};
  auto st = create_steps(c);
  if (!st) {
    c.undo.run();  // init, cgroups, state directory: in that order, while all still exist
    return std::move(st).error();
  }
  c.undo.commit();
  Created out;
  out.started = c.started;
  out.pid = c.init_pid;
  if (o.foreground) {
    out.pidfd = c.init_pidfd.release();
    out.console_master = c.console.release();
    if (c.init.pid() == c.init_pid) c.init.release();
  } else {
    c.init.release();
  }
  return out;
}

}  // namespace berth
