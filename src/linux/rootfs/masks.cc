// The after-pivot phase: linux.readonlyPaths (recursive read-only binds onto themselves),
// linux.maskedPaths (files get the verified host /dev/null bound over them, directories a
// read-only tmpfs), then root.readonly (the root mount, not its submounts, as runc).
#include <fcntl.h>
#include <sys/mount.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "linux/paths.h"
#include "linux/rootfs/apply.h"

namespace berth::linux::rootfs {

Status Applier::after_pivot() {
  if (!plan_.masked_paths.empty()) BERTH_TRY(open_dev_null());
  for (const auto& p : plan_.readonly_paths) BERTH_TRY(make_readonly(p).context("readonly path " + p));
  for (const auto& p : plan_.masked_paths) BERTH_TRY(mask(p).context("masked path " + p));
  for (size_t i = 0; i < plan_.exec_after_pivot.size(); ++i) BERTH_TRY(run_after_pivot(i));
  if (plan_.readonly) {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    BERTH_TRY(sys_.mount_setattr(root_.get(), "", AT_EMPTY_PATH, attr).context("make root read-only"));
  }
  return ok();
}

// The /dev/null bound over masked files: the container's own, reached without following any
// symlink and checked to be the null device on the very fd that is cloned
// (CVE-2025-31133: a /dev/null swapped for a symlink must not redirect the mask).
Status Applier::open_dev_null() {
  BERTH_ASSIGN(dev_null_, sys_.openat2(root_.get(), "dev/null", O_PATH, 0,
                                       RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
                              .context("open /dev/null for masking"));
  struct stat st;
  if (::fstat(dev_null_.get(), &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
    return Error::generic("/dev/null in the container is not the null device (1:3)");
  return ok();
}

Status Applier::make_readonly(const std::string& path) {
  auto fd = resolve_in_root(sys_, root_.get(), path);
  if (!fd) return fd.error().err() == ENOENT ? ok() : Status(std::move(fd).error());
  return attach_clone(fd->get(), "", fd->get(), MOUNT_ATTR_RDONLY,
                      /*recursive=*/true);
}

Status Applier::mask(const std::string& path) {
  auto fd = resolve_in_root(sys_, root_.get(), path);
  if (!fd) return fd.error().err() == ENOENT ? ok() : Status(std::move(fd).error());
  struct stat st;
  if (::fstat(fd->get(), &st) < 0) return Error::sys(errno, "stat");
  if (S_ISDIR(st.st_mode))
    return sys_.mount("tmpfs", fd_path(fd->get()), "tmpfs", MS_RDONLY, "");
  return attach_clone(dev_null_.get(), "", fd->get(), 0, false);
}

}  // namespace berth::linux::rootfs
