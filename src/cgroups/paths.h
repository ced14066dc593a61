// linux.cgroupsPath → the container's directory in each hierarchy, as runc's fs and fs2
// managers place it: an absolute path hangs from each hierarchy's mount; a relative one
// (and the empty path, which means "<id>") is joined to the caller's own cgroup in each v1
// hierarchy and in the hybrid unified one, and to the *parent* of the caller's cgroup on a
// pure v2 host (runc's fs2: the caller's own cgroup holds processes, so controllers could
// not be enabled below it).
#pragma once

#include <string>
#include <string_view>

#include "berth/result.h"
#include "cgroups/detect.h"

namespace berth::cgroups {

// runc's utils.CleanPath: lexical clean; a relative path cannot climb above its base.
std::string clean_path(std::string_view path);
// "slice:prefix:name", the systemd driver's form of cgroupsPath.
bool is_systemd_path(std::string_view path);

// The cleaned container path: absolute ("/a/b") or relative ("a/b", or the id when empty).
// Refuses a slice:prefix:name path (the systemd driver's form, which cgroups/systemd
// resolves to an absolute path before it gets here).
Result<std::string> container_path(const Host& host, std::string_view cgroups_path,
                                   std::string_view id, bool systemd);

// The container's path inside hierarchy `h`, relative to its mount ("/x/y").
std::string hierarchy_path(const Host& host, const Hierarchy& h, const std::string& path,
                           bool pure_v2);

}  // namespace berth::cgroups
