// The container init (see init.h). Stage one: parent death signal, non-dumpable, wait for
// the parent, join/unshare namespaces. When the kernel applies a namespace to children only
// (a pid namespace joined or created after joins, a time namespace with offsets), stage one
// forks stage two, reports its pid and exits. Stage two: hostname, linux.domainname, the
// rootfs plan and pivot, linux.sysctl, the pty, process attributes, then the payload. A
// joined pid namespace whose /proc can be made from outside (Launch::kForkLast): stage one
// does the hostname, domainname and rootfs itself and forks the init into the pid
// namespace last, with only the container's view (docs/security.md).
#include "container/process/init.h"

#include <cstdlib>
#include <utility>

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "container/process/payload.h"
#include "container/process/spawn.h"
#include "container/process/steps.h"
#include "container/process/sync.h"
#include "linux/rootfs/apply.h"
#include "linux/rootfs/idmap.h"
#include "linux/rootfs/stdio_null.h"
#include "linux/sysctl.h"
#include "util/env.h"
#include "util/fds.h"
#include "util/file.h"
#include "util/phases.h"

namespace berth::container::process {
namespace {

// Our pid as the host sees it, which hooks are given (as runc does): before the pivot,
// /proc is still the host's procfs, whose "self" link names us in the host's pid namespace.
pid_t host_pid() {
  pid_t pid = host_pid_from_proc();
  return pid > 0 ? pid : ::getpid();
}

Status write_time_offsets(linux::Sys& sys, const std::map<std::string, spec::TimeOffset>& offsets) {
  std::string text;
  for (const auto& [clock, off] : offsets)
    text += clock + " " + std::to_string(off.secs) + " " + std::to_string(off.nanosecs) + "\n";
  auto fd = sys.openat(AT_FDCWD, "/proc/self/timens_offsets", O_WRONLY | O_NOFOLLOW, 0);
  if (!fd) return std::move(fd).error().context("write linux.timeOffsets");
  return sys.write_fd(fd->get(), text).context("write linux.timeOffsets");
}

// In a user namespace we still carry the host's ids, unmapped there: whatever we create
// would fail with EOVERFLOW. Become the namespace's root (its maps are written by now), as
// runc's nsexec does. setgroups is denied where the maps' writer could not map groups.
Status become_userns_root(linux::Sys& sys) {
  if (auto st = sys.clear_groups(); !st && st.error().err() != EPERM)
    return std::move(st).context("setgroups in user namespace");
  BERTH_TRY(sys.setresgid(0).context("become root (gid 0) in user namespace"));
  return sys.setresuid(0).context("become root (uid 0) in user namespace");
}

// --systemd-cgroup: systemd's start job places us while we set up (cfg.placement_pending).
// Awaited before the first step that must be inside the container's cgroup: a fork (the
// child would stay where we are), a program run (createContainer hooks, extension
// programs), a cgroup mount (its directory is the unit's) or namespace (rooted at our
// cgroup of then: the one held back is made now), and at the latest before kReady.
Status placed(linux::Sys& sys, InitConfig& cfg) {
  if (!cfg.placement_pending && !cfg.deferred_unshare) return ok();
  Phases t("init");
  BERTH_TRY(wait_placed(cfg));
  t.mark("placed by systemd's job");
  if (int flags = std::exchange(cfg.deferred_unshare, 0); flags)
    BERTH_TRY(sys.unshare(flags).context("create namespaces"));
  return ok();
}

Status setup_filesystem(linux::Sys& sys, InitConfig& cfg, linux::rootfs::Applier& fs) {
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
    BERTH_TRY(wait_for(cfg, Msg::kHooksDone));
  }
  if (!cfg.create_container_hooks.empty()) {
    BERTH_TRY(placed(sys, cfg));
    // runc runs them from the rootfs (its path on the host, before pivot_root): hooks with
    // relative paths into the container's tree depend on it. pivot() sets its own cwd.
    BERTH_TRY(sys.fchdir(fs.root_fd()).context("chdir to the rootfs for createContainer hooks"));
    OciState s = cfg.state;
    s.pid = host_pid();
    s.status = "created";  // lifecycle step 5, after step 2: as prestart (launch.cc)
    // Without `env`, an empty environment, never the process's (runc 1.1 passes that):
    // these are host binaries, cwd in the rootfs, and an image's LD_PRELOAD=./x.so would
    // run its code in them on the host (CVE-2025-23266). See docs/architecture.md.
    const std::vector<std::string> none;
    BERTH_TRY(cfg.run_hooks("createContainer", cfg.create_container_hooks, s, &none, nullptr));
  }
  BERTH_TRY(fs.pivot());
  t.mark("pivot");
  if (!cfg.sysctl.empty()) BERTH_TRY(linux::write_sysctls(sys, cfg.sysctl));
  if (!cfg.rootfs->exec_after_pivot.empty()) BERTH_TRY(placed(sys, cfg));
  BERTH_TRY(fs.after_pivot());
  // runc's reOpenDevNull: stdio on the host's /dev/null is a host descriptor in the container
  // (CRIU cannot checkpoint it).
  if (cfg.rootfs->setup_dev) BERTH_TRY(linux::rootfs::reopen_stdio_dev_null(sys).context("stdio"));
  t.mark("after pivot");
  return ok();
}

// hostname, linux.domainname, then the chroot or the rootfs up to its last step.
// Our bind sources, opened by the runtime in our mount namespace before any mount of ours
// (see linux/rootfs/idmap.h). A source it could not open is bound the usual way.
Status receive_bind_sources(linux::Sys& sys, InitConfig& cfg) {
  BERTH_TRY(send(cfg.sync_fd, Msg::kMountSources));
  for (size_t i : linux::rootfs::runtime_opened_binds(*cfg.rootfs)) {
    BERTH_ASSIGN(Message m, receive_from_runtime(cfg));
    if (m.type == Msg::kError) return to_error(m);
    if (m.type != Msg::kMountSource || m.value != static_cast<int64_t>(i))
      return Error::generic("sync: unexpected message from the runtime");
    if (m.fd) BERTH_TRY(linux::rootfs::adopt_bind_source(sys, *cfg.rootfs, i, m.fd.get()));
  }
  return wait_for(cfg, Msg::kGo);
}

Status set_up_container(linux::Sys& sys, InitConfig& cfg, std::optional<linux::rootfs::Applier>& fs) {
  if (cfg.set_hostname) BERTH_TRY(sys.sethostname(cfg.hostname).context("set hostname"));
  if (cfg.set_domainname) BERTH_TRY(sys.setdomainname(cfg.domainname).context("set domainname"));
  if (!cfg.rootfs && !cfg.chroot.empty()) {
    BERTH_TRY(sys.chroot(cfg.chroot));
    BERTH_TRY(sys.chdir("/"));
  }
  if (cfg.rootfs) {
    if (cfg.sources_from_runtime) BERTH_TRY(receive_bind_sources(sys, cfg).context("prepare rootfs"));
    fs.emplace(sys, *cfg.rootfs);
    if (cfg.launch == Launch::kForkLast) fs->set_proc_pidns(cfg.proc_pidns_fd);
    fs->set_before_cgroup_mount([&sys, &cfg] { return placed(sys, cfg); });
    BERTH_TRY(setup_filesystem(sys, cfg, *fs).context("prepare rootfs"));
  }
  return ok();
}

// The pty (a session leader's controlling terminal) and the process attributes.
Status finish_process(linux::Sys& sys, InitConfig& cfg, linux::rootfs::Applier* fs) {
  if (cfg.process.terminal)
    BERTH_TRY(open_console(sys, cfg, fs ? fs->root_fd() : AT_FDCWD, fs).context("set up console"));
  return apply_process_attributes(sys, cfg);
}

// forked: stage two of a forked stage one, which waits until the parent recorded its pid.
int stage_two_main(linux::Sys& sys, InitConfig& cfg, bool forked) {
  auto st = forked ? wait_for(cfg, Msg::kGo) : ok();
  if (st) st = init_stage_two(sys, cfg);
  if (!st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  return run_payload(sys, cfg);
}

// The init forked into the joined pid namespace: its first instruction there already has
// the container's root, cwd and mount namespace, and no fd of the host.
int last_init_main(linux::Sys& sys, InitConfig& cfg, linux::rootfs::Applier* fs) {
  auto st = wait_for(cfg, Msg::kGo);
  if (st) st = sys.setsid();
  if (st) st = finish_process(sys, cfg, fs);
  if (!st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  return run_payload(sys, cfg);
}

// Stage one of a container joining a pid namespace: everything that needs the host (joins,
// mounts, pivot) here, outside that namespace; then only the sync socket, exec.fifo, the
// preserved fds and the container's root (for /dev/console) cross into it. The namespace
// fds, idmapped trees, host programs and the log stay behind.
int fork_init_last(linux::Sys& sys, InitConfig& cfg) {
  std::optional<linux::rootfs::Applier> fs;
  auto st = set_up_container(sys, cfg, fs);
  if (st) st = placed(sys, cfg);
  if (!st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  std::vector<int> keep = {cfg.sync_fd, cfg.fifo_fd};
  if (fs) keep.push_back(fs->root_fd());
  for (int fd = 3; fd < 3 + cfg.preserve_fds; ++fd) keep.push_back(fd);
  close_fds_except(keep);
  // Our own copy of create's memory (never shared: no direct init joins a pid namespace),
  // and the init's hooks get their environment explicitly: the caller's is of no use to
  // it, and the namespace's members could read it (docs/security.md).
  env::scrub_own_environment();
  // Born with narrowed capabilities: without a user namespace the members of the pid
  // namespace may hold CAP_SYS_PTRACE where our capabilities count (steps.h).
  st = narrow_caps(sys, cfg, cfg.ns && cfg.ns->has(CLONE_NEWUSER) ? 0 : permitted_caps());
  if (!st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  auto init = fork_child([&] { return last_init_main(sys, cfg, fs ? &*fs : nullptr); });
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

pid_t host_pid_from_proc() {
  char buf[32] = {};
  ssize_t n = ::readlink("/proc/self", buf, sizeof buf - 1);
  int pid = n > 0 ? std::atoi(buf) : 0;
  return pid > 0 ? pid : 0;
}

Status init_stage_one(linux::Sys& sys, InitConfig& cfg) {
  Phases t("init");
  reset_signals();
  if (cfg.parent_death_kill) BERTH_TRY(sys.prctl(PR_SET_PDEATHSIG, SIGKILL).context("set the parent death signal"));
  // Nothing of the host may be reached through us while we are in the container's
  // namespaces: no ptrace, no /proc/<pid>/exe, fd or environ access (CVE-2019-5736).
  if (!cfg.dumpable_until_mapped) BERTH_TRY(sys.prctl(PR_SET_DUMPABLE, 0).context("make the init non-dumpable"));
  // Still one thread, in the host's namespaces: before any join or unshare, and before any
  // message the parent reads as "set up" (a failure reaches it as kError instead).
  BERTH_TRY(join_v1_cgroups(sys, cfg));
  if (cfg.launch != Launch::kDirect) BERTH_TRY(wait_for(cfg, Msg::kGo));  // a user namespace made by clone3 is mapped now
  t.mark("waited for the parent's go");
  for (auto& j : cfg.ns->joins) BERTH_TRY(sys.setns(j.fd.get(), j.flag).context("join " + j.type + " namespace"));
  if (cfg.unshare_flags & CLONE_NEWUSER) {
    BERTH_TRY(sys.unshare(CLONE_NEWUSER).context("create user namespace"));
    BERTH_TRY(send(cfg.sync_fd, Msg::kMapIds));  // the parent writes our id maps now
    BERTH_TRY(wait_for(cfg, Msg::kGo));
  }
  if (cfg.dumpable_until_mapped) BERTH_TRY(sys.prctl(PR_SET_DUMPABLE, 0).context("make the init non-dumpable"));
  if (cfg.placement_pending) cfg.deferred_unshare = cfg.unshare_flags & CLONE_NEWCGROUP;  // placed() makes it
  if (int rest = cfg.unshare_flags & ~(CLONE_NEWUSER | cfg.deferred_unshare); rest)
    BERTH_TRY(sys.unshare(rest).context("create namespaces"));
  if (cfg.ns->has(CLONE_NEWUSER)) BERTH_TRY(become_userns_root(sys));
  if (!cfg.time_offsets.empty()) BERTH_TRY(write_time_offsets(sys, cfg.time_offsets));
  t.mark("namespaces");
  return ok();
}

Status init_stage_two(linux::Sys& sys, InitConfig& cfg) {
  BERTH_TRY(sys.setsid());
  std::optional<linux::rootfs::Applier> fs;
  BERTH_TRY(set_up_container(sys, cfg, fs));
  BERTH_TRY(placed(sys, cfg));
  Phases t("init");
  BERTH_TRY(finish_process(sys, cfg, fs ? &*fs : nullptr));
  t.mark("process attributes");
  return ok();
}

int init_main(InitConfig& cfg) {
  linux::Sys& sys = linux::real_sys();
  auto st = init_stage_one(sys, cfg);
  if (!st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  if (cfg.launch == Launch::kForkLast) return fork_init_last(sys, cfg);
  if (cfg.launch != Launch::kSecondStage) return stage_two_main(sys, cfg, false);
  // As for fork_init_last: on kernels without procfs's "pidns" option the second stage is
  // born in a joined pid namespace.
  if (st = placed(sys, cfg); !st) {
    (void)send_error(cfg.sync_fd, st.error());
    return 1;
  }
  env::scrub_own_environment();
  auto second = fork_child([&] { return stage_two_main(sys, cfg, true); });
  if (!second) {
    (void)send_error(cfg.sync_fd, std::move(second).error().context("fork second stage"));
    return 1;
  }
  (void)send(cfg.sync_fd, Msg::kPid, second->pid(), "", second->pidfd());
  second->release();  // it is the container now; we exit and it is reparented
  return 0;
}

}  // namespace berth::container::process
