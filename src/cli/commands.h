// The command table: every runc command with its flags, argument rule and handler. main.cc
// dispatches through it; help.cc renders it the way urfave/cli renders runc's help.
#pragma once

#include <string>
#include <vector>

#include "berth/result.h"
#include "cli/flags.h"
#include "util/log.h"

namespace berth::cli {

struct GlobalOptions {
  std::string root;  // --root
  std::string log_path;
  log::Format log_format = log::Format::kText;
  bool debug = false;
  bool systemd_cgroup = false;
  std::string rootless = "auto";  // --rootless true|false|auto
  std::string criu = "criu";
};

struct CommandSpec;

struct Context {
  GlobalOptions global;
  ParsedFlags flags;
  const CommandSpec* command = nullptr;
  std::vector<std::string> raw_args;  // the command's argv, for exec/ps pass-through
};

// A handler returns the process exit code (0, or the container's status for run/exec).
using Handler = Result<int> (*)(Context&);

enum class ArgRule { kNone, kExactly, kMinimum, kAny };

struct CommandSpec {
  std::string name;
  std::string usage;       // one line: "create a container"
  std::string args_usage;  // "<container-id>"
  std::string description; // long text
  std::vector<FlagSpec> flags;
  ArgRule arg_rule = ArgRule::kAny;
  int arg_count = 0;
  bool reorder = true;  // urfave's flag reordering; off for exec and ps
  Handler handler = nullptr;
};

const std::vector<CommandSpec>& commands();
const CommandSpec* find_command(const std::string& name);
const std::vector<FlagSpec>& global_flags();

std::string app_help();
std::string command_help(const CommandSpec& c);
std::string version_text();

// Handlers, one file each (cmd_<name>.cc).
Result<int> cmd_checkpoint(Context&);
Result<int> cmd_create(Context&);
Result<int> cmd_delete(Context&);
Result<int> cmd_events(Context&);
Result<int> cmd_exec(Context&);
Result<int> cmd_features(Context&);
Result<int> cmd_kill(Context&);
Result<int> cmd_list(Context&);
Result<int> cmd_pause(Context&);
Result<int> cmd_ps(Context&);
Result<int> cmd_restore(Context&);
Result<int> cmd_resume(Context&);
Result<int> cmd_run(Context&);
Result<int> cmd_spec(Context&);
Result<int> cmd_start(Context&);
Result<int> cmd_state(Context&);
Result<int> cmd_update(Context&);

// "berth: <command>: not implemented yet" (exit 1), for commands a later change builds.
Error not_implemented(const Context& ctx);

}  // namespace berth::cli
