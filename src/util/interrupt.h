// A foreground run's or exec's terminating signals before its container process runs.
// Those commands block every signal (a signalfd forwards them once the process runs); until
// then SIGTERM, SIGINT, SIGHUP and SIGQUIT stayed pending while berth waited on its init, a
// hook or the exec process, and only SIGKILL ended it, leaving the create half done. Armed,
// they end those waits with an error, and the create (or exec) is undone as on any error.
#pragma once

#include <signal.h>

#include "berth/result.h"

namespace berth::interrupt {

// The signals that end a wait (blocked by the caller already).
sigset_t terminating();
// From now on, until disarm, the waits below end when one of terminating() arrives. Owns a
// signalfd, for this process alone.
Status arm();
void disarm();
// The signalfd to poll beside what is waited for (-1 when not armed, or held).
int fd();
// Held around every clone (container/process/spawn.cc): a child, a copy or one sharing our
// memory while we sleep, never waits on our signalfd, and asks nothing of the kernel to
// know it (no getpid: the child may already run under the container's seccomp filter).
// Returns the previous value, for the caller to put back.
bool hold(bool held);
// After fd() polled readable: the signal taken, as the error that ends the wait.
Error interrupted();

}  // namespace berth::interrupt
