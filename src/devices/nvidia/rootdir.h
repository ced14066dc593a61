// A directory tree read as a root: every path is resolved with openat2(RESOLVE_IN_ROOT), so a
// symlink in it (absolute or "../..") can never lead outside. Used for the driver root (host
// libraries whose links must stay in it) and for the container's rootfs, read by the parent
// to choose library directories (CVE-2024-0132 class: never resolve container paths on the host).
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "berth/result.h"
#include "util/unique_fd.h"

namespace berth::devices::nvidia {

class RootDir {
 public:
  static Result<RootDir> open(const std::string& path);

  const std::string& path() const { return path_; }
  // The host path of an in-root path ("/usr/lib/x" → "<root>/usr/lib/x").
  std::string host_path(const std::string& in_root) const;

  Result<UniqueFd> open_at(const std::string& path, int flags) const;
  // The path with every symlink resolved inside the root, as an in-root path.
  Result<std::string> resolve(const std::string& path) const;
  bool exists(const std::string& path) const;
  // stat of the resolved path; false when missing.
  bool stat(const std::string& path, struct stat* st) const;
  Result<std::string> read(const std::string& path, size_t max_bytes = 1u << 20) const;
  // Names in a directory (no "." and ".."), sorted; empty when it does not exist.
  std::vector<std::string> list(const std::string& dir) const;

 private:
  RootDir(UniqueFd fd, std::string path, std::string real) : fd_(std::move(fd)), path_(std::move(path)), real_(std::move(real)) {}
  UniqueFd fd_;
  std::string path_;  // as configured
  std::string real_;  // realpath, to turn /proc/self/fd links back into in-root paths
};

// Joins an in-root path to a root path without doubling slashes ("/" + "/x" = "/x").
std::string join_root(const std::string& root, const std::string& in_root);

}  // namespace berth::devices::nvidia
