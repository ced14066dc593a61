// The after-pivot phase: linux.readonlyPaths (recursive read-only binds onto themselves),
// linux.maskedPaths (files get the verified /dev/null bound over them, directories a
// read-only tmpfs), extension programs, then the read-only finish: tmpfs and /dev mounts
// that asked for "ro" and root.readonly (the root mount, not its submounts, as runc).
#include <fcntl.h>
#include <sys/mount.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "linux/paths.h"
#include "linux/selinux.h"
#include "linux/rootfs/apply.h"

namespace berth::linux::rootfs {

Status Applier::after_pivot() {
  if (!plan_.masked_paths.empty()) BERTH_TRY(open_dev_null());
  for (const auto& p : plan_.readonly_paths) BERTH_TRY(make_readonly(p).context("readonly path " + p));
  for (const auto& p : plan_.masked_paths) BERTH_TRY(mask(p).context("masked path " + p));
  for (size_t i = 0; i < plan_.exec_after_pivot.size(); ++i) {
    const ExecStep& e = plan_.exec_after_pivot[i];
    std::vector<std::string> argv = {e.host_binary};
    argv.insert(argv.end(), e.args.begin(), e.args.end());
    BERTH_TRY(sys_.run_program(programs_[i].get(), argv).context("run " + e.host_binary + " in the container"));
  }
  return finalize();
}

// The /dev/null bound over masked files: the container's own, reached without following any
// symlink and checked to be the null device on the very fd that is cloned (CVE-2025-31133:
// a /dev/null swapped for a symlink must not redirect the mask). Not a detached clone of
// the host's: cloning a detached mount needs Linux 6.15, and the mount is attached here.
Status Applier::open_dev_null() {
  auto fd = sys_.openat2(root_.get(), "dev/null", O_PATH, 0, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (!fd && fd.error().err() == ELOOP)
    return Error::generic("/dev/null in the container is a symlink, not the null device: refusing to mask with it");
  if (!fd) return std::move(fd).error().context("open /dev/null for masking");
  dev_null_ = std::move(*fd);
  BERTH_ASSIGN(struct stat st, sys_.fstat(dev_null_.get()));
  if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
    return Error::generic("/dev/null in the container is not the null device (1:3)");
  return ok();
}

Status Applier::make_readonly(const std::string& path) {
  auto fd = resolve_in_root(sys_, root_.get(), path);
  if (!fd) return fd.error().err() == ENOENT ? ok() : Status(std::move(fd).error());
  return attach_clone(fd->get(), "", fd->get(), MOUNT_ATTR_RDONLY, /*recursive=*/true);
}

Status Applier::mask(const std::string& path) {
  auto fd = resolve_in_root(sys_, root_.get(), path);
  if (!fd) return fd.error().err() == ENOENT ? ok() : Status(std::move(fd).error());
  BERTH_ASSIGN(struct stat st, sys_.fstat(fd->get()));
  if (S_ISDIR(st.st_mode) && proc_pidns_ >= 0) {
    // Outside the container's pid namespace its /proc has no thread-self for us to mount
    // through: a detached tmpfs moved onto the fd.
    BERTH_ASSIGN(UniqueFd tmp, sys_.fsopen("tmpfs", 0));
    if (!plan_.mount_label.empty()) BERTH_TRY(sys_.fsconfig(tmp.get(), FSCONFIG_SET_STRING, "context", plan_.mount_label));
    BERTH_TRY(sys_.fsconfig(tmp.get(), FSCONFIG_CMD_CREATE, "", ""));
    BERTH_ASSIGN(UniqueFd mnt, sys_.fsmount(tmp.get(), 0, MOUNT_ATTR_RDONLY));
    return sys_.move_mount(mnt.get(), "", fd->get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
  }
  // runc labels the masking tmpfs too (maskPath with the mount label).
  std::string data = plan_.mount_label.empty() ? "" : context_option(plan_.mount_label);
  if (S_ISDIR(st.st_mode)) return sys_.mount("tmpfs", fd_path(fd->get()), "tmpfs", MS_RDONLY, data);
  return attach_clone(dev_null_.get(), "", fd->get(), 0, false);
}

// The read-only finish, after everything that writes into the rootfs. /dev/console is made
// first when /dev or the root is about to become read-only: the console is bound over it
// afterwards.
Status Applier::finalize() {
  mount_attr ro{};
  ro.attr_set = MOUNT_ATTR_RDONLY;
  if (plan_.console && (!deferred_ro_.empty() || plan_.readonly)) BERTH_TRY(to_status(console_destination()));
  for (const auto& fd : deferred_ro_)
    BERTH_TRY(sys_.mount_setattr(fd.get(), "", AT_EMPTY_PATH, ro).context("make a mount read-only"));
  deferred_ro_.clear();
  if (plan_.readonly) BERTH_TRY(sys_.mount_setattr(root_.get(), "", AT_EMPTY_PATH, ro).context("make root read-only"));
  return ok();
}

}  // namespace berth::linux::rootfs
