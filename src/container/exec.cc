// `exec` (see exec.h), the parent's side: the container's status with runc's texts, the
// process (exec_process.cc) and the tenant's configuration (process.capabilities, rlimits,
// noNewPrivileges, linux.seccomp through the filter cache, linux.personality,
// linux.memoryPolicy), the clone of the tenant into the container's cgroup with
// process.execCPUAffinity around the join (in our memory where it can: clone_tenant),
// the adoption of the process it forks into the
// pid namespace, its console and seccomp messages, then --detach (--pid-file,
// --pidfd-socket) or foreground supervision as `run` does it.
#include "container/exec.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "berth/container.h"
#include "cgroups/manager.h"
#include "container/conversation.h"
#include "container/exec_process.h"
#include "container/process/spawn.h"
#include "container/process/steps.h"
#include "container/process/sync.h"
#include "container/process/tenant.h"
#include "container/record.h"
#include "container/run.h"
#include "container/shared_child.h"
#include "container/state_store.h"
#include "container/status.h"
#include "linux/paths.h"
#include "linux/proc.h"
#include "linux/process_attrs.h"
#include "linux/sys.h"
#include "util/caller_fds.h"
#include "util/env.h"
#include "util/fds.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/log.h"
#include "util/scope_exit.h"
#include "util/strings.h"

namespace berth {
namespace {

using container::process::Message;
using container::process::Msg;
using container::process::TenantConfig;

struct Target {
  container::ContainerDir dir;
  ContainerRecord record;
  ContainerStatus status;
  spec::Spec config;
};

Result<Target> load_target(const ExecOptions& o) {
  BERTH_ASSIGN(auto store, container::StateStore::open_existing(o.root));
  BERTH_ASSIGN(auto dir, store.open_container(o.id));
  BERTH_ASSIGN(auto record, dir.read_record());
  ContainerStatus status = container::derive_status(dir, record);
  if (status == ContainerStatus::kStopped) return Error::generic("cannot exec in a stopped container");
  if (status == ContainerStatus::kCreating) return Error(0, ErrorKind::kNotRunning, "container not running");
  if (status == ContainerStatus::kPaused && !o.ignore_paused)
    return Error::generic("cannot exec in a paused container (use --ignore-paused to override)");
  BERTH_ASSIGN(auto config, dir.read_config());
  return Target{std::move(dir), std::move(record), status, std::move(config)};
}

Result<std::string> read_process_file(const std::string& path) {
  if (path.empty()) return std::string();
  if (path == "-") return file::read_fd(STDIN_FILENO, 4u << 20).context("read process from stdin");
  return file::read(path, 4u << 20);
}

// runc's checkTerminal, for exec.
Status check_terminal(const ExecOptions& o, bool terminal) {
  if (o.detach && terminal && o.console_socket.empty())
    return Error::invalid_argument("cannot allocate tty if berth will detach without setting console socket");
  if ((!o.detach || !terminal) && !o.console_socket.empty())
    return Error::invalid_argument("cannot use console socket if berth will not detach or allocate tty");
  return ok();
}

bool same_namespace(pid_t pid, const std::string& name) {
  struct stat theirs, ours;
  std::string path = "/proc/" + std::to_string(pid) + "/ns/" + name;
  return ::stat(path.c_str(), &theirs) == 0 && ::stat(("/proc/self/ns/" + name).c_str(), &ours) == 0 &&
         theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev;
}

void tenant_namespaces(const spec::Linux& l, pid_t pid, TenantConfig& t) {
  for (const auto& ns : l.namespaces) {
    // Joining one's own user namespace is an error (EINVAL); the others would be no-ops.
    if (same_namespace(pid, linux::ns_proc_name(ns.type))) continue;
    t.join_types.push_back(ns.type);
  }
}

// Our permitted capabilities, which the tenant keeps through joins that leave out the user
// namespace: what narrow_caps (steps.h) may keep of them. 0 (nothing narrowed) where a
// user namespace is joined.
uint64_t held_caps(const TenantConfig& t) {
  if (std::find(t.join_types.begin(), t.join_types.end(), "user") != t.join_types.end()) return 0;
  return container::process::permitted_caps();
}

Result<std::unique_ptr<TenantConfig>> build_tenant(const ExecOptions& o, const Target& target,
                                                   container::ExecProcess& ep) {
  auto t = std::make_unique<TenantConfig>();
  auto& c = t->payload;
  c.launch = container::process::Launch::kTenant;
  c.process = std::move(ep.process);
  c.container_id = o.id;
  c.new_keyring = true;  // runc's exec joins a fresh "_ses.<id>" session keyring too
  BERTH_ASSIGN(c.preserve_fds, caller_fds::check(0, o.preserve_fds));  // cleared close-on-exec in the payload
  if (c.process.capabilities) {
    BERTH_ASSIGN(c.caps, linux::caps_from_spec(*c.process.capabilities, "process.capabilities"));
    c.has_caps = true;
  }
  struct stat self;
  if (::stat("/proc/self/exe", &self) == 0) c.self_dev = self.st_dev, c.self_ino = self.st_ino;
  c.state = container::to_oci_state(target.record, target.status);
  t->init_pid = target.record.pid;
  t->user_name = ep.user_name;
  if (!target.config.linux) return t;
  const spec::Linux& l = *target.config.linux;
  c.personality = l.personality;
  c.memory_policy = l.memory_policy;
  if (l.seccomp) {
    // The container's filter, from the cache its create filled.
    c.seccomp = *l.seccomp;
    BERTH_ASSIGN(c.seccomp_program, seccomp::compile_cached(*l.seccomp, container::process::seccomp_cache_dir(o.root)));
  }
  tenant_namespaces(l, target.record.pid, *t);
  t->held_caps = held_caps(*t);
  return t;
}

Result<std::optional<cgroups::Manager>> exec_cgroups(const ExecOptions& o, const ContainerRecord& r) {
  BERTH_ASSIGN(auto subs, container::parse_sub_cgroups(o.cgroups));
  if (r.cgroup_paths.empty()) return std::optional<cgroups::Manager>();
  BERTH_ASSIGN(auto paths, container::apply_sub_cgroups(r.cgroup_paths, subs));
  BERTH_ASSIGN(auto m, cgroups::Manager::load(paths));
  return std::optional<cgroups::Manager>(std::move(m));
}

// A pidfd pins the init: a pid reused after the status check cannot be joined.
Result<UniqueFd> open_init(const ContainerRecord& r) {
  UniqueFd fd = linux::pin_process(r.pid, r.pid_start_time);
  if (!fd) return Error::generic("cannot exec in a stopped container");
  return fd;
}

// The init may exit while we join it: setns fails (ESRCH), a clone into its dying pid
// namespace fails (ENOMEM), or the kernel kills the half-made process with the namespace
// (EPIPE on the sync socket). Engines match runc's text for a stopped container, not these
// (runc itself prints nsexec's internals in this race: docs/conformance.md). An init that
// is not gone yet is about to be: wait for its pidfd briefly, for those errnos only.
Error unless_stopped(Error e, int init_pidfd, const ContainerRecord& r) {
  int err = e.err();
  bool racy = err == ESRCH || err == ENOMEM || err == EPIPE || err == ECONNRESET;
  pollfd p{init_pidfd, POLLIN, 0};
  bool gone = !linux::process_alive(r.pid, r.pid_start_time) || (racy && ::poll(&p, 1, 1000) > 0);
  return gone ? Error::generic("cannot exec in a stopped container") : std::move(e);
}

Status set_affinity(pid_t pid, const std::string& list, const char* which) {
  cpu_set_t set;
  if (!linux::parse_cpu_list(list, &set)) return Error::invalid_spec(std::string("process.execCPUAffinity.") + which + ": invalid cpu list");
  if (auto st = linux::real_sys().set_affinity(pid, set); !st)
    return Error::sys(st.error().err(), std::string("set ") + which + " CPU affinity (process.execCPUAffinity)");
  return ok();
}

struct Running {
  OwnedPid tenant;   // the intermediate, then (kPid) the process itself
  bool adopted = false;
  UniqueFd sync;     // our end
  UniqueFd console;  // pty master, foreground --tty
};

// The tenant in our memory where it can do without a copy of us (vfork_child: no page
// tables copied, no copy-on-write faults in it or in us): it joins the cgroups and takes
// the final CPU affinity itself while we sleep, then goes on as tenant_main; on pure
// cgroup v2 it is born in its cgroup (clone3 onto our stack, CLONE_INTO_CGROUP). Not where
// that would cost more or the kernel refuses it: on v2 without that clone3
// (kCanShareMemoryIntoCgroup) the copy is born in its cgroup, where a join would wait for
// an RCU grace period, and setns into a time namespace refuses a process that shares its
// memory (EUSERS).
bool tenant_shares_memory(const TenantConfig& t, const std::optional<cgroups::Manager>& cg) {
  if (!container::process::kCanShareMemory) return false;
  if (cg && cg->v2_dir_fd() >= 0 && !container::process::kCanShareMemoryIntoCgroup) return false;
  return std::find(t.join_types.begin(), t.join_types.end(), "time") == t.join_types.end();
}

// In the tenant sharing our memory, before anything else: the unified hierarchy, through
// the fds we opened (open_all), so that it caches none of its own in our Manager (the v1
// ones it joins itself in tenant_enter, tasks ← 0). A parent killed in its sleep leaves
// the tenant to go on alone: its kPid then meets a closed socket, and the process it
// forked reads EOF instead of kGo and exits.
// in_cgroup: born in the unified hierarchy (pure v2, or a hybrid host's), which is not
// written again.
Status join_from_tenant(const TenantConfig& t, std::optional<cgroups::Manager>& cg, bool in_cgroup) {
  if (cg) BERTH_TRY(cg->add_process(::getpid(), t.payload.cgroup_tasks.empty(), !in_cgroup));
  return ok();
}

// After the tenant's v1 join: a cpuset join resets the affinity.
Status final_affinity(const TenantConfig& t) {
  const auto& aff = t.payload.process.exec_cpu_affinity;
  if (aff && !aff->final.empty()) BERTH_TRY(set_affinity(0, aff->final, "final"));
  return ok();
}

// The clone, with execCPUAffinity.initial inherited from us for the time before the cgroup
// join: a copy born in its cgroup on v2 (*in_cgroup), or sharing our memory and joining
// itself (t.parent_asleep). The tenant closes everything of ours but what it needs.
Result<OwnedPid> clone_tenant(TenantConfig& t, int child_sync, std::optional<cgroups::Manager>& cg, bool* in_cgroup) {
  const auto& aff = t.payload.process.exec_cpu_affinity;
  cpu_set_t saved;
  bool restore = aff && !aff->initial.empty() && ::sched_getaffinity(0, sizeof saved, &saved) == 0;
  if (aff && !aff->initial.empty()) BERTH_TRY(set_affinity(0, aff->initial, "initial"));
  ScopeExit restore_affinity([&] {
    if (restore) (void)linux::real_sys().set_affinity(0, saved);
  });
  t.payload.sync_fd = child_sync;
  auto enter = [&] {
    std::vector<int> keep = {child_sync, t.init_pidfd};
    for (const auto& c : t.payload.cgroup_tasks) keep.push_back(c.fd);
    for (int fd = 3; fd < 3 + t.payload.preserve_fds; ++fd) keep.push_back(fd);
    close_fds_except(keep);
    return container::process::tenant_main(t);
  };
  auto join_then_enter = [&] {
    if (auto st = join_from_tenant(t, cg, *in_cgroup); !st) {
      (void)container::process::send_error(child_sync, st.error());
      return 1;
    }
    return enter();
  };
  if (tenant_shares_memory(t, cg)) {
    t.parent_asleep = true;
    std::vector<cgroups::TasksFile> tasks;  // the tenant writes "0" to each (tenant_enter)
    if (cg) {
      cg->open_all();
      // A missing `--cgroup` sub-cgroup: the tenant's cgroup.procs write below reports
      // it in runc's words ("adding pid N to cgroups: open <dir>/cgroup.procs: ..."),
      // which runc's tests and engines match.
      if (auto opened = cg->open_v1_tasks()) tasks = std::move(*opened);
      for (const auto& f : tasks) t.payload.cgroup_tasks.push_back({f.fd.get(), f.path});
    }
    t.after_v1_join = [&] { return final_affinity(t); };
    container::SharedChildCheck check([&cg] { return cg ? cg->held_fds() : std::vector<int>{}; });
    int into = cg && container::process::kCanShareMemoryIntoCgroup ? cg->unified_dir_fd() : -1;
    auto shared = container::process::vfork_child(0, join_then_enter, into, in_cgroup);
    if (shared) {
      BERTH_TRY(check.verify());
      return shared;
    }
    // A kernel or a seccomp filter around us that refuses the shared clone, or no memory
    // for its stack: the copy, as elsewhere, placed by us.
    t.parent_asleep = false;
    t.payload.cgroup_tasks.clear();
    t.after_v1_join = nullptr;
  }
  return container::process::spawn(0, cg ? cg->unified_dir_fd() : -1, enter, in_cgroup);
}

// The tenant is cloned in our own pid namespace, invisible from the container while it
// holds our root, cwd and mount namespace; the process it forks once inside is born in
// the container's pid namespace (docs/security.md, "Exec processes").
Result<Running> start_tenant(TenantConfig& t, std::optional<cgroups::Manager>& cg) {
  // Inherited by the tenant and its child: non-dumpable from the first instruction of the
  // process in the container's pid namespace, where its /proc entry is visible
  // (CVE-2019-5736).
  linux::Sys& sys = linux::real_sys();
  BERTH_TRY(sys.prctl(PR_SET_DUMPABLE, 0).context("make the runtime non-dumpable"));
  // The tenant exits once it forked the process: the orphan is reparented to us, so that
  // we reap it and its pid stays ours to signal until then.
  BERTH_TRY(sys.prctl(PR_SET_CHILD_SUBREAPER, 1).context("become a child subreaper"));
  // The process the tenant forks into the pid namespace is a copy of our memory, readable
  // by a container holding CAP_SYS_PTRACE until its execve (docs/security.md, "The window
  // before execve"); the tenant may even share it. Our caller's environment (an engine's
  // credentials) has no use from here on: LISTEN_FDS and XDG_RUNTIME_DIR are read, the
  // payload's environment is process.env.
  env::scrub_own_environment();
  BERTH_ASSIGN(auto socks, container::process::sync_pair());
  bool in_cgroup = false;
  Running r;
  BERTH_ASSIGN(r.tenant, clone_tenant(t, socks.second.get(), cg, &in_cgroup));
  r.sync = std::move(socks.first);
  socks.second.reset();
  if (t.parent_asleep) {
    // Back once the tenant has exited: its kPid (or kError) waits in the socket.
    log::debug("exec: tenant " + std::to_string(r.tenant.pid()) +
               (in_cgroup ? " born in its cgroup (CLONE_INTO_CGROUP), in our memory"
                          : " joined its cgroups itself (in our memory)"));
    return r;
  }
  // Born in the unified hierarchy (in_cgroup): on a hybrid host the v1 ones are still ours.
  if (cg) BERTH_TRY(cg->add_process(r.tenant.pid(), true, !in_cgroup));
  log::debug("exec: tenant " + std::to_string(r.tenant.pid()) +
             (in_cgroup ? " born in its cgroup (CLONE_INTO_CGROUP)" : " moved into its cgroups"));
  const auto& aff = t.payload.process.exec_cpu_affinity;
  if (aff && !aff->final.empty()) BERTH_TRY(set_affinity(r.tenant.pid(), aff->final, "final"));
  BERTH_TRY(container::process::send(r.sync.get(), Msg::kGo));
  return r;
}

// kPid: the tenant forked the process and exits. Once it is reaped, the process is our
// child (we are a subreaper), and its pid cannot be reused before we reap it.
Status adopt(Running& r, Message& m) {
  if (r.adopted || m.value <= 0 || !m.fd) return Error::generic("sync: unexpected pid message from the exec process");
  int status = r.tenant.wait();
  OwnedPid process(static_cast<pid_t>(m.value), std::move(m.fd));
  if (status != 0) return Error::generic("exec: the tenant failed (wait status " + std::to_string(status) + ")");
  r.tenant = std::move(process);
  r.adopted = true;
  log::debug("exec: process " + std::to_string(r.tenant.pid()) + " adopted");
  return container::process::send(r.sync.get(), Msg::kGo);
}

// Until execve closes the process's end (close-on-exec): its pid, its pty, its seccomp
// listener, or the error that stopped it.
Status converse(Running& r, const ExecOptions& o, const TenantConfig& t) {
  int sock = r.sync.get();
  container::Peer peer;
  peer.name = "exec process";
  peer.console_socket = o.console_socket;
  peer.console = &r.console;
  peer.seccomp = t.payload.seccomp ? &*t.payload.seccomp : nullptr;
  peer.state_json = [&t] { return oci_state_json(t.payload.state, false); };
  while (true) {
    BERTH_ASSIGN(auto m, container::process::receive_or_eof(sock));
    if (!m && !r.adopted) return Error::generic("exec: the tenant exited before it reported the process");
    if (!m) return ok();
    switch (m->type) {
      case Msg::kPid:
        BERTH_TRY(adopt(r, *m));
        break;
      default:  // kConsole, kSeccompFd, kError
        BERTH_TRY(container::answer_common(peer, sock, r.tenant.pid(), *m));
    }
  }
}

Status publish(const ExecOptions& o, Running& r) {
  return container::publish_process(o.pid_file, o.pidfd_socket, r.tenant.pid(), r.tenant.pidfd());
}

int foreground(Running& r, const sigset_t& forwarded) {
  UniqueFd pidfd(::fcntl(r.tenant.pidfd(), F_DUPFD_CLOEXEC, 0));
  Created c;
  c.pid = r.tenant.release();  // supervision reaps it
  c.pidfd = pidfd.get();
  c.console_master = r.console.get();
  return supervise_foreground(c, forwarded);
}

}  // namespace

Result<int> exec_container(const ExecOptions& o) {
  // Before anything is opened: a preserved fd that is not the caller's would hand one of
  // ours (the state root, the container's directory, the log) to the container.
  BERTH_TRY(caller_fds::check(0, o.preserve_fds));
  BERTH_ASSIGN(Target target, load_target(o));
  BERTH_ASSIGN(std::string json, read_process_file(o.process_file));
  BERTH_ASSIGN(container::ExecProcess ep, container::exec_process(o, target.config, json));
  BERTH_TRY(check_terminal(o, ep.process.terminal));
  BERTH_ASSIGN(auto tenant, build_tenant(o, target, ep));
  BERTH_ASSIGN(auto cg, exec_cgroups(o, target.record));
  BERTH_ASSIGN(UniqueFd init_pidfd, open_init(target.record));
  tenant->init_pidfd = init_pidfd.get();
  sigset_t old, forwarded;
  if (!o.detach) forwarded = block_forwarded_signals(&old);
  ScopeExit unblock([&] {
    interrupt::disarm();
    if (!o.detach) ::sigprocmask(SIG_SETMASK, &old, nullptr);
  });
  // Until the process runs, SIGTERM and the like end the wait for it (and it is killed);
  // once it runs they are forwarded to it.
  if (!o.detach) BERTH_TRY(interrupt::arm());
  auto started = start_tenant(*tenant, cg);
  if (!started) return unless_stopped(std::move(started).error(), init_pidfd.get(), target.record);
  Running r = std::move(*started);
  if (auto st = converse(r, o, *tenant); !st) {
    // A dying pid namespace's init waits for every process in it to be reaped: ours first.
    r.tenant.kill_and_reap();
    return unless_stopped(std::move(st).error(), init_pidfd.get(), target.record);
  }
  interrupt::disarm();
  BERTH_TRY(publish(o, r));
  if (o.detach) {
    r.tenant.release();
    if (o.when_done) o.when_done(0);
    return 0;
  }
  int code = foreground(r, forwarded);
  if (o.when_done) o.when_done(code);
  return code;
}

}  // namespace berth
