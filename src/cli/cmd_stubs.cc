// Commands whose behaviour a later change builds: each exits 1 with
// "berth: <command>: not implemented yet".
#include "cli/commands.h"

namespace berth::cli {

Result<int> cmd_checkpoint(Context& ctx) { return not_implemented(ctx); }
Result<int> cmd_restore(Context& ctx) { return not_implemented(ctx); }
Result<int> cmd_pause(Context& ctx) { return not_implemented(ctx); }
Result<int> cmd_resume(Context& ctx) { return not_implemented(ctx); }
Result<int> cmd_ps(Context& ctx) { return not_implemented(ctx); }
Result<int> cmd_events(Context& ctx) { return not_implemented(ctx); }
Result<int> cmd_update(Context& ctx) { return not_implemented(ctx); }
Result<int> cmd_features(Context& ctx) { return not_implemented(ctx); }

}  // namespace berth::cli
