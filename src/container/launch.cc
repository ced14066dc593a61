// The parent's side of starting a container's init (process::Launch): one shared setup,
// the classic clone (kInit, kSecondStage, kForkLast) and the direct one (kDirect,
// direct_possible), the conversation while the init sets up, the pid record and the kill
// of a half-made init. Order matters for recovery: the init's pid is recorded as soon as
// it exists, and its kill is the first undo step pushed once it does.
#include "container/launch.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "container/cgroup_setup.h"
#include "container/conversation.h"
#include "container/hooks.h"
#include "container/process/init.h"
#include "container/process/sync.h"
#include "container/record.h"
#include "container/status.h"
#include "linux/proc.h"
#include "linux/rootfs/idmap.h"
#include "linux/userns.h"
#include "util/fds.h"
#include "util/log.h"
#include "util/phases.h"

namespace berth::container {
namespace {

using process::Launch;
using process::Message;
using process::Msg;

// The init's undo step, the first of every rollback: the cgroups can only go once it is
// dead. Only ever through a pidfd: a forked init is not our child, and after kPid stage
// one is reaped, so either pid number may already belong to another process.
void kill_init(Launcher& l) {
  if (l.init_pidfd && l.init_pid != l.init.pid()) kill_through_pidfd(l.sys, l.init_pidfd.get());
  l.init.kill_and_reap();  // stage one, while it is still ours (through its pidfd)
}

// The init is cloned: its pidfd kept (close-on-exec, hooks must not inherit it), its kill
// the first undo step.
void hold_init(Launcher& l, OwnedPid child) {
  l.init = std::move(child);
  l.init_pidfd.reset(::fcntl(l.init.pidfd(), F_DUPFD_CLOEXEC, 0));
  l.undo.push([&l] { kill_init(l); });
  l.init_pid = l.init.pid();
}

// In the init, first: only what it needs stays open; above all not the state directory,
// whose flock would otherwise stay held by the waiting init.
void keep_only_the_inits_fds(const BuiltInit& built) {
  const auto& cfg = built.cfg;
  std::vector<int> keep = {cfg.sync_fd, cfg.fifo_fd, log::fd()};
  for (int fd = 3; fd < 3 + cfg.preserve_fds; ++fd) keep.push_back(fd);
  for (const auto& j : built.ns.joins) keep.push_back(j.fd.get());
  if (cfg.rootfs)
    for (int fd : linux::rootfs::prepared_fds(*cfg.rootfs)) keep.push_back(fd);  // idmapped binds
  for (const auto& t : cfg.cgroup_tasks) keep.push_back(t.fd);
  close_fds_except(keep);
}

// What every shape sets alike before its clone.
void common_config(BuiltInit& b, int child_sync) {
  auto& cfg = b.cfg;
  cfg.sync_fd = child_sync;
  cfg.parent_death_kill = true;
  struct stat self;
  if (::stat("/proc/self/exe", &self) == 0) cfg.self_dev = self.st_dev, cfg.self_ino = self.st_ino;
}

// kPid: stage one handed over to the init it forked and exits. Reap it, follow the new
// init, and let it go on (everything it reports from now on names its pid). Its pidfd
// comes with the message, made by its parent while it could not have been reaped: from
// here on the undo step signals only through it.
Status take_forked_init(Launcher& l, int sock, Message& m) {
  if (!m.fd) return Error::generic("sync: the container init's pid came without its pidfd");
  l.init_pidfd = std::move(m.fd);
  l.init.wait();
  l.init_pid = static_cast<pid_t>(m.value);
  BERTH_TRY(record_pid(*l.s.dir, l.s.record, l.init_pid, true));
  return process::send(sock, Msg::kGo);
}

// kHooks: the network namespace exists by now (created or joined); hooks see the devices.
Status run_runtime_hooks(Launcher& l, int sock) {
  BERTH_TRY(linux::move_into_netns(l.moves, l.init_pid));
  const auto& hooks = l.s.spec.hooks;
  if (hooks) {
    // "created": runtime-spec 1.3 runtime.md numbers these hooks steps 3 and 4 of the
    // lifecycle and defines `created` as "after step 2" (`creating` is step 2 itself);
    // crun passes it, runc 1.1 "creating" (docs/conformance.md, "Hook states").
    std::string state = hook_state(l.s.record, "created", l.s.record.pid);
    // From the bundle directory, as runc (whose cwd it is) runs them.
    BERTH_TRY(run_hooks("prestart", hooks->prestart, state, l.s.record.bundle));
    BERTH_TRY(run_hooks("createRuntime", hooks->create_runtime, state, l.s.record.bundle));
  }
  return process::send(sock, Msg::kHooksDone);
}

Status write_maps(const Launcher& l) {
  const auto& lx = l.s.spec.linux ? *l.s.spec.linux : spec::Linux{};
  return linux::write_id_maps(l.init.pid(), lx.uid_mappings, lx.gid_mappings, l.userns.maps);
}

// The first go. Without a second stage, the pid record while the init sets up. The init
// keeps its parent death signal until our kSettled: killed before the record is written,
// we take the init with us, and no init lives on that the state does not name.
Status first_go(Launcher& l, int sock, bool maps_on_clone, bool forks) {
  if (maps_on_clone) BERTH_TRY(write_maps(l));
  BERTH_TRY(process::send(sock, Msg::kGo));
  if (forks) return ok();
  Phases t("create");
  BERTH_TRY(record_pid(*l.s.dir, l.s.record, l.init.pid(), true));
  // An init that failed meanwhile has sent its error and closed its end: the conversation
  // reads that error (or the end), which says more than our broken pipe.
  if (auto st = process::send(sock, Msg::kSettled); !st && st.error().err() != EPIPE) return st;
  t.mark("pid recorded beside the init");
  return ok();
}

// The init's error, if it sent one before it ended (its pid gone, systemd's job failed
// for want of it): that says why, where the job's end only says that it failed.
Error init_error_or(int sock, Error job_error) {
  pollfd p{sock, POLLIN, 0};
  if (::poll(&p, 1, 0) != 1) return job_error;
  auto m = process::receive(sock);
  if (m && m->type == Msg::kError) return process::to_error(*m);
  return job_error;
}

}  // namespace

Status place_in_unit(Launcher& l, int sock) {
  if (!l.s.cg.systemd || l.s.cg.manager) return ok();
  Phases t("create");
  if (auto st = begin_unit(l.s.cg, l.init_pid); !st) return init_error_or(sock, std::move(st).error());
  t.mark("systemd unit started with the init, which sets itself up meanwhile");
  if (auto st = finish_unit(l.s.cg, l.init_pid); !st) return init_error_or(sock, std::move(st).error());
  t.mark("systemd's job done, the init set up meanwhile");
  // An init that failed meanwhile: the conversation reads its error (as first_go).
  if (auto st = process::send(sock, Msg::kPlaced); !st && st.error().err() != EPIPE) return st;
  return ok();
}

namespace {

// With a second stage, stage one reports the real init (kPid) and exits while the init
// carries on over the same socket. The init waits for our go after kPid, so its kReady
// cannot overtake kPid; one that did would make `create` name stage one in the pid file
// and kill it by exiting (its parent death signal), while the real init ran on unwatched
// (seen through containerd's CRI before the go): refused as the protocol error it is.
Status converse(Launcher& l, int sock, const process::InitConfig& cfg) {
  bool pid_pending = process::forks_init(cfg.launch);
  const linux::rootfs::RootfsPlan* plan = cfg.rootfs ? &*cfg.rootfs : nullptr;
  Peer peer{"container init", l.o.console_socket, &l.console,
            l.s.spec.linux && l.s.spec.linux->seccomp ? &*l.s.spec.linux->seccomp : nullptr,
            [&l] { return hook_state(l.s.record, "creating", l.s.record.pid); }};
  BERTH_TRY(first_go(l, sock, (cfg.clone_flags & CLONE_NEWUSER) != 0, pid_pending));
  BERTH_TRY(place_in_unit(l, sock));
  while (true) {
    BERTH_ASSIGN(Message m, process::receive(sock));
    switch (m.type) {
      case Msg::kMapIds:
        BERTH_TRY(write_maps(l));
        BERTH_TRY(process::send(sock, Msg::kGo));
        break;
      case Msg::kPid:
        BERTH_TRY(take_forked_init(l, sock, m));
        pid_pending = false;
        break;
      case Msg::kHooks:
        BERTH_TRY(run_runtime_hooks(l, sock));
        break;
      case Msg::kMountSources:
        BERTH_TRY(send_bind_sources(l.sys, l.init_pid, sock, plan));
        break;
      case Msg::kReady:
        if (pid_pending) return Error::generic("sync: the container init reported ready before its pid");
        return ok();
      default:  // kConsole, kSeccompFd, kError
        BERTH_TRY(answer_common(peer, sock, l.init_pid, m));
    }
  }
}

// The classic init (kInit, kSecondStage, kForkLast): a copy of us, blocked on exec.fifo
// once ready.
Status spawn_init(Launcher& l, BuiltInit& b, UniqueFd fifo) {
  BERTH_ASSIGN(auto socks, process::sync_pair());
  auto& cfg = b.cfg;
  common_config(b, socks.second.get());
  cfg.fifo_fd = fifo.get();
  bool forks = process::forks_init(cfg.launch);
  // A second stage is recorded when it reports its pid, before its go (converse).
  cfg.settle_pending = !forks;
  cfg.dumpable_until_mapped = l.userns.creates && l.userns.unprivileged;
  bool in_cgroup = false;
  // --systemd-cgroup: the unit is started with the init in it after the first go, and its
  // job awaited, while the init sets up (place_in_unit).
  cfg.placement_pending = l.s.cg.systemd && !l.s.cg.manager;
  // A user namespace made by the clone holds the init until we wrote its maps: we place it.
  std::vector<cgroups::TasksFile> tasks;
  if (!(cfg.clone_flags & CLONE_NEWUSER)) BERTH_TRY(self_placement(l.s.cg, &tasks, &cfg.cgroup_tasks));
  Phases t("create");
  BERTH_ASSIGN(OwnedPid child, process::spawn(cfg.clone_flags, l.s.cg.unified_fd, [&] {
    keep_only_the_inits_fds(b);
    return process::init_main(cfg);
  }, &in_cgroup));
  socks.second.reset();
  fifo.reset();
  hold_init(l, std::move(child));
  t.mark("clone");
  if (forks) BERTH_TRY(record_pid(*l.s.dir, l.s.record, l.init_pid, true));  // stage one, until kPid
  tasks.clear();  // the init has its own copies of the fds
  if (!cfg.placement_pending) {
    BERTH_TRY(join_cgroups(l.s.cg, l.init.pid(), !cfg.cgroup_tasks.empty(), in_cgroup));
    t.mark(in_cgroup ? "init born in its cgroup (the unified one; it moves itself into the v1 ones)"
                     : "init joined the cgroups (the unified one; it moves itself into the v1 ones)");
  }
  return converse(l, socks.first.get(), cfg);
}

// The direct init's body, in our memory while we sleep. A parent killed in its sleep takes
// it along (PDEATHSIG), before anything is recorded. It may write our record and our
// Manager's cgroup files (through the fds open_all opened), and nothing of its own.
// Born in its unified cgroup (in_cgroup, set by vfork_child before it runs), it joins only
// the v1 hierarchies it did not move itself into (none on pure v2).
int direct_child(Launcher& l, BuiltInit& b, bool v1_joined, bool in_cgroup) {
  (void)l.sys.prctl(PR_SET_PDEATHSIG, SIGKILL);
  // cgroup.procs reads a pid in the writer's pid namespace, where ours is 1: "0" is us.
  pid_t pid = process::host_pid_from_proc();  // not 1, as getpid() says here
  Status st = ok();
  if (pid <= 0) st = Error::generic("cannot read our pid in /proc/self");
  else st = join_cgroups(l.s.cg, 0, v1_joined, in_cgroup);
  if (st) st = record_pid(*l.s.dir, l.s.record, pid, true);
  if (!st) {
    (void)process::send_error(b.cfg.sync_fd, st.error());
    return 1;
  }
  keep_only_the_inits_fds(b);
  return process::init_main(b.cfg);
}

// The direct init (direct_possible): it joins its cgroups and records its pid itself, then
// goes on as any init but with no go to wait for and no start (Launch::kDirect); we wake
// at its execve, or its exit. False, with nothing done, where the shared clone is refused
// (a seccomp filter around us, a kernel): the caller takes the usual way.
Result<bool> spawn_init_direct(Launcher& l, BuiltInit& b) {
  BERTH_ASSIGN(auto socks, process::sync_pair());
  auto& cfg = b.cfg;
  common_config(b, socks.second.get());
  cfg.launch = Launch::kDirect;
  if (l.s.cg.manager) l.s.cg.manager->open_all();  // the init writes through our fds, caching none
  std::vector<cgroups::TasksFile> tasks;  // written by the init's stage one (tasks ← 0)
  BERTH_TRY(self_placement(l.s.cg, &tasks, &cfg.cgroup_tasks));
  bool v1_joined = !cfg.cgroup_tasks.empty();
  SharedChildCheck check([&l] { return l.s.cg.manager ? l.s.cg.manager->held_fds() : std::vector<int>{}; });
  Phases t("create");
  bool in_cgroup = false;  // born in the unified one (vfork_child sets it before the child runs)
  int into = process::kCanShareMemoryIntoCgroup ? l.s.cg.unified_fd : -1;
  auto child = process::vfork_child(
      cfg.clone_flags, [&] { return direct_child(l, b, v1_joined, in_cgroup); }, into, &in_cgroup);
  if (!child) {
    cfg.launch = Launch::kInit;
    cfg.cgroup_tasks.clear();  // their fds close with `tasks`
    return false;
  }
  socks.second.reset();
  hold_init(l, std::move(*child));
  BERTH_TRY(check.verify());
  t.mark(in_cgroup ? "init set up and started, in our memory, born in its cgroup (CLONE_INTO_CGROUP)"
                   : "init set up and started, in our memory");
  BERTH_TRY(expect_execve(socks.first.get()));
  l.started = true;
  return true;
}

bool any_runtime_hook(const spec::Spec& s) {
  if (!s.hooks) return false;
  const auto& h = *s.hooks;
  return !h.prestart.empty() || !h.create_runtime.empty() || !h.create_container.empty() ||
         !h.start_container.empty() || !h.poststart.empty();
}

}  // namespace

// Then the init can share our memory while we sleep: it is the only process of its new pid
// namespace until its execve (a joined one is refused below; without one it is in the
// host's, where it is no more exposed than we are), so nothing of a container sees it. On
// pure cgroup v2 it is born in its cgroup (clone3 onto our stack, CLONE_INTO_CGROUP; a
// join of its own would wait for an RCU grace period), so not where that clone3 is not
// built. Not with the systemd driver (a D-Bus call), a new time namespace (clone3 only) or
// the sanitizers.
bool direct_possible(const spec::Spec& s, const process::InitConfig& cfg, const DirectFacts& f) {
  if (!f.start_now || !f.can_share_memory) return false;
  if (s.process->terminal || f.console_socket || any_runtime_hook(s)) return false;
  if (s.linux && s.linux->seccomp && !s.linux->seccomp->listener_path.empty()) return false;
  if (f.net_moves || cfg.wants_runtime_hooks || cfg.sources_from_runtime) return false;
  if (cfg.launch != Launch::kInit || !cfg.ns || !cfg.ns->joins.empty()) return false;
  if (((cfg.clone_flags | cfg.unshare_flags) & (CLONE_NEWUSER | CLONE_NEWTIME)) || f.creates_userns) return false;
  if (f.pure_v2 && !f.can_share_memory_into_cgroup) return false;
  return !f.systemd && !f.ldconfig_fill;
}

DirectFacts direct_facts(const Launcher& l, const BuiltInit& b) {
  DirectFacts f;
  f.start_now = l.o.start_now;
  f.console_socket = !l.o.console_socket.empty();
  f.net_moves = !l.moves.empty();
  f.creates_userns = l.userns.creates;
  f.systemd = l.o.systemd_cgroup;
  f.pure_v2 = l.s.cg.v2_fd >= 0;
  f.ldconfig_fill = b.ldconfig_fill.has_value();
  return f;
}

Status launch_init(Launcher& l, BuiltInit& b) {
  if (direct_possible(l.s.spec, b.cfg, direct_facts(l, b))) {
    BERTH_ASSIGN(bool direct, spawn_init_direct(l, b));
    if (direct) return ok();
  }
  BERTH_ASSIGN(UniqueFd fifo, open_exec_fifo(l.sys, l.s.dir->fd()));
  return spawn_init(l, b, std::move(fifo));
}

std::string hook_state(const ContainerRecord& r, const char* status, pid_t pid) {
  OciState s = to_oci_state(r, ContainerStatus::kCreating);
  s.status = status;
  s.pid = pid;
  return oci_state_json(s, false);
}

Status record_pid(ContainerDir& dir, ContainerRecord& record, pid_t pid, bool setting_up) {
  record.pid = pid;
  auto st = linux::read_proc_stat(pid);
  if (st) record.pid_start_time = st->start_time;
  if (setting_up) BERTH_TRY(dir.mark_setting_up());
  return dir.write_record(record);
}

Result<UniqueFd> open_exec_fifo(linux::Sys& sys, int state_dirfd) {
  BERTH_TRY(sys.mknodat(state_dirfd, "exec.fifo", S_IFIFO | 0622, 0).context("create exec.fifo"));
  return sys.openat(state_dirfd, "exec.fifo", O_RDWR | O_CLOEXEC, 0).context("open exec.fifo");
}

// Opened as root on the host's side but in the init's own mount namespace, before it
// mounts anything. One that cannot be opened that way (a magic link) goes without an fd:
// the init binds it as before.
Status send_bind_sources(linux::Sys& sys, pid_t init_pid, int sock, const linux::rootfs::RootfsPlan* plan) {
  if (!plan) return Error::generic("sync: bind sources asked for without a mount namespace");
  BERTH_ASSIGN(UniqueFd root, sys.openat2(AT_FDCWD, "/proc/" + std::to_string(init_pid) + "/root",
                                          O_PATH | O_DIRECTORY, 0, 0));
  for (size_t i : linux::rootfs::runtime_opened_binds(*plan)) {
    auto src = linux::rootfs::open_bind_source(sys, root.get(), *plan, i);
    if (!src)
      log::debug("bind source " + plan->mounts[i].source + ": " + src.error().message() + "; the init binds it");
    BERTH_TRY(process::send(sock, Msg::kMountSource, static_cast<int64_t>(i), "", src ? src->get() : -1));
  }
  return process::send(sock, Msg::kGo);
}

void kill_through_pidfd(linux::Sys& sys, int pidfd) {
  if (!sys.pidfd_kill(pidfd)) return;
  // Not our child, so no waitpid: the pidfd turns readable once it has exited, and then it
  // has left its cgroups.
  pollfd p{pidfd, POLLIN, 0};
  while (::poll(&p, 1, 5000) < 0 && errno == EINTR) {
  }
}

// The direct init's report: kReady just before its execve, then EOF (the socket is
// close-on-exec) or the error that stopped the execve. EOF without kReady: it died.
Status expect_execve(int sock) {
  bool ready = false;
  while (true) {
    BERTH_ASSIGN(auto m, process::receive_or_eof(sock));
    if (!m && ready) return ok();
    if (!m) return Error::generic("container init exited before it started its process");
    if (m->type == Msg::kError) return process::to_error(*m);
    if (m->type != Msg::kReady || ready) return Error::generic("sync: unexpected message from the container init");
    ready = true;
  }
}

}  // namespace berth::container
