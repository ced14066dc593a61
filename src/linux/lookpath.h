// process.args[0] → the file to execute, found as Go's exec.LookPath finds it (runc does
// the same), so that errors carry runc's wording, which Docker maps to exit codes:
//   exec: "x": executable file not found in $PATH      → 127
//   exec: "/x": stat /x: no such file or directory     → 127
//   exec: "/etc/passwd": permission denied             → 126
#pragma once

#include <string>
#include <vector>

#include "berth/result.h"

namespace berth::linux {

std::string env_value(const std::vector<std::string>& env, const std::string& name);
// Checked with access(X_OK) as the calling (already switched) user.
Result<std::string> look_path(const std::string& name, const std::string& path_env);

}  // namespace berth::linux
