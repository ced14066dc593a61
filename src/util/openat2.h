// openat2(2) with the retry its manual asks for: a lookup scoped by RESOLVE_IN_ROOT or
// RESOLVE_BENEATH fails with EAGAIN when a mount or rename anywhere on the host raced with
// it (the kernel cannot then prove that ".." stayed inside). Shared by the syscall seam,
// the console's pty lookup and the GPU host root.
#pragma once

#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace berth::util {

// The fd, or -1 with errno set. A scoped lookup is tried up to 64 times while it says
// EAGAIN (a busy host's mounts), then its error stands.
inline int openat2_retrying(int dirfd, const char* path, const open_how& how) {
  bool scoped = how.resolve & (RESOLVE_IN_ROOT | RESOLVE_BENEATH);
  int fd = -1;
  for (int tries = 0; tries < 64; ++tries) {
    fd = static_cast<int>(::syscall(SYS_openat2, dirfd, path, &how, sizeof how));
    if (fd >= 0 || errno != EAGAIN || !scoped) break;
  }
  return fd;
}

}  // namespace berth::util
