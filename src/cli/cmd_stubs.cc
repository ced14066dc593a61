// Commands whose behaviour a later change builds: each exits 1 with
// "berth: <command>: not implemented yet".
#include "cli/commands.h"

namespace berth::cli {

Error not_implemented(const Context& ctx) {
  return Error(0, ErrorKind::kNotImplemented, "berth: " + ctx.command->name + ": not implemented yet");
}


}  // namespace berth::cli
