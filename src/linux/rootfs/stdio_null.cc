// The init's stdio moved from the host's /dev/null to the container's (see stdio_null.h).
#include "linux/rootfs/stdio_null.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "linux/sys.h"

namespace berth::linux::rootfs {
namespace {

bool is_null_device(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3); }

}  // namespace

Status reopen_stdio_dev_null(Sys& sys) {
  // The container's /dev is ours (made by the devices phase), but its node is reached
  // without following links all the same: a swapped-in symlink must not hand the init a
  // host file as its stdio.
  auto null_fd = sys.openat2(AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC, 0,
                             RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (!null_fd) return ok();
  auto null_st = sys.fstat(null_fd->get());
  if (!null_st || !is_null_device(*null_st)) return ok();
  for (int fd = 0; fd < 3; ++fd) {
    auto st = sys.fstat(fd);
    // Same device number, another inode: the host's node. Ours is left as it is.
    if (!st || !is_null_device(*st) || (st->st_dev == null_st->st_dev && st->st_ino == null_st->st_ino)) continue;
    BERTH_TRY(sys.dup_onto(null_fd->get(), fd).context("reopen fd " + std::to_string(fd) + " on the container's /dev/null"));
  }
  return ok();
}

}  // namespace berth::linux::rootfs
