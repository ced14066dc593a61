// The container init (see init.h). Stage one: parent death signal, non-dumpable, wait for
// the parent, join/unshare namespaces. When the kernel applies a namespace to children only
// (a pid namespace joined or created after joins, a time namespace with offsets), stage one
// forks stage two, reports its pid and exits. Stage two: hostname, linux.domainname, the
// rootfs plan and pivot, linux.sysctl, the pty, process attributes, then the payload. A
// joined pid namespace whose /proc can be made from outside (fork_init_last): stage one
// does the hostname, domainname and rootfs itself and forks the init into the pid
// namespace last, with only the container's view (docs/security.md).
#include "container/process/init.h"

#include <cstdlib>

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "container/hooks.h"
#include "container/process/payload.h"
#include "container/process/spawn.h"
#include "container/process/sync.h"
#include "container/record.h"
#include "linux/console.h"
#include "linux/process_attrs.h"
#include "linux/rlimits.h"
#include "linux/rootfs/apply.h"
#include "linux/rootfs/idmap.h"
#include "linux/rootfs/stdio_null.h"
#include "linux/sysctl.h"
#include "util/fds.h"
#include "util/file.h"
#include "util/phases.h"

namespace berth::container::process {
namespace {

// Our pid as the host sees it, which hooks are given (as runc does): before the pivot,
// /proc is still the host's procfs, whose "self" link names us in the host's pid namespace.
pid_t host_pid() {
  char buf[32] = {};
  ssize_t n = ::readlink("/proc/self", buf, sizeof buf - 1);
  int pid = n > 0 ? std::atoi(buf) : 0;
  return pid > 0 ? pid : ::getpid();
}

Status write_time_offsets(const std::map<std::string, spec::TimeOffset>& offsets) {
  std::string text;
  for (const auto& [clock, off] : offsets)
    text += clock + " " + std::to_string(off.secs) + " " + std::to_string(off.nanosecs) + "\n";
  return file::write_existing(AT_FDCWD, "/proc/self/timens_offsets", text).context("write linux.timeOffsets");
}

// In a user namespace we still carry the host's ids, unmapped there: whatever we create
// would fail with EOVERFLOW. Become the namespace's root (its maps are written by now), as
// runc's nsexec does. setgroups is denied where the maps' writer could not map groups.
Status become_userns_root() {
  if (::setgroups(0, nullptr) < 0 && errno != EPERM) return Error::sys(errno, "setgroups in user namespace");
  if (::setresgid(0, 0, 0) < 0) return Error::sys(errno, "become root (gid 0) in user namespace");
  if (::setresuid(0, 0, 0) < 0) return Error::sys(errno, "become root (uid 0) in user namespace");
  return ok();
}

Status stage_one(InitConfig& cfg) {
  reset_signals();
  if (cfg.parent_death_kill) ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // Nothing of the host may be reached through us while we are in the container's
  // namespaces: no ptrace, no /proc/<pid>/exe, fd or environ access (CVE-2019-5736).
  if (!cfg.dumpable_until_mapped) ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  BERTH_TRY(wait_for(cfg.sync_fd, Msg::kGo));  // a user namespace made by clone3 is mapped now
  for (auto& j : cfg.ns->joins)
    BERTH_TRY(linux::real_sys().setns(j.fd.get(), j.flag).context("join " + j.type + " namespace"));
  if (cfg.unshare_flags & CLONE_NEWUSER) {
    BERTH_TRY(linux::real_sys().unshare(CLONE_NEWUSER).context("create user namespace"));
    BERTH_TRY(send(cfg.sync_fd, Msg::kMapIds));  // the parent writes our id maps now
    BERTH_TRY(wait_for(cfg.sync_fd, Msg::kGo));
  }
  if (cfg.dumpable_until_mapped) ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (int rest = cfg.unshare_flags & ~CLONE_NEWUSER; rest)
    BERTH_TRY(linux::real_sys().unshare(rest).context("create namespaces"));
  if (cfg.ns->has(CLONE_NEWUSER)) BERTH_TRY(become_userns_root());
  if (!cfg.time_offsets.empty()) BERTH_TRY(write_time_offsets(cfg.time_offsets));
  return ok();
}

Status setup_filesystem(InitConfig& cfg, linux::rootfs::Applier& fs) {
  Phases t("init");
  BERTH_TRY(fs.prepare());
  t.mark("rootfs prepare");
  BERTH_TRY(fs.mounts());
  t.mark("mounts");
  BERTH_TRY(fs.devices());
  t.mark("devices");
  BERTH_TRY(fs.create_cwd());
  if (cfg.wants_runtime_hooks) {
    BERTH_TRY(send(cfg.sync_fd, Msg::kHooks));
    BERTH_TRY(wait_for(cfg.sync_fd, Msg::kHooksDone));
  }
  if (!cfg.create_container_hooks.empty()) {
    // runc runs them from the rootfs (its path on the host, before pivot_root): hooks with
    // relative paths into the container's tree depend on it. pivot() sets its own cwd.
    if (::fchdir(fs.root_fd()) < 0) return Error::sys(errno, "chdir to the rootfs for createContainer hooks");
    OciState s = cfg.state;
    s.pid = host_pid();
    s.status = "creating";
    // Without `env`, an empty environment, never the process's (runc 1.1 passes that):
    // these are host binaries, cwd in the rootfs, and an image's LD_PRELOAD=./x.so would
    // run its code in them on the host (CVE-2025-23266). See docs/architecture.md.
    const std::vector<std::string> none;
    BERTH_TRY(run_hooks("createContainer", cfg.create_container_hooks, oci_state_json(s, false), "", &none));
  }
  BERTH_TRY(fs.pivot());
  t.mark("pivot");
  if (!cfg.sysctl.empty()) BERTH_TRY(linux::write_sysctls(cfg.sysctl));
  BERTH_TRY(fs.after_pivot());
  // runc's reOpenDevNull: stdio on the host's /dev/null is a host descriptor in the container
  // (CRIU cannot checkpoint it).
  if (cfg.rootfs->setup_dev) BERTH_TRY(linux::rootfs::reopen_stdio_dev_null().context("stdio"));
  t.mark("after pivot");
  return ok();
}

// hostname, linux.domainname, then the chroot or the rootfs up to its last step.
// Our bind sources, opened by the runtime in our mount namespace before any mount of ours
// (see linux/rootfs/idmap.h). A source it could not open is bound the usual way.
Status receive_bind_sources(InitConfig& cfg) {
  BERTH_TRY(send(cfg.sync_fd, Msg::kMountSources));
  for (size_t i : linux::rootfs::runtime_opened_binds(*cfg.rootfs)) {
    BERTH_ASSIGN(Message m, receive(cfg.sync_fd));
    if (m.type == Msg::kError) return to_error(m);
    if (m.type != Msg::kMountSource || m.value != static_cast<int64_t>(i))
      return Error::generic("sync: unexpected message from the runtime");
    if (m.fd) BERTH_TRY(linux::rootfs::adopt_bind_source(linux::real_sys(), *cfg.rootfs, i, m.fd.get()));
  }
  return wait_for(cfg.sync_fd, Msg::kGo);
}

Status set_up_container(InitConfig& cfg, std::optional<linux::rootfs::Applier>& fs) {
  if (cfg.set_hostname) BERTH_TRY(linux::real_sys().sethostname(cfg.hostname).context("set hostname"));
  if (cfg.set_domainname) BERTH_TRY(linux::real_sys().setdomainname(cfg.domainname).context("set domainname"));
  if (!cfg.rootfs && !cfg.chroot.empty()) {
    BERTH_TRY(linux::real_sys().chroot(cfg.chroot));
    BERTH_TRY(linux::real_sys().chdir("/"));
  }
  if (cfg.rootfs) {
    if (cfg.sources_from_runtime) BERTH_TRY(receive_bind_sources(cfg).context("prepare rootfs"));
    fs.emplace(linux::real_sys(), *cfg.rootfs);
    if (cfg.fork_init_last) fs->set_proc_pidns(cfg.proc_pidns_fd);
    BERTH_TRY(setup_filesystem(cfg, *fs).context("prepare rootfs"));
  }
  return ok();
}

// The pty (a session leader's controlling terminal) and the process attributes.
Status finish_process(InitConfig& cfg, linux::rootfs::Applier* fs) {
  if (cfg.process.terminal)
    BERTH_TRY(open_console(cfg, fs ? fs->root_fd() : AT_FDCWD, fs).context("set up console"));
  return apply_process_attributes(cfg);
}

Status stage_two(InitConfig& cfg) {
  if (::setsid() < 0) return Error::sys(errno, "setsid");
  std::optional<linux::rootfs::Applier> fs;
  BERTH_TRY(set_up_container(cfg, fs));
  return finish_process(cfg, fs ? &*fs : nullptr);
}

// forked: stage two of a forked stage one, which waits until the parent recorded its pid.
int stage_two_main(InitConfig& cfg, bool forked) {
  auto st = forked ? wait_for(cfg.sync_fd, Msg::kGo) : ok();
  if (st) st = stage_two(cfg);
  if (!st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  return run_payload(cfg);
}

// The init forked into the joined pid namespace: its first instruction there already has
// the container's root, cwd and mount namespace, and no fd of the host.
int last_init_main(InitConfig& cfg, linux::rootfs::Applier* fs) {
  auto st = wait_for(cfg.sync_fd, Msg::kGo);
  if (st && ::setsid() < 0) st = Error::sys(errno, "setsid");
  if (st) st = finish_process(cfg, fs);
  if (!st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  return run_payload(cfg);
}

// Stage one of a container joining a pid namespace: everything that needs the host (joins,
// mounts, pivot) here, outside that namespace; then only the sync socket, exec.fifo, the
// preserved fds and the container's root (for /dev/console) cross into it. The namespace
// fds, idmapped trees, host programs and the log stay behind.
int fork_init_last(InitConfig& cfg) {
  std::optional<linux::rootfs::Applier> fs;
  auto st = set_up_container(cfg, fs);
  if (!st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  std::vector<int> keep = {cfg.sync_fd, cfg.fifo_fd};
  if (fs) keep.push_back(fs->root_fd());
  for (int fd = 3; fd < 3 + cfg.preserve_fds; ++fd) keep.push_back(fd);
  close_fds_except(keep);
  auto init = fork_child([&] { return last_init_main(cfg, fs ? &*fs : nullptr); });
  if (!init) {
    (void)send_error(cfg.sync_fd, std::move(init).error().context("fork the init into the pid namespace"));
    return 1;
  }
  // With its pidfd: the parent must never have to name a process it does not own by number.
  (void)send(cfg.sync_fd, Msg::kPid, init->pid(), "", init->pidfd());
  init->release();  // it is the container now; we exit and it is reparented
  return 0;
}

}  // namespace

// The payload inherits the mask and dispositions across execve: start it clean, whatever
// the runtime had blocked (a foreground `run` or `exec` blocks everything for its signalfd).
void reset_signals() {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) ::signal(s, SIG_DFL);
}

Status wait_for(int sock, Msg type) {
  BERTH_ASSIGN(Message m, receive(sock));
  if (m.type == Msg::kError) return to_error(m);
  if (m.type != type) return Error::generic("sync: unexpected message from the runtime");
  return ok();
}

Status open_console(InitConfig& cfg, int root_fd, linux::rootfs::Applier* fs) {
  BERTH_ASSIGN(linux::Pty pty, linux::open_pty(root_fd, "/dev/ptmx", cfg.process.console_size));
  if (fs) BERTH_TRY(fs->console(pty.peer.get()));
  BERTH_TRY(linux::make_controlling_tty(pty.peer.get()));
  return send(cfg.sync_fd, Msg::kConsole, 0, pty.name, pty.master.get());
}

Status apply_process_attributes(const InitConfig& cfg) {
  const spec::Process& p = cfg.process;
  BERTH_TRY(linux::apply_rlimits(p.rlimits));
  if (p.oom_score_adj) BERTH_TRY(linux::set_oom_score_adj(*p.oom_score_adj));
  if (cfg.new_keyring) BERTH_TRY(linux::join_session_keyring(cfg.container_id));
  if (p.scheduler) BERTH_TRY(linux::set_scheduler(*p.scheduler));
  if (p.io_priority) BERTH_TRY(linux::set_io_priority(*p.io_priority));
  if (cfg.personality) BERTH_TRY(linux::set_personality(*cfg.personality));
  if (cfg.memory_policy) BERTH_TRY(linux::set_memory_policy(*cfg.memory_policy));
  return ok();
}

int init_main(InitConfig& cfg) {
  auto st = stage_one(cfg);
  if (!st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  if (cfg.fork_init_last) return fork_init_last(cfg);
  if (!cfg.second_stage) return stage_two_main(cfg, false);
  auto second = fork_child([&] { return stage_two_main(cfg, true); });
  if (!second) {
    (void)send_error(cfg.sync_fd, std::move(second).error().context("fork second stage"));
    return 1;
  }
  (void)send(cfg.sync_fd, Msg::kPid, second->pid(), "", second->pidfd());
  second->release();  // it is the container now; we exit and it is reparented
  return 0;
}

}  // namespace berth::container::process
