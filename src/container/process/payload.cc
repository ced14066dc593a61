// Identity, capabilities, linux.seccomp loading (and its listener hand-off), the executable
// lookup and execve (see payload.h). The order of the last steps is the point of this file:
//
//   the parent's kSettled, if one is due (steps.h)
//   read /etc/passwd, chdir as root, stdio (pipes, sockets, the pty) to the user
//   [seccomp, without noNewPrivileges: loading needs CAP_SYS_ADMIN, so before the drop]
//   bounding set, setgroups, setresgid, setresuid, capabilities, no_new_privs
//   chdir as the user, umask, executable lookup
//   init:   [seccomp, with noNewPrivileges: before kReady, so startContainer hooks run
//            under it, as under runc]
//           kReady, wait for `start` on exec.fifo, startContainer hooks
//   tenant: [seccomp, with noNewPrivileges]
//   close_range, execve
#include "container/process/payload.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>

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

// groups < gid < uid < capabilities < no_new_privs: the bounding set shrinks and
// PR_SET_KEEPCAPS holds the permitted set across the uid change; the capability sets are
// final only once the ids are, and no_new_privs comes last (it does not stop setuid).
Status switch_user(linux::Sys& sys, InitConfig& cfg) {
  const spec::Process& p = cfg.process;
  std::vector<gid_t> groups(p.user.additional_gids.begin(), p.user.additional_gids.end());
  if (cfg.has_caps) BERTH_TRY(linux::caps_before_setuid(sys, cfg.caps));
  // setgroups is denied in a user namespace whose creator could not map groups (rootless).
  if (auto st = sys.set_groups(groups); !st && !(st.error().err() == EPERM && groups.empty())) return st;
  BERTH_TRY(sys.setresgid(p.user.gid));
  BERTH_TRY(sys.setresuid(p.user.uid));
  if (cfg.has_caps) BERTH_TRY(linux::caps_after_setuid(sys, cfg.caps));
  if (p.no_new_privileges) BERTH_TRY(sys.prctl(PR_SET_NO_NEW_PRIVS, 1).context("set no_new_privs"));
  return ok();
}

// Loads the filter; a notify listener goes to the parent, which hands it to
// linux.seccomp.listenerPath and answers. Syscalls from here on pass the filter.
Status load_seccomp(linux::Sys& sys, InitConfig& cfg) {
  BERTH_ASSIGN(unsigned flags, seccomp::filter_flags(*cfg.seccomp));
  BERTH_ASSIGN(UniqueFd listener, sys.seccomp_set_filter(cfg.seccomp_program.bytes(), flags));
  if (!listener) return ok();
  BERTH_TRY(send(cfg.sync_fd, Msg::kSeccompFd, 0, "", listener.get()));
  listener.reset();
  return wait_for(cfg, Msg::kGo);
}

// The payload must never be the runtime binary itself (`/proc/self/exe`, a bind of the
// host binary, or a script whose interpreter is one): CVE-2019-5736 defence in depth.
// Inspection only (stat, read of the head): it changes nothing, so it stays off the seam.
Status refuse_runtime_binary(const InitConfig& cfg, const std::string& path, int depth = 0) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && st.st_dev == cfg.self_dev && st.st_ino == cfg.self_ino)
    return Error::generic("exec: " + str::go_quote(path) + ": refusing to run the container runtime binary in the container");
  if (depth >= 4) return ok();
  char head[256] = {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ok();
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
  if (cfg.seccomp && !p.no_new_privileges) BERTH_TRY(load_seccomp(sys, cfg).context("load seccomp filter"));
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

// close_range, where the container's own seccomp profile may refuse it (ENOSYS from the
// filter's prologue for a syscall the profile predates, EPERM by a rule; the OCI suite's
// default config does): every fd berth holds is O_CLOEXEC, so execve still closes them,
// as before this went through the seam. Any other failure stops the start.
Status close_fds(linux::Sys& sys, unsigned first, unsigned last) {
  auto st = sys.close_range(first, last);
  if (!st && (st.error().err() == ENOSYS || st.error().err() == EPERM)) return ok();
  return st;
}

// Only stdio and the preserved fds (LISTEN_FDS + --preserve-fds) reach the payload; `keep`
// (a tenant's sync socket, close-on-exec) stays until execve. No allocation on the way to
// execve: the seccomp filter may already be loaded (Sys allocates only to report an error).
// Returns only if execve failed (or a test's Sys stood in for it: ok).
Status exec_payload(linux::Sys& sys, const InitConfig& cfg, const std::string& path, char* const* argv,
                    char* const* envp, int keep) {
  unsigned first = 3 + static_cast<unsigned>(cfg.preserve_fds);
  if (keep >= 0 && static_cast<unsigned>(keep) >= first) {
    if (static_cast<unsigned>(keep) > first) BERTH_TRY(close_fds(sys, first, static_cast<unsigned>(keep) - 1));
    BERTH_TRY(close_fds(sys, static_cast<unsigned>(keep) + 1, ~0U));
  } else {
    BERTH_TRY(close_fds(sys, first, ~0U));
  }
  // A preserved fd the caller did not have open (EBADF) is no error, as before.
  for (int fd = 3; fd < 3 + cfg.preserve_fds; ++fd)
    if (auto st = sys.clear_cloexec(fd); !st && st.error().err() != EBADF) return st;
  if (auto st = sys.execve(path.c_str(), argv, envp); !st) return exec_error(path, st.error().err());
  return ok();
}

// With noNewPrivileges the filter is loaded as late as possible (see the top of this file).
Status late_seccomp(linux::Sys& sys, InitConfig& cfg) {
  if (!cfg.seccomp || !cfg.process.no_new_privileges) return ok();
  return load_seccomp(sys, cfg).context("load seccomp filter");
}

// The exec tenant's end: its parent waits on the sync socket until execve closes it.
int finish_tenant(linux::Sys& sys, InitConfig& cfg, const Exec& ex, char* const* argv, char* const* envp) {
  auto st = late_seccomp(sys, cfg);
  if (st) st = sys.prctl(PR_SET_PDEATHSIG, 0).context("clear the parent death signal");
  // A direct init (a `run`) reports ready just before its execve: the parent tells an
  // init that died (EOF without it) from one whose payload runs (EOF after it).
  if (st && cfg.direct && !send(cfg.sync_fd, Msg::kReady)) return 1;
  if (st) st = exec_payload(sys, cfg, ex.path, argv, envp, cfg.sync_fd);
  if (st) return 0;  // only a test's Sys returns from a successful execve
  int status = str::starts_with(st.error().root(), "exec ") ? 127 : 1;
  (void)send_error(cfg.sync_fd, std::move(st).error().context("unable to start container process"));
  return status;
}

// The init's end: seccomp, ready, wait for `start`, startContainer hooks, execve.
int finish_init(linux::Sys& sys, InitConfig& cfg, const Exec& ex, char* const* argv, char* const* envp) {
  // As runc (standard_init_linux.go): with noNewPrivileges the filter is loaded before the
  // init reports ready, so `create` still hears a failure (and passes a notify listener
  // on), and startContainer hooks, which the init runs, run under the filter as they do
  // under runc — the same as without noNewPrivileges, where it was loaded earlier still.
  // The parent death signal goes before kReady, never after: `create` exits as soon as it
  // reads kReady, and a signal still armed then kills the init it just reported as
  // created (seen under load). Should `create` die between here and kReady, the recorded
  // pid lets `delete` remove the waiting init.
  auto st = late_seccomp(sys, cfg);
  if (st) st = sys.prctl(PR_SET_PDEATHSIG, 0).context("clear the parent death signal");
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
  if (!cfg.start_container_hooks.empty()) {
    OciState s = cfg.state;
    s.pid = ::getpid();
    s.status = "created";
    // Without `env`: the process's final env, HOME included (runc's init environment).
    auto hooks = cfg.run_hooks("startContainer", cfg.start_container_hooks, s, &ex.env);
    if (!hooks) return die(hooks.error().message());
  }
  st = exec_payload(sys, cfg, ex.path, argv, envp, -1);
  return st ? 0 : die(st.error().message());
}

}  // namespace

int run_payload(linux::Sys& sys, InitConfig& cfg) {
  // Before the filter (which may refuse recv) and before the parent death signal is
  // cleared: a `create` killed before its kSettled takes us with it, so that no init is
  // left that the state does not name.
  if (auto st = wait_settled(cfg); !st) {
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
  if (cfg.exec_tenant || cfg.direct) return finish_tenant(sys, cfg, *ex, argv.data(), envp.data());
  return finish_init(sys, cfg, *ex, argv.data(), envp.data());
}

}  // namespace berth::container::process
