// The exec tenant (see tenant.h). The intermediate: wait for the parent (cgroup joined),
// set process.oomScoreAdj (inherited across fork), join every namespace of the init at
// once, `--user NAME` from the container's /etc/passwd, the attributes a fork inherits
// (the session keyring, ioPriority, linux.personality, linux.memoryPolicy), then fork the
// process itself into the pid namespace, report it (kPid) and exit. The process: wait for
// the parent to adopt it, new session, process.rlimits and scheduler, the pty, then the
// payload (payload.cc).
#include "container/process/tenant.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "container/process/payload.h"
#include "container/process/spawn.h"
#include "container/process/steps.h"
#include "container/process/sync.h"
#include "linux/namespaces.h"
#include "linux/process_attrs.h"
#include "linux/sys.h"
#include "linux/users.h"
#include "util/file.h"

namespace berth::container::process {
namespace {

// One setns(pidfd, all flags) where the kernel allows it (5.8+): the kernel joins the user
// namespace first and checks every other against it, atomically. The pid namespace is one
// of them: setns applies it to our children only, and we never become visible in it.
// Older kernels refuse a pidfd (EINVAL): join /proc/<pid>/ns/* one by one, user first and
// mount last (every fd is opened before the first join).
Status join_namespaces(linux::Sys& sys, const TenantConfig& t) {
  int flags = 0;
  for (const auto& type : t.join_types) flags |= linux::ns_flag(type);
  if (!flags) return ok();
  auto st = sys.setns(t.init_pidfd, flags);
  if (st || st.error().err() != EINVAL) return st;
  std::vector<spec::Namespace> entries;
  for (const auto& type : t.join_types)
    entries.push_back({type, "/proc/" + std::to_string(t.init_pid) + "/ns/" + linux::ns_proc_name(type)});
  BERTH_ASSIGN(linux::NamespacePlan plan, linux::plan_namespaces(entries));
  for (const auto& j : plan.joins)
    BERTH_TRY(sys.setns(j.fd.get(), j.flag).context("join " + j.type + " namespace"));
  return ok();
}

// `--user NAME[:GID]`: the uid and primary gid from the container's passwd; without a
// group, the user's groups from its group file too (the implicit form of runc's user
// lookup, which is what Docker sends as additionalGids).
Status resolve_user(linux::Sys& sys, TenantConfig& t) {
  if (t.user_name.empty()) return ok();
  auto passwd = sys.read_file("/etc/passwd");
  BERTH_ASSIGN(auto ids, linux::parse_user_spec(t.user_name, passwd ? *passwd : std::string()));
  spec::User& u = t.payload.process.user;
  u.uid = ids.first;
  u.gid = ids.second;
  if (t.user_name.find(':') != std::string::npos) return ok();
  auto group = sys.read_file("/etc/group");
  std::string name = t.user_name;
  for (gid_t g : linux::groups_of(group ? *group : std::string(), name)) u.additional_gids.push_back(g);
  return ok();
}

// process.* attributes a fork inherits (session keyring, ioPriority, linux.personality,
// linux.memoryPolicy): set by the intermediate, before the process exists. The init sets
// the same in its own order (apply_process_attributes).
Status inherited_attributes(linux::Sys& sys, const InitConfig& cfg) {
  const spec::Process& p = cfg.process;
  if (cfg.new_keyring) BERTH_TRY(sys.join_session_keyring(cfg.container_id));
  if (p.io_priority) BERTH_TRY(sys.set_io_priority(*p.io_priority));
  if (cfg.personality) BERTH_TRY(sys.set_personality(*cfg.personality));
  if (cfg.memory_policy) BERTH_TRY(sys.set_memory_policy(*cfg.memory_policy));
  return ok();
}

// The rest, in the process itself: rlimits, because the fork would count against
// RLIMIT_NPROC, and the scheduler, because a policy with SCHED_FLAG_RESET_ON_FORK would not
// survive the fork. (oomScoreAdj is written before the joins: tenant_enter.)
Status own_attributes(linux::Sys& sys, const InitConfig& cfg) {
  const spec::Process& p = cfg.process;
  if (!p.rlimits.empty()) BERTH_TRY(sys.set_rlimits(p.rlimits));
  if (p.scheduler) BERTH_TRY(sys.set_scheduler(*p.scheduler));
  return ok();
}

// The process, born in the container's pid namespace with the container's root and cwd.
// Its first parent (the intermediate) exits right away: a parent death signal armed now
// would fire then. The parent sends kGo once it adopted us (it is a child subreaper);
// only then is the signal armed, and a parent that died in between shows as a closed
// socket.
int process_main(linux::Sys& sys, TenantConfig& t) {
  auto st = tenant_settle(sys, t);
  if (!st) {
    (void)send_error(t.payload.sync_fd, std::move(st).error().context("unable to start container process"));
    return 1;
  }
  return run_payload(sys, t.payload);
}

// The intermediate: outside the container's pid namespace, so nothing in the container
// can see it while it still holds the host's root, cwd and mount namespace.
Result<OwnedPid> enter(linux::Sys& sys, TenantConfig& t) {
  BERTH_TRY(tenant_enter(sys, t));
  return fork_child([&] { return process_main(sys, t); }).context("fork the process into the container");
}

}  // namespace

Status tenant_settle(linux::Sys& sys, TenantConfig& t) {
  InitConfig& cfg = t.payload;
  BERTH_TRY(wait_for(cfg, Msg::kGo));
  BERTH_TRY(sys.prctl(PR_SET_PDEATHSIG, SIGKILL).context("set the parent death signal"));
  char b;
  if (::recv(cfg.sync_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0) return Error::generic("sync: the runtime is gone");
  BERTH_TRY(sys.setsid());
  BERTH_TRY(own_attributes(sys, cfg));
  if (cfg.process.terminal) {
    // Joining the mount namespace made its root our root and cwd.
    UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) return Error::sys(errno, "open the container's root");
    BERTH_TRY(open_console(sys, cfg, root.get(), nullptr).context("set up console"));
  }
  return ok();
}

Status tenant_enter(linux::Sys& sys, TenantConfig& t) {
  InitConfig& cfg = t.payload;
  reset_signals();
  // Born non-dumpable (the parent is), and so is the process we fork: nothing in the
  // container may ptrace it or open its /proc files while berth's memory is mapped there
  // (CVE-2019-5736).
  BERTH_TRY(sys.prctl(PR_SET_PDEATHSIG, SIGKILL).context("set the parent death signal"));
  // Still one thread in berth's namespaces: the fds the parent opened work here.
  BERTH_TRY(join_v1_cgroups(sys, cfg));
  if (t.after_v1_join) BERTH_TRY(t.after_v1_join());
  if (!t.parent_asleep) BERTH_TRY(wait_for(cfg, Msg::kGo));
  // process.oomScoreAdj here, through the host's /proc, and inherited by the process we
  // fork: written after the joins it would go through the container's /proc, which a
  // container holding CAP_SYS_ADMIN can replace, leaving the process with the caller's
  // value (a shim's is often -998) instead (CVE-2025-52881 class).
  if (cfg.process.oom_score_adj) {
    BERTH_TRY(sys.set_oom_score_adj(*cfg.process.oom_score_adj));
    cfg.process.oom_score_adj.reset();
  }
  BERTH_TRY(join_namespaces(sys, t).context("join namespaces of the container"));
  // The init's pidfd is of no use to the process: it leaves with us.
  ::close(t.init_pidfd);
  t.init_pidfd = -1;
  // Whatever the fork passes on is done here, where the container cannot see us: the
  // process then runs as little of berth's code in its pid namespace as it can
  // (docs/security.md, "The window before execve").
  BERTH_TRY(resolve_user(sys, t));
  BERTH_TRY(inherited_attributes(sys, cfg));
  return narrow_caps(sys, cfg, t.held_caps);
}

int tenant_main(TenantConfig& t) {
  auto child = enter(linux::real_sys(), t);
  if (!child) {
    (void)send_error(t.payload.sync_fd, std::move(child).error().context("unable to start container process"));
    return 1;
  }
  // Our pid namespace is the parent's: the pid is the one it sees.
  if (!send(t.payload.sync_fd, Msg::kPid, child->pid(), "", child->pidfd())) return 1;
  child->release();  // the parent adopts it when we exit
  return 0;
}

}  // namespace berth::container::process
