// Paths inside a container's root, resolved without ever leaving it: openat2 with
// RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS from a verified root fd (CVE-2021-30465,
// CVE-2024-45310 classes). Missing components are created dirfd-relative, so a symlink
// planted or swapped by the image can redirect nothing outside the root.
#pragma once

#include <fcntl.h>

#include <string>
#include <vector>

#include "berth/result.h"
#include "linux/sys.h"

namespace berth::linux {

// Lexically cleans a container path ("a//b/../c" → "/a/c"); ".." never climbs above "/".
std::string clean_path(const std::string& path);
// A host path given on the command line (--bundle, --image-path) made absolute against the
// working directory and cleaned; "" is the working directory.
std::string absolute_path(const std::string& path);
// The components of a cleaned path ("/a/b" → {"a","b"}).
std::vector<std::string> path_components(const std::string& cleaned);

// Opens `path` inside the root (default: an O_PATH fd). extra_resolve adds RESOLVE_* flags
// (RESOLVE_NO_SYMLINKS where no symlink may be on the way at all).
Result<UniqueFd> resolve_in_root(Sys& sys, int rootfd, const std::string& path, int flags = O_PATH,
                                 uint64_t extra_resolve = 0);

enum class Leaf { kDirectory, kFile };
// Creates what is missing of `path` (directories `mode`; the leaf as a directory or an empty
// file) and returns an O_PATH fd of the leaf. An existing leaf is returned as it is,
// whatever its kind; the caller checks the kind where it matters. `created` tells whether
// the leaf was made here.
Result<UniqueFd> make_in_root(Sys& sys, int rootfd, const std::string& path, Leaf leaf, mode_t mode = 0755,
                              bool* created = nullptr);

}  // namespace berth::linux
