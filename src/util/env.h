// Environment lists ("NAME=value" entries) as config.json, `exec --env` and device
// modules build them.
#pragma once

#include <string>
#include <vector>

namespace berth::env {

// A name given more than once is set once, at its first position, with its last value, as
// runc's init does (os.Setenv per entry): getenv() returns the first match, so keeping both
// would undo the later setting. An entry without '=' is the name alone, merged like the others.
std::vector<std::string> merge(const std::vector<std::string>& entries);

}  // namespace berth::env
