// libberth's process-level set-up, asked for by the CLI before it runs a command: the state
// root when --root is not given, and the sealed runtime binary (CVE-2019-5736).
#pragma once

#include <string>

namespace berth {

// The state root without --root: $XDG_RUNTIME_DIR/berth for a rootless caller, /run/berth
// otherwise (runc's rule; docs/rootless.md).
std::string default_state_root();
// For the commands that put a process of berth's into a container (create, run, exec): unless
// the binary is on a read-only mount, re-executes from a detached read-only clone of it, or
// returns where that is impossible (docs/security.md, "The install seal").
void seal_runtime_binary(char** argv);

}  // namespace berth
