// berth's entry point: global flags, logging set-up, command dispatch, and the one place
// where errors are printed (as runc does: to the log in its format, and as plain text on
// stderr as well when the log goes to a file).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "berth/runtime.h"
#include "cli/commands.h"
#include "util/caller_fds.h"
#include "util/file.h"

namespace berth::cli {
namespace {

void out(const std::string& s) { (void)file::write_all(STDOUT_FILENO, s); }

int fail(const Error& e) {
  std::string msg = e.message();
  log::error(msg);
  if (!log::to_stderr()) (void)file::write_all(STDERR_FILENO, msg + "\n");
  return 1;
}

// Sets up logging from the global flags; errors here are printed to stderr as text.
Result<GlobalOptions> globals_from(const ParsedFlags& f) {
  GlobalOptions g;
  // Rootless callers get their own state root (never root's), as runc does; looked at only
  // without --root (engines always pass one), so that their calls read nothing more.
  g.root = f.get_string("root", "");
  if (g.root.empty()) g.root = default_state_root();
  g.debug = f.get_bool("debug");
  g.systemd_cgroup = f.get_bool("systemd-cgroup");
  g.rootless = f.get_string("rootless", "auto");
  g.criu = f.get_string("criu", "criu");
  std::string fmt = f.get_string("log-format", "text");
  if (fmt == "json") g.log_format = log::Format::kJson;
  else if (fmt != "text") return Error::invalid_argument("invalid log-format: " + fmt);
  g.log_path = f.get_string("log");
  int fd = -1;
  if (!g.log_path.empty() && g.log_path != "/dev/stderr") {
    fd = ::open(g.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Error::sys(errno, "open log file " + g.log_path);
  }
  log::configure(fd, g.log_format, g.debug);
  return g;
}

bool arg_count_ok(const CommandSpec& c, size_t n) {
  switch (c.arg_rule) {
    case ArgRule::kNone: return n == 0;
    case ArgRule::kExactly: return n == static_cast<size_t>(c.arg_count);
    case ArgRule::kMinimum: return n >= static_cast<size_t>(c.arg_count);
    case ArgRule::kAny: return true;
  }
  return true;
}

std::string arg_count_error(const CommandSpec& c) {
  const char* rule = c.arg_rule == ArgRule::kMinimum ? "a minimum of" : "exactly";
  return "berth: \"" + c.name + "\" requires " + rule + " " + std::to_string(c.arg_count) + " argument(s)";
}

int run_command(const CommandSpec& cmd, GlobalOptions g, const std::vector<std::string>& argv) {
  std::vector<FlagSpec> specs = cmd.flags;
  specs.push_back(FlagSpec{{"help", "h"}, FlagType::kBool, "show help", "", false});
  auto parsed = parse_flags(specs, argv, cmd.reorder);
  if (!parsed) {
    out("Incorrect Usage: " + parsed.error().message() + "\n\n" + command_help(cmd));
    return fail(parsed.error());
  }
  if (parsed->get_bool("help")) {
    out(command_help(cmd));
    return 0;
  }
  if (!arg_count_ok(cmd, parsed->args.size())) {
    out("Incorrect Usage.\n\n" + command_help(cmd));
    return fail(Error::usage(arg_count_error(cmd)));
  }
  Context ctx{std::move(g), std::move(*parsed), &cmd, argv};
  auto rc = cmd.handler(ctx);
  if (!rc) return fail(rc.error());
  return *rc;
}

// create, run and exec: the commands that put a process of ours into a container, and whose
// --preserve-fds and LISTEN_FDS reach it.
bool starts_a_container_process(const std::vector<std::string>& rest) {
  return !rest.empty() && (rest[0] == "create" || rest[0] == "run" || rest[0] == "exec");
}

int main_impl(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto globals = parse_flags(global_flags(), args, /*reorder=*/false);
  if (!globals) {
    out("Incorrect Usage. " + globals.error().message() + "\n\n" + app_help());
    return fail(globals.error());
  }
  // Before anything is opened (globals_from opens the log): which fds are the caller's
  // decides what --preserve-fds and LISTEN_FDS may hand to a container (util/caller_fds.h).
  // Only the commands that hand fds on pay for the listing; the flag parse opens nothing.
  if (starts_a_container_process(globals->args)) caller_fds::record();
  auto g = globals_from(*globals);
  if (!g) return fail(g.error());
  if (globals->get_bool("version")) {
    out(version_text());
    return 0;
  }
  std::vector<std::string>& rest = globals->args;
  if (rest.empty() || globals->get_bool("help")) {
    out(app_help());
    return 0;
  }
  std::string name = rest[0];
  std::vector<std::string> cmd_args(rest.begin() + 1, rest.end());
  if (name == "help" || name == "h") {
    if (cmd_args.empty()) {
      out(app_help());
      return 0;
    }
    const CommandSpec* c = find_command(cmd_args[0]);
    if (!c) {
      fail(Error::usage("No help topic for '" + cmd_args[0] + "'"));
      return 3;
    }
    out(command_help(*c));
    return 0;
  }
  const CommandSpec* cmd = find_command(name);
  if (!cmd) {
    fail(Error::usage("No help topic for '" + name + "'"));
    return 3;
  }
  // Commands that put a process of ours into a container must not expose a writable
  // runtime binary there (CVE-2019-5736).
  if (starts_a_container_process(rest)) seal_runtime_binary(argv);
  return run_command(*cmd, std::move(*g), cmd_args);
}

}  // namespace



}  // namespace berth::cli

// _exit, not a return: what is left to free is freed by the kernel at once, without the
// static destructors and the loader's finalisers walking (and, after a clone, copying) our
// pages. Everything we print goes out with write(2) as it is printed; stdio is flushed.
int main(int argc, char** argv) {
  int code = berth::cli::main_impl(argc, argv);
  std::fflush(nullptr);
  ::_exit(code);
}
