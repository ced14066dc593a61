// Environment lists ("NAME=value" entries) as config.json, `exec --env` and device
// modules build them; scrubbing this process's own environment.
#pragma once

#include <string>
#include <vector>

namespace berth::env {

// A name given more than once is set once, at its first position, with its last value, as
// runc's init does (os.Setenv per entry): getenv() returns the first match, so keeping both
// would undo the later setting. An entry without '=' is the name alone, merged like the others.
std::vector<std::string> merge(const std::vector<std::string>& entries);

// Zeroes every string of this process's environment (explicit_bzero, so that neither
// /proc/<pid>/environ nor a read of our memory finds them) and empties `environ`. For a
// process whose memory a container holding CAP_SYS_PTRACE may read (a copy of berth forked
// into the container's pid namespace) and that reads nothing of its environment any more:
// the caller's environment may hold an engine's credentials (docs/security.md). TZ is read
// first (tzset), so that log timestamps keep the caller's zone.
void scrub_own_environment();

}  // namespace berth::env
