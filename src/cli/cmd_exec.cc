// exec: runc's flags → ExecOptions. As in runc, a failed exec exits 255 (the process's own
// status is passed through otherwise), and flags after the container id belong to the
// command (no reordering: `berth exec ID ls -la`).
#include <unistd.h>

#include "cli/commands.h"
#include "container/exec.h"
#include "util/file.h"

namespace berth::cli {
namespace {

constexpr int kExecFailed = 255;

ExecOptions exec_options(const Context& ctx) {
  const ParsedFlags& f = ctx.flags;
  ExecOptions o;
  o.root = ctx.global.root;
  o.id = f.args.at(0);
  o.args.assign(f.args.begin() + 1, f.args.end());
  o.process_file = f.get_string("process");
  o.cwd = f.get_string("cwd");
  o.env = f.get_strings("env");
  o.tty = f.get_bool("tty");
  o.user = f.get_string("user");
  o.additional_gids = f.get_strings("additional-gids");
  if (f.has("no-new-privs")) o.no_new_privs = f.get_bool("no-new-privs");
  o.caps = f.get_strings("cap");
  o.apparmor = f.get_string("apparmor");
  o.process_label = f.get_string("process-label");
  o.detach = f.get_bool("detach");
  o.pid_file = f.get_string("pid-file");
  o.console_socket = f.get_string("console-socket");
  o.pidfd_socket = f.get_string("pidfd-socket");
  o.cgroups = f.get_strings("cgroup");
  o.ignore_paused = f.get_bool("ignore-paused");
  return o;
}

// main.cc prints a returned error and exits 1; exec's failures exit 255, so it prints its
// own the same way (to the log in its format, and to stderr when the log is a file).
int failed(const Error& e) {
  std::string msg = e.message();
  log::error(msg);
  if (!log::to_stderr()) (void)file::write_all(STDERR_FILENO, msg + "\n");
  return kExecFailed;
}

}  // namespace

Result<int> cmd_exec(Context& ctx) {
  ExecOptions o = exec_options(ctx);
  uint64_t preserve = ctx.flags.get_uint("preserve-fds");
  if (preserve > 1024) return failed(Error::invalid_argument("exec failed: --preserve-fds: too many file descriptors"));
  o.preserve_fds = static_cast<int>(preserve);
  // Our process ends with the exec: no destructor needs to run (exec.h, when_done).
  o.when_done = [](int code) { ::_exit(code); };
  auto code = exec_container(o);
  if (!code) return failed(std::move(code).error().context("exec failed"));
  return *code;
}

}  // namespace berth::cli
