// Identity, capabilities, executable lookup and execve (see payload.h).
#include "container/process/payload.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "berth/state.h"
#include "container/hooks.h"
#include "container/process/sync.h"
#include "container/record.h"
#include "linux/lookpath.h"
#include "linux/users.h"
#include "util/file.h"
#include "util/strings.h"

namespace berth::container::process {
namespace {

struct Exec {
  std::string path;
  std::vector<std::string> argv, env;
};

std::string read_container_file(const char* path) {
  auto text = file::read(path, 4u << 20);
  return text ? *text : std::string();
}

// HOME from the container's passwd (runc sets it when absent; "/" for unknown users). The
// supplementary groups are exactly process.user.additionalGids: runc always names the
// group ("uid:gid"), so it never adds memberships from the image's /etc/group.
std::vector<gid_t> identity_from_files(const spec::Process& p, std::vector<std::string>& env) {
  if (std::none_of(env.begin(), env.end(), [](const std::string& e) { return str::starts_with(e, "HOME="); })) {
    std::string home = "/";
    for (const auto& e : linux::parse_passwd(read_container_file("/etc/passwd")))
      if (e.uid == p.user.uid) {
        home = e.home;
        break;
      }
    env.push_back("HOME=" + home);
  }
  return std::vector<gid_t>(p.user.additional_gids.begin(), p.user.additional_gids.end());
}

Status switch_user(InitConfig& cfg, const std::vector<gid_t>& groups) {
  const spec::Process& p = cfg.process;
  if (cfg.has_caps) BERTH_TRY(linux::caps_before_setuid(cfg.caps));
  // setgroups is denied in a user namespace whose creator could not map groups (rootless).
  if (::setgroups(groups.size(), groups.data()) < 0 && !(errno == EPERM && groups.empty()))
    return Error::sys(errno, "setgroups");
  if (::setresgid(p.user.gid, p.user.gid, p.user.gid) < 0) return Error::sys(errno, "setgid " + std::to_string(p.user.gid));
  if (::setresuid(p.user.uid, p.user.uid, p.user.uid) < 0) return Error::sys(errno, "setuid " + std::to_string(p.user.uid));
  if (cfg.has_caps) BERTH_TRY(linux::caps_after_setuid(cfg.caps));
  if (p.no_new_privileges && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return Error::sys(errno, "set no_new_privs");
  return ok();
}

// The payload must never be the runtime binary itself (`/proc/self/exe`, a bind of the
// host binary, or a script whose interpreter is one): CVE-2019-5736 defence in depth.
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

Result<Exec> prepare(InitConfig& cfg) {
  const spec::Process& p = cfg.process;
  if (p.args.empty()) return Error::invalid_spec("process.args: must not be empty");
  Exec ex;
  ex.env = p.env;
  ex.argv = p.args;
  std::vector<gid_t> groups = identity_from_files(p, ex.env);
  // cwd first as root (it may be unreachable for the user only through a parent dir), and
  // again as the user if that failed.
  bool cwd_done = ::chdir(p.cwd.empty() ? "/" : p.cwd.c_str()) == 0;
  BERTH_TRY(switch_user(cfg, groups));
  if (!cwd_done && ::chdir(p.cwd.c_str()) < 0) return Error::sys(errno, "chdir to cwd (" + str::go_quote(p.cwd) + ") set in config.json");
  ::umask(p.user.umask.value_or(022));
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

void die(const std::string& what) {
  (void)file::write_all(2, "berth: " + what + "\n");
  ::_exit(127);
}

}  // namespace

int run_payload(InitConfig& cfg) {
  auto ex = prepare(cfg);
  if (!ex) {
    (void)send_error(cfg.sync_fd, std::move(ex).error().context("unable to start container process"));
    return 1;
  }
  if (!send(cfg.sync_fd, Msg::kReady)) return 1;
  ::prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
  if (cfg.fifo_fd >= 0) {
    // Blocks until `berth start` writes its byte; EOF would mean the writer went away.
    char c;
    ssize_t n;
    do n = ::read(cfg.fifo_fd, &c, 1); while (n < 0 && errno == EINTR);
    if (n != 1) die("waiting for start: exec.fifo closed");
    ::close(cfg.fifo_fd);
  }
  ::close(cfg.sync_fd);
  if (!cfg.start_container_hooks.empty()) {
    OciState s = cfg.state;
    s.pid = ::getpid();
    s.status = "created";
    auto st = run_hooks("startContainer", cfg.start_container_hooks, oci_state_json(s, false));
    if (!st) die(st.error().message());
  }
  // Only stdio and the preserved fds (LISTEN_FDS + --preserve-fds) reach the payload.
  ::syscall(SYS_close_range, 3 + cfg.preserve_fds, ~0U, 0);
  for (int fd = 3; fd < 3 + cfg.preserve_fds; ++fd) ::fcntl(fd, F_SETFD, 0);
  auto argv = c_strings(ex->argv);
  auto envp = c_strings(ex->env);
  ::execve(ex->path.c_str(), argv.data(), envp.data());
  die("exec " + ex->path + ": " + Error::sys(errno, "").message().substr(2));
  return 127;
}

}  // namespace berth::container::process
