// File helpers: whole-file reads with a size cap, full writes, atomic replace (temp file +
// rename in the same directory, so a reader sees the old or the new content, never half).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "berth/result.h"

namespace berth::file {

// Reads the whole file (relative to dirfd, or absolute). Fails with EFBIG past max_bytes.
Result<std::string> read(int dirfd, const std::string& path, size_t max_bytes = 64u << 20);
Result<std::string> read(const std::string& path, size_t max_bytes = 64u << 20);
// A file someone else controls (from a rootfs, a bundle, an image directory): opened
// O_NONBLOCK (a FIFO or a device planted there never holds us), then refused unless fstat
// says a regular file of at most max_bytes; procfs files (size 0) are capped while read.
// `open_flags` adds O_NOFOLLOW where the caller wants no symlink at the last component.
Result<std::string> read_regular(int dirfd, const std::string& path, size_t max_bytes, int open_flags = 0);
// Reads everything from an open fd.
Result<std::string> read_fd(int fd, size_t max_bytes = 64u << 20);
Status write_all(int fd, std::string_view data);
// Writes name in dirfd atomically with the given mode; a writer killed midway leaves no
// temp file (see file.cc for the one window that remains when name already exists).
Status write_atomic(int dirfd, const std::string& name, std::string_view data, mode_t mode);
// Opens path (O_WRONLY|O_CLOEXEC|O_NOFOLLOW, no create) and writes data: for sysfs/cgroupfs.
Status write_existing(int dirfd, const std::string& path, std::string_view data);

}  // namespace berth::file
