// hooks.*: running one lifecycle hook — path, args, env, timeout, working directory — with
// the container state JSON on its stdin, its output captured for the error message
// (runc 1.2's wording with 1.1's inside: "error running prestart hook #N: error running hook:
// exit status 1, stdout: ..., stderr: ...").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::container {

// `cwd`: the hook's working directory ("" = ours). runc runs the runtime's hooks from the
// bundle directory (its own cwd after `create -b`); hooks with relative paths depend on it.
// `inherit`: the environment a hook without `env` gets (nullptr = ours; see
// spec::Hook::env for who gets what). `last_step`: called in the hook's process right
// before its execve (a startContainer hook's seccomp filter); a failure ends that process
// with status 127 and the error on its stderr.
Status run_hook(const spec::Hook& hook, const std::string& state_json, const std::string& cwd = "",
                const std::vector<std::string>* inherit = nullptr,
                const std::function<Status()>* last_step = nullptr);
// Runs each hook in order; the first failure stops and is returned, naming the hook kind.
Status run_hooks(const char* kind, const std::vector<spec::Hook>& hooks, const std::string& state_json,
                 const std::string& cwd = "", const std::vector<std::string>* inherit = nullptr,
                 const std::function<Status()>* last_step = nullptr);

}  // namespace berth::container
