// /proc/self/mountinfo parsing (used to find the mount holding a path, and by tests that
// compare the mount table before and after a container). Text in, no system call but the
// file's read: it lives in util because linux/rootfs and cgroups (host detection) both
// read mountinfo, and neither may include the other's folder.
#pragma once

#include <string>
#include <vector>

#include "berth/result.h"

namespace berth {

struct MountInfo {
  int id = 0, parent = 0;
  std::string root;        // root of the mount within its filesystem
  std::string mountpoint;  // unescaped
  std::string options;     // per-mount options
  std::string optional;    // "shared:1 master:2" ...
  std::string fstype;
  std::string source;
  std::string super_options;
  bool shared() const { return optional.find("shared:") != std::string::npos; }
};

Result<std::vector<MountInfo>> parse_mountinfo(std::string_view text);
// A field with the kernel's escapes (space, tab, newline and backslash as \ooo) decoded;
// a backslash not followed by three octal digits of a byte value stays as it is.
std::string unescape_mountinfo(std::string_view field);
Result<std::vector<MountInfo>> read_mountinfo(const std::string& path = "/proc/self/mountinfo");
// The mount whose mountpoint is the longest prefix of `path` (the last one mounted wins).
const MountInfo* mount_containing(const std::vector<MountInfo>& mounts, const std::string& path);

}  // namespace berth
