// Help and version texts, laid out as urfave/cli lays out runc's.
#include <seccomp.h>

#include <algorithm>

#include "cli/commands.h"

namespace berth::cli {
namespace {

std::string flag_names(const FlagSpec& f) {
  std::string out;
  for (const auto& n : f.names) {
    if (!out.empty()) out += ", ";
    out += (n.size() == 1 ? "-" : "--") + n;
    if (f.type != FlagType::kBool) out += " value";
  }
  return out;
}

std::string flag_table(const std::vector<FlagSpec>& flags) {
  size_t width = 0;
  for (const auto& f : flags)
    if (!f.hidden) width = std::max(width, flag_names(f).size());
  std::string out;
  for (const auto& f : flags) {
    if (f.hidden) continue;
    std::string names = flag_names(f);
    out += "   " + names + std::string(width - names.size() + 2, ' ') + f.usage;
    if (!f.default_text.empty()) out += " (default: " + f.default_text + ")";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string version_text() {
  const struct scmp_version* v = seccomp_version();
  std::string sec = v ? std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->micro)
                      : "unknown";
  return std::string("berth version ") + BERTH_VERSION + "\ncommit: " + BERTH_COMMIT +
         "\nspec: 1.3.0\nlibseccomp: " + sec + "\n";
}

std::string app_help() {
  std::string out =
      "NAME:\n   berth - Open Container Initiative runtime\n\n"
      "berth is a low-level container runtime that implements the Open Container\n"
      "Initiative runtime specification, command for command a drop-in for runc, and\n"
      "sets up NVIDIA GPUs and RDMA devices itself while it prepares the root filesystem.\n\n"
      "Containers are configured using bundles: a directory holding a specification file\n"
      "named \"config.json\" and a root filesystem.\n\n"
      "To start a new instance of a container:\n\n"
      "    # berth run [ -b bundle ] <container-id>\n\n"
      "USAGE:\n   berth [global options] command [command options] [arguments...]\n\n"
      "VERSION:\n   " + version_text().substr(std::string("berth version ").size());
  out += "\nCOMMANDS:\n";
  size_t width = 0;
  for (const auto& c : commands()) width = std::max(width, c.name.size());
  width = std::max(width, std::string("help, h").size());
  for (const auto& c : commands())
    out += "   " + c.name + std::string(width - c.name.size() + 2, ' ') + c.usage + "\n";
  out += "   help, h" + std::string(width - 7 + 2, ' ') + "Shows a list of commands or help for one command\n";
  out += "\nGLOBAL OPTIONS:\n" + flag_table(global_flags());
  return out;
}

std::string command_help(const CommandSpec& c) {
  std::string out = "NAME:\n   berth " + c.name + " - " + c.usage + "\n\nUSAGE:\n   berth " + c.name;
  if (!c.flags.empty()) out += " [command options]";
  out += " " + (c.args_usage.empty() ? std::string("[arguments...]") : c.args_usage) + "\n";
  if (!c.description.empty()) out += "\nDESCRIPTION:\n   " + c.description + "\n";
  if (!c.flags.empty()) out += "\nOPTIONS:\n" + flag_table(c.flags);
  return out;
}

}  // namespace berth::cli
