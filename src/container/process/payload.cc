// Identity, capabilities, linux.seccomp loading (and its listener hand-off), the executable
// lookup and execve (see payload.h). The order of the last steps is the point of this file:
// berth's own calls never run under the container's filter (docs/seccomp.md).
//
//   the parent's kSettled, if one is due (steps.h)
//   read /etc/passwd, chdir as root, stdio (pipes, sockets, the pty) to the user
//   bounding set, setgroups, setresgid, setresuid, capabilities, no_new_privs; without
//     noNewPrivileges a filter still to load needs CAP_SYS_ADMIN: the capability sets
//     keep it (effective and permitted) until the filter is in
//   chdir as the user, umask, executable lookup
//   parent death signal cleared
//   init:   kReady, wait for `start` on exec.fifo, startContainer hooks (each hook's
//           process loads the filter itself, then execs the hook)
//   direct: kReady
//   fds closed (close_range), preserved fds marked (fcntl)
//   seccomp filter; without noNewPrivileges the final capset; then execve
//
// A notify filter (linux.seccomp.listenerPath) is the one exception: its listener exists
// only once the filter is loaded and must reach the parent, so the hand-off (sendmsg,
// recvmsg) follows the load, and an init that waits for `start` loads it before kReady.
#include "container/process/payload.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "berth/state.h"
#include "container/process/steps.h"
#include "container/process/sync.h"
#include "linux/lookpath.h"
#include "linux/users.h"
#include "util/env.h"
#include "util/file.h"
#include "util/strings.h"

namespace berth::container::process {
namespace {

struct Exec {
  std::string path;
  std::vector<std::string> argv, env;
};

// A file of the container (missing or unreadable: empty, as for runc's user lookup).
std::string read_container_file(linux::Sys& sys, const char* path) {
  auto text = sys.read_file(path);
  return text ? *text : std::string();
}

// HOME from the container's passwd (runc sets it when absent; "/" for unknown users). The
// supplementary groups are additionalGids alone: runc passes the user as "uid:gid", the
// explicit form, for which /etc/group adds nothing.
void home_from_passwd(linux::Sys& sys, const spec::Process& p, std::vector<std::string>& env) {
  if (std::any_of(env.begin(), env.end(), [](const std::string& e) { return str::starts_with(e, "HOME="); }))
    return;
  std::string home = "/";
  for (const auto& e : linux::parse_passwd(read_container_file(sys, "/etc/passwd")))
    if (e.uid == p.user.uid) {
      home = e.home;
      break;
    }
  env.push_back("HOME=" + home);
}

// runc hands the process's stdio to its user (fixStdioPermissions), so that a non-root
// process can reopen it (`echo > /dev/stdout`, a pty's `tty`-based tools); the uid only,
// the gid stays (devpts' gid=5). Only what cannot be a host file is handed over: pipes
// and sockets (anonymous inodes) and, with process.terminal, the container's own pty
// (stdio is its peer then). runc also chowns files, FIFOs and terminals of the host
// passed as stdio, giving a container uid a host file (docs/conformance.md). A failure
// (EINVAL, EPERM: an owner or uid not mapped in a user namespace) leaves it as it is, as
// runc does. Done before any seccomp filter is loaded: a profile may deny fchown.
void hand_stdio_to(linux::Sys& sys, uid_t uid, bool terminal) {
  for (int fd = 0; fd < 3; ++fd) {
    auto st = sys.fstat(fd);
    if (!st || st->st_uid == uid) continue;
    auto fs = sys.fstatfs(fd);
    if (!fs) continue;
    bool anonymous = fs->f_type == PIPEFS_MAGIC || fs->f_type == SOCKFS_MAGIC;
    bool own_pty = terminal && fs->f_type == DEVPTS_SUPER_MAGIC && S_ISCHR(st->st_mode);
    if (anonymous || own_pty) (void)sys.fchownat(fd, "", uid, static_cast<gid_t>(-1), AT_EMPTY_PATH);
  }
}

// Without noNewPrivileges the kernel takes a filter only from a process that holds
// CAP_SYS_ADMIN (in its user namespace). Every other call of ours comes before the filter,
// the uid switch included, so the capability sets hold CAP_SYS_ADMIN on top of the
// container's until the filter is in, and the container's own sets follow it (final_caps).
bool filter_needs_admin(const InitConfig& cfg) { return cfg.seccomp && !cfg.process.no_new_privileges; }

linux::CapSets with_admin(linux::CapSets c) {
  constexpr uint64_t admin = uint64_t{1} << CAP_SYS_ADMIN;
  c.effective |= admin;
  c.permitted |= admin;
  return c;
}

// Without process.capabilities the uid switch alone decides: a non-root user ends with
// none (the kernel clears them at setresuid), root keeps its own. A filter still to load
// needs CAP_SYS_ADMIN past that switch: keep every capability across it and set the
// empty sets the switch would have left once the filter is in. The inheritable set ends
// empty too (the init's is).
void caps_for_late_filter(InitConfig& cfg) {
  if (cfg.has_caps || !filter_needs_admin(cfg) || cfg.process.user.uid == 0) return;
  cfg.has_caps = true;
  cfg.caps = linux::CapSets{};
  cfg.caps.bounding = ~uint64_t{0};  // nothing dropped from the bounding set
}

// groups < gid < uid < capabilities < no_new_privs: the bounding set shrinks and
// PR_SET_KEEPCAPS holds the permitted set across the uid change; the capability sets are
// final only once the ids are, and no_new_privs comes last (it does not stop setuid).
Status switch_user(linux::Sys& sys, InitConfig& cfg) {
  const spec::Process& p = cfg.process;
  std::vector<gid_t> groups(p.user.additional_gids.begin(), p.user.additional_gids.end());
  caps_for_late_filter(cfg);
  if (cfg.has_caps) BERTH_TRY(linux::caps_before_setuid(sys, cfg.caps));
  // setgroups is denied in a user namespace whose creator could not map groups (rootless).
  if (auto st = sys.set_groups(groups); !st && !(st.error().err() == EPERM && groups.empty())) return st;
  BERTH_TRY(sys.setresgid(p.user.gid));
  BERTH_TRY(sys.setresuid(p.user.uid));
  if (cfg.has_caps) BERTH_TRY(linux::caps_after_setuid(sys, filter_needs_admin(cfg) ? with_admin(cfg.caps) : cfg.caps));
  if (p.no_new_privileges) BERTH_TRY(sys.prctl(PR_SET_NO_NEW_PRIVS, 1).context("set no_new_privs"));
  return ok();
}

// The container's capability sets, once a filter loaded without noNewPrivileges no longer
// needs CAP_SYS_ADMIN: one capset(2) (no allocation), and none where the sets already are.
Status final_caps(linux::Sys& sys, const InitConfig& cfg) {
  if (!filter_needs_admin(cfg) || !cfg.has_caps) return ok();
  linux::CapSets held = with_admin(cfg.caps);
  if (held.effective == cfg.caps.effective && held.permitted == cfg.caps.permitted) return ok();
  return sys.capset(cfg.caps);
}

// Loads the filter, then sets the container's capabilities (final_caps). A notify listener
// goes to the parent, which hands it to linux.seccomp.listenerPath and answers: the only
// calls of ours that run under the filter (the listener is born with it, and the parent
// alone reaches the agent's socket).
Status load_seccomp(linux::Sys& sys, InitConfig& cfg) {
  BERTH_ASSIGN(unsigned flags, seccomp::filter_flags(*cfg.seccomp));
  BERTH_ASSIGN(UniqueFd listener, sys.seccomp_set_filter(cfg.seccomp_program.bytes(), flags).context("load seccomp filter"));
  BERTH_TRY(final_caps(sys, cfg));
  if (!listener) return ok();
  BERTH_TRY(send(cfg.sync_fd, Msg::kSeccompFd, 0, "", listener.get()));
  listener.reset();
  return wait_for(cfg, Msg::kGo);
}

bool notify_filter(const InitConfig& cfg) { return cfg.seccomp && seccomp::uses_notify(*cfg.seccomp); }

// The payload must never be the runtime binary itself (`/proc/self/exe`, a bind of the
// host binary, or a script whose interpreter is one): CVE-2019-5736 defence in depth.
// Inspection only (stat, read of the head): it changes nothing, so it stays off the seam.
Status refuse_runtime_binary(const InitConfig& cfg, const std::string& path, int depth = 0) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && st.st_dev == cfg.self_dev && st.st_ino == cfg.self_ino)
    return Error::generic("exec: " + str::go_quote(path) + ": refusing to run the container runtime binary in the container");
  if (depth >= 4) return ok();
  char head[256] = {};
  // Non-blocking, and only a regular file's head: an interpreter that is a FIFO (planted
  // by the container) held run, create and exec in open(2) forever. execve refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return ok();
  if (::fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return ok();
  }
  ssize_t n = ::read(fd, head, sizeof head - 1);
  ::close(fd);
  if (n < 3 || head[0] != '#' || head[1] != '!') return ok();
  std::string line(head + 2, static_cast<size_t>(n) - 2);
  line = std::string(str::trim(line.substr(0, line.find('\n'))));
  std::string interp = line.substr(0, line.find_first_of(" \t"));
  return interp.empty() ? ok() : refuse_runtime_binary(cfg, interp, depth + 1);
}

// process.apparmorProfile / selinuxLabel: the LSM switches to them at execve. Written
// through the container's procfs, whose files are checked to be procfs on the very fd
// (a fake /proc must not take the write, CVE-2019-16884). Refused earlier where the host
// has no such LSM (init_builder.cc, exec_process.cc).
Status write_exec_attr(linux::Sys& sys, const char* lsm_path, const char* generic_path, const std::string& value,
                       const char* field) {
  auto fd = sys.openat(AT_FDCWD, lsm_path, O_WRONLY | O_NOFOLLOW, 0);
  if (!fd) fd = sys.openat(AT_FDCWD, generic_path, O_WRONLY | O_NOFOLLOW, 0);
  if (!fd) return std::move(fd).error().context(field);
  auto fs = sys.fstatfs(fd->get());
  if (!fs || fs->f_type != PROC_SUPER_MAGIC)
    return Error::generic(std::string(field) + ": " + generic_path + " is not on procfs");
  return sys.write_fd(fd->get(), value).context(field);
}

Status apply_lsm_labels(linux::Sys& sys, const spec::Process& p) {
  if (!p.apparmor_profile.empty())
    BERTH_TRY(write_exec_attr(sys, "/proc/thread-self/attr/apparmor/exec", "/proc/thread-self/attr/exec",
                              "exec " + p.apparmor_profile, "process.apparmorProfile"));
  if (!p.selinux_label.empty())
    BERTH_TRY(write_exec_attr(sys, "/proc/thread-self/attr/selinux/exec", "/proc/thread-self/attr/exec",
                              p.selinux_label, "process.selinuxLabel"));
  return ok();
}

Result<Exec> prepare(linux::Sys& sys, InitConfig& cfg) {
  const spec::Process& p = cfg.process;
  if (p.args.empty()) return Error::invalid_spec("process.args: must not be empty");
  Exec ex;
  ex.env = env::merge(p.env);  // `exec --env` overrides the config: one entry per name
  ex.argv = p.args;
  home_from_passwd(sys, p, ex.env);
  // cwd first as root (it may be unreachable for the user only through a parent dir), and
  // again as the user if that failed.
  bool cwd_done = sys.chdir(p.cwd.empty() ? "/" : p.cwd).ok();
  BERTH_TRY(apply_lsm_labels(sys, p));
  hand_stdio_to(sys, p.user.uid, p.terminal);
  BERTH_TRY(switch_user(sys, cfg));
  if (!cwd_done)
    if (auto st = sys.chdir(p.cwd); !st)
      return Error::sys(st.error().err(), "chdir to cwd (" + str::go_quote(p.cwd) + ") set in config.json");
  sys.umask(p.user.umask.value_or(022));
  BERTH_ASSIGN(ex.path, linux::look_path(p.args[0], linux::env_value(ex.env, "PATH")));
  BERTH_TRY(refuse_runtime_binary(cfg, ex.path));
  return ex;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// After kReady the sync socket is closed: a late failure goes to the init's stderr, and
// the returned status becomes its exit status.
int die(const std::string& what) {
  (void)file::write_all(2, "berth: " + what + "\n");
  return 127;
}

// Go's wording for a failed execve, as runc reports it: "exec /x: no such file or directory".
Error exec_error(const std::string& path, int err) {
  return Error::generic("exec " + path + ": " + str::to_lower(strerrordesc_np(err)));
}

// Only stdio and the preserved fds (LISTEN_FDS + --preserve-fds) reach the payload: every
// fd from 3 + preserve_fds up is closed but `keep` (the sync socket, exec.fifo: close-on-
// exec, needed until the filter or execve), and the preserved ones lose close-on-exec.
// Before the filter: a profile may deny close_range and fcntl, make them fail with any
// errno, kill us on them or hand them to the container's agent (SCMP_ACT_NOTIFY).
Status close_fds(linux::Sys& sys, const InitConfig& cfg, std::vector<int> keep) {
  unsigned first = 3 + static_cast<unsigned>(cfg.preserve_fds);
  std::sort(keep.begin(), keep.end());
  for (int k : keep) {
    if (k < 0 || static_cast<unsigned>(k) < first) continue;
    if (static_cast<unsigned>(k) > first) BERTH_TRY(sys.close_range(first, static_cast<unsigned>(k) - 1));
    first = static_cast<unsigned>(k) + 1;
  }
  BERTH_TRY(sys.close_range(first, ~0U));
  // cfg.preserve_fds is the count caller_fds::check validated in the parent: fds the caller
  // passed, never one of berth's, lose close-on-exec. EBADF (one the caller passed but
  // closed since, as a shared fd table allows) is no error, as before.
  for (int fd = 3; fd < 3 + cfg.preserve_fds; ++fd)
    if (auto st = sys.clear_cloexec(fd); !st && st.error().err() != EBADF) return st;
  return ok();
}

// The filter (unless a notify filter is in already), the container's capabilities, then
// execve and nothing else. No allocation from the filter on: argv and envp are built.
// Returns only if something failed (or a test's Sys stood in for execve: ok).
Status filter_and_exec(linux::Sys& sys, InitConfig& cfg, const std::string& path, char* const* argv,
                       char* const* envp) {
  if (cfg.seccomp && !notify_filter(cfg)) BERTH_TRY(load_seccomp(sys, cfg));
  if (auto st = sys.execve(path.c_str(), argv, envp); !st) return exec_error(path, st.error().err());
  return ok();
}

// A notify filter: loaded before anything is sent that lets the parent go, with the fds
// already closed, since the listener must reach the parent.
Status early_notify_filter(linux::Sys& sys, InitConfig& cfg, std::vector<int> keep) {
  if (!notify_filter(cfg)) return ok();
  BERTH_TRY(close_fds(sys, cfg, std::move(keep)));
  return load_seccomp(sys, cfg);
}

// The exec tenant's end (and a direct init's): its parent waits on the sync socket until
// execve closes it.
int finish_tenant(linux::Sys& sys, InitConfig& cfg, const Exec& ex, char* const* argv, char* const* envp) {
  Status st = sys.prctl(PR_SET_PDEATHSIG, 0).context("clear the parent death signal");
  // A direct init (a `run`) reports ready before its filter and execve: the parent tells
  // an init that died (EOF without it) from one whose payload runs (EOF after it), and
  // reads an error sent after it. It never has a notify filter (launch.cc, direct_possible).
  if (st && cfg.launch == Launch::kDirect && !send(cfg.sync_fd, Msg::kReady)) return 1;
  if (st) st = early_notify_filter(sys, cfg, {cfg.sync_fd});
  if (st && !notify_filter(cfg)) st = close_fds(sys, cfg, {cfg.sync_fd});
  if (st) st = filter_and_exec(sys, cfg, ex.path, argv, envp);
  if (st) return 0;  // only a test's Sys returns from a successful execve
  int status = str::starts_with(st.error().root(), "exec ") ? 127 : 1;
  (void)send_error(cfg.sync_fd, std::move(st).error().context("unable to start container process"));
  return status;
}

// The filter of a startContainer hook's process, loaded there just before it execs the
// hook: hooks run under the container's filter, as under runc (its seccomp.bats checks
// that), while the init that runs them, and the hook runner of ours in that process, do
// not. An init with a notify filter has it already, and its hooks inherit it.
std::function<Status()> hook_filter(linux::Sys& sys, InitConfig& cfg) {
  if (!cfg.seccomp || notify_filter(cfg)) return {};
  return [&sys, &cfg] { return load_seccomp(sys, cfg); };
}

// startContainer hooks, after `start` came: run by the init in the container, as the
// container's user with its capabilities (the init switched already, as runc's has), each
// under the filter (hook_filter).
Status start_container_hooks(linux::Sys& sys, InitConfig& cfg, const Exec& ex) {
  if (cfg.start_container_hooks.empty()) return ok();
  OciState s = cfg.state;
  s.pid = ::getpid();
  s.status = "created";
  auto last_step = hook_filter(sys, cfg);
  // Without `env`: the process's final env, HOME included (runc's init environment).
  return cfg.run_hooks("startContainer", cfg.start_container_hooks, s, &ex.env, last_step ? &last_step : nullptr);
}

// The init's end: ready, wait for `start`, startContainer hooks, fds, filter, execve.
int finish_init(linux::Sys& sys, InitConfig& cfg, const Exec& ex, char* const* argv, char* const* envp) {
  // The parent death signal goes before kReady, never after: `create` exits as soon as it
  // reads kReady, and a signal still armed then kills the init it just reported as
  // created (seen under load). Should `create` die between here and kReady, the recorded
  // pid lets `delete` remove the waiting init. A notify filter is loaded before kReady
  // (its listener goes to `create`); any other after the hooks, right before execve.
  auto st = sys.prctl(PR_SET_PDEATHSIG, 0).context("clear the parent death signal");
  if (st) st = early_notify_filter(sys, cfg, {cfg.sync_fd, cfg.fifo_fd});
  if (!st) {
    (void)send_error(cfg.sync_fd, std::move(st).error().context("unable to start container process"));
    return 1;
  }
  if (!send(cfg.sync_fd, Msg::kReady)) return 1;
  // Blocks until `berth start` writes its byte; EOF would mean the writer went away.
  char c;
  ssize_t n;
  do n = ::read(cfg.fifo_fd, &c, 1); while (n < 0 && errno == EINTR);
  if (n != 1) return die("waiting for start: exec.fifo closed");
  // exec.fifo stays open (O_CLOEXEC) until the execve: `start` returns, and its poststart
  // hooks run, only once it is gone, after the startContainer hooks below (runc's order).
  ::close(cfg.sync_fd);
  cfg.sync_fd = -1;
  if (auto hooks = start_container_hooks(sys, cfg, ex); !hooks) return die(hooks.error().message());
  if (!notify_filter(cfg)) st = close_fds(sys, cfg, {cfg.fifo_fd});
  if (st) st = filter_and_exec(sys, cfg, ex.path, argv, envp);
  return st ? 0 : die(st.error().message());
}

}  // namespace

int run_payload(linux::Sys& sys, InitConfig& cfg) {
  // Before the filter (which may refuse recv) and before the parent death signal is
  // cleared: a `create` killed before its kSettled takes us with it, so that no init is
  // left that the state does not name.
  // And, --systemd-cgroup, placed in the unit (init.cc has awaited it already).
  auto st = wait_settled(cfg);
  if (st) st = wait_placed(cfg);
  if (!st) {
    (void)send_error(cfg.sync_fd, std::move(st).error().context("unable to start container process"));
    return 1;
  }
  auto ex = prepare(sys, cfg);
  if (!ex) {
    (void)send_error(cfg.sync_fd, std::move(ex).error().context("unable to start container process"));
    return 1;
  }
  // Built now: nothing after the filter should need to allocate.
  auto argv = c_strings(ex->argv);
  auto envp = c_strings(ex->env);
  if (execs_at_once(cfg.launch)) return finish_tenant(sys, cfg, *ex, argv.data(), envp.data());
  return finish_init(sys, cfg, *ex, argv.data(), envp.data());
}

}  // namespace berth::container::process
