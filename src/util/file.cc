// File helpers (see file.h).
#include "util/file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "util/unique_fd.h"

namespace berth::file {

Result<std::string> read_fd(int fd, size_t max_bytes) {
  std::string out;
  char buf[16384];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::sys(errno, "read");
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes)
      return Error::sys(EFBIG, "read: larger than " + std::to_string(max_bytes) + " bytes");
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::string> read(int dirfd, const std::string& path, size_t max_bytes) {
  UniqueFd fd(::openat(dirfd, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) return Error::sys(errno, "open " + path);
  return read_fd(fd.get(), max_bytes).context("read " + path);
}

Result<std::string> read_regular(int dirfd, const std::string& path, size_t max_bytes, int open_flags) {
  UniqueFd fd(::openat(dirfd, path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | open_flags));
  if (!fd) return Error::sys(errno, "open " + path);
  struct stat st;
  if (::fstat(fd.get(), &st) < 0) return Error::sys(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) return Error::generic("read " + path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return Error::sys(EFBIG, "read " + path + ": larger than " + std::to_string(max_bytes) + " bytes");
  return read_fd(fd.get(), max_bytes).context("read " + path);
}

Result<std::string> read(const std::string& path, size_t max_bytes) {
  return read(AT_FDCWD, path, max_bytes);
}

Status write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::sys(errno, "write");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return ok();
}

namespace {

// Puts the complete file at `tmp` in place of the existing `name`. An exchange and an
// unlink of the old content, rather than a rename over it: on ext4 a rename that replaces
// a file starts writeback of the new one (auto_da_alloc, for editors that never fsync),
// and the next unlink of that file (the next update, or `delete`) then waits for the disk
// write where /run is no tmpfs (docs/performance.md, "Why the code is shaped so"). The
// state is runtime state (tmpfs on most hosts), so nothing asked for that writeback.
// File systems without RENAME_EXCHANGE get the plain rename.
int replace_with(int dirfd, const std::string& tmp, const std::string& name) {
  if (::renameat2(dirfd, tmp.c_str(), dirfd, name.c_str(), RENAME_EXCHANGE) == 0) {
    // The old content; a leftover goes with the directory.
    if (::unlinkat(dirfd, tmp.c_str(), 0) == 0 || errno != EISDIR) return 0;
    // `name` was a directory, which a rename never replaces: swapped back, refused alike.
    ::renameat2(dirfd, tmp.c_str(), dirfd, name.c_str(), RENAME_EXCHANGE);
    return EISDIR;
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOENT) return errno;
  return ::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) == 0 ? 0 : errno;
}

// The classic way: a named temp file that replaces the target. A process killed before the
// replacement leaves the temp file behind; only used where O_TMPFILE is not supported.
Status write_via_temp_name(int dirfd, const std::string& name, std::string_view data, mode_t mode) {
  // The temp name carries the pid so concurrent writers never share a temp file.
  std::string tmp = "." + name + ".tmp" + std::to_string(::getpid());
  UniqueFd fd(::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!fd) return Error::sys(errno, "create " + tmp);
  if (auto st = write_all(fd.get(), data); !st) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    return std::move(st).context("write " + tmp);
  }
  if (::fchmod(fd.get(), mode) < 0) {
    int e = errno;
    ::unlinkat(dirfd, tmp.c_str(), 0);
    return Error::sys(e, "chmod " + tmp);
  }
  fd.reset();
  if (int e = replace_with(dirfd, tmp, name); e != 0) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    return Error::sys(e, "rename " + tmp + " to " + name);
  }
  return ok();
}

// Gives the unnamed file `fd` the name `name` in dirfd; returns 0 or an errno (EEXIST when
// the name is taken).
int link_unnamed(int fd, int dirfd, const std::string& name) {
  // Through /proc: linkat(AT_EMPTY_PATH) wants CAP_DAC_READ_SEARCH on older kernels.
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, self.c_str(), dirfd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  int e = errno;
  if (e != ENOENT) return e;
  // No /proc mounted here.
  return ::linkat(fd, "", dirfd, name.c_str(), AT_EMPTY_PATH) == 0 ? 0 : errno;
}

}  // namespace

// The data goes into an unnamed file (O_TMPFILE): a writer killed at any moment leaves
// nothing behind. The complete file then takes the target's name in one linkat when the
// target does not exist yet (pid files, cache entries: no window at all), else a temp
// name that replaces the target (state.json: its directory goes as a whole on delete).
Status write_atomic(int dirfd, const std::string& name, std::string_view data, mode_t mode) {
  UniqueFd fd(::openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode));
  if (!fd) {
    if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) return write_via_temp_name(dirfd, name, data, mode);
    return Error::sys(errno, "create a file to become " + name);
  }
  BERTH_TRY(write_all(fd.get(), data).context("write " + name));
  if (::fchmod(fd.get(), mode) < 0) return Error::sys(errno, "chmod " + name);
  int e = link_unnamed(fd.get(), dirfd, name);
  if (e == 0) return ok();
  if (e != EEXIST) return Error::sys(e, "create " + name);
  std::string tmp = "." + name + ".tmp" + std::to_string(::getpid());
  ::unlinkat(dirfd, tmp.c_str(), 0);  // ours, from a process that had our pid before
  if ((e = link_unnamed(fd.get(), dirfd, tmp)) != 0) return Error::sys(e, "create " + tmp);
  if ((e = replace_with(dirfd, tmp, name)) != 0) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    return Error::sys(e, "rename " + tmp + " to " + name);
  }
  return ok();
}

Status write_existing(int dirfd, const std::string& path, std::string_view data) {
  UniqueFd fd(::openat(dirfd, path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return Error::sys(errno, "open " + path);
  // One write(2): cgroup and sysfs files take a value per write call.
  ssize_t n;
  do n = ::write(fd.get(), data.data(), data.size()); while (n < 0 && errno == EINTR);
  if (n < 0) return Error::sys(errno, "write " + path);
  return ok();
}

}  // namespace berth::file
