// include/berth/runtime.h: the CLI's process-level set-up, on the kernel-facing pieces that
// do it (linux/rootless, linux/exe_seal), so that cli/ includes only libberth's API.
#include "berth/runtime.h"

#include "linux/exe_seal.h"
#include "linux/rootless.h"

namespace berth {

std::string default_state_root() { return linux::default_state_root(linux::Caller::current()); }

void seal_runtime_binary(char** argv) { linux::ensure_sealed_exe(argv); }

}  // namespace berth
