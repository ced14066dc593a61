// Executable lookup with runc's error texts (see lookpath.h).
#include "linux/lookpath.h"

#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "util/strings.h"

namespace berth::linux {
namespace {

// 0 when `path` is an executable regular file for us, else an errno.
int check_exec(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) < 0) return errno;
  if (S_ISDIR(st.st_mode)) return EACCES;
  if (::access(path.c_str(), X_OK) < 0) return errno;
  return 0;
}

Error exec_error(const std::string& name, const std::string& what) {
  Error e(0, ErrorKind::kGeneric, "exec: " + str::go_quote(name) + ": " + what);
  return e;
}

}  // namespace

std::string env_value(const std::vector<std::string>& env, const std::string& name) {
  std::string prefix = name + "=";
  std::string out;
  for (const auto& e : env)
    if (str::starts_with(e, prefix)) out = e.substr(prefix.size());
  return out;
}

Result<std::string> look_path(const std::string& name, const std::string& path_env) {
  if (name.empty()) return exec_error(name, "executable file not found in $PATH");
  if (name.find('/') != std::string::npos) {
    int e = check_exec(name);
    if (e == ENOENT || e == ENOTDIR) return exec_error(name, "stat " + name + ": " + str::to_lower(strerrordesc_np(e)));
    if (e != 0) return exec_error(name, str::to_lower(strerrordesc_np(e)));
    return name;
  }
  for (const auto& dir : str::split(path_env, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (check_exec(candidate) == 0) return candidate;
  }
  return exec_error(name, "executable file not found in $PATH");
}

}  // namespace berth::linux
