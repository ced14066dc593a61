// `run`: create + start, and in the foreground supervise the container (see run.cc). The
// supervision is shared with a foreground `exec`.
#pragma once

#include <signal.h>

#include "berth/container.h"

namespace berth {

struct RunOptions {
  bool detach = false;
  bool keep = false;
  bool no_subreaper = false;
};

Result<int> run_container(const CreateOptions& options, const RunOptions& run);

// Blocks the signals a foreground runtime forwards (all but the synchronous ones) and
// stores the previous mask in *old. Called before the child exists, so that no signal is
// lost before the signalfd is read; the child resets its own mask.
sigset_t block_forwarded_signals(sigset_t* old);

// Foreground supervision of `c.pid`, our child: forwards the blocked signals (SIGWINCH
// resizes the pty), proxies stdin/stdout through c.console_master when there is one (stdin
// in raw mode while it is a terminal), reaps every child, and returns the exit status
// (128+signal when killed). `forwarded` is what block_forwarded_signals returned.
int supervise_foreground(const Created& c, const sigset_t& forwarded);

}  // namespace berth
