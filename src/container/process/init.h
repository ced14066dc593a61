// The container init: what the cloned child does, step by step, from namespaces to
// execve. Runs only in the child; reports errors to the parent over the sync socket and
// exits instead of returning them.
#pragma once

#include "container/process/init_config.h"

namespace berth::container::process {

// The child's entry point; returns the exit status for _exit (only on failure).
int init_main(InitConfig& cfg);

}  // namespace berth::container::process
