// RootfsPlan execution, phases prepare → pivot (see apply.h): identity in a user namespace,
// linux.rootfsPropagation, the rootfs bind, the cwd, pivot_root or (--no-pivot) MS_MOVE +
// chroot. The mounts phase is in mounts.cc and cgroup_mount.cc, devices in devices.cc,
// masks and the read-only finish in masks.cc.
#include "linux/rootfs/apply.h"

#include <fcntl.h>
#include <sys/mount.h>

#include "util/mountinfo.h"
#include "linux/paths.h"
#include "linux/selinux.h"
#include "util/strings.h"

namespace berth::linux::rootfs {

uint64_t attrs_of(unsigned long flags) {
  uint64_t a = 0;
  if (flags & MS_RDONLY) a |= MOUNT_ATTR_RDONLY;
  if (flags & MS_NOSUID) a |= MOUNT_ATTR_NOSUID;
  if (flags & MS_NODEV) a |= MOUNT_ATTR_NODEV;
  if (flags & MS_NOEXEC) a |= MOUNT_ATTR_NOEXEC;
  if (flags & MS_NODIRATIME) a |= MOUNT_ATTR_NODIRATIME;
  if (flags & 256 /* MS_NOSYMFOLLOW */) a |= MOUNT_ATTR_NOSYMFOLLOW;
  if (flags & MS_NOATIME) a |= MOUNT_ATTR_NOATIME;
  else if (flags & MS_STRICTATIME) a |= MOUNT_ATTR_STRICTATIME;
  // MS_RELATIME maps to MOUNT_ATTR_RELATIME, which is 0: the caller clears the atime field.
  return a;
}

Status Applier::prepare() {
  // linux.mountLabel: what the init creates in the rootfs from here on (mount points,
  // device nodes, links) gets the label, as the mounts' context= gives their contents.
  if (!plan_.mount_label.empty()) BERTH_TRY(set_fscreate_label(sys_, plan_.mount_label));
  // Nothing the container mounts may reach the host: make "/" a slave (or what
  // linux.rootfsPropagation asks) in this new mount namespace first.
  BERTH_TRY(sys_.mount("", "/", "", plan_.root_propagation, "").context("set root propagation"));
  if (!plan_.private_parent.empty())
    BERTH_TRY(sys_.mount("", plan_.private_parent, "", MS_PRIVATE, "").context("make rootfs parent private"));
  BERTH_TRY(sys_.mount(plan_.rootfs, plan_.rootfs, "", MS_BIND | MS_REC, "").context("bind rootfs"));
  BERTH_ASSIGN(root_, sys_.openat(AT_FDCWD, plan_.rootfs, O_PATH | O_DIRECTORY, 0).context("open rootfs"));
  for (const auto& e : plan_.exec_after_pivot) {
    BERTH_ASSIGN(UniqueFd fd, sys_.openat(AT_FDCWD, e.host_binary, O_PATH, 0));
    programs_.push_back(std::move(fd));
  }
  return ok();
}

Status Applier::attach_clone(int src_dirfd, const std::string& src_path, int dest_fd, uint64_t attr_set,
                             bool recursive) {
  unsigned flags = OPEN_TREE_CLONE | (recursive ? AT_RECURSIVE : 0) | (src_path.empty() ? AT_EMPTY_PATH : 0);
  BERTH_ASSIGN(UniqueFd tree, sys_.open_tree(src_dirfd, src_path, flags));
  if (attr_set) {
    mount_attr attr{};
    attr.attr_set = attr_set;
    BERTH_TRY(sys_.mount_setattr(tree.get(), "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), attr));
  }
  return sys_.move_mount(tree.get(), "", dest_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

Status Applier::create_cwd() {
  if (plan_.cwd.empty() || plan_.cwd == "/") return ok();
  return to_status(make_in_root(sys_, root_.get(), plan_.cwd, Leaf::kDirectory).context("create cwd " + plan_.cwd));
}

Status Applier::pivot() {
  if (plan_.no_pivot) {
    // For a rootfs on ramfs, where pivot_root is impossible: move it over "/" and chroot.
    BERTH_TRY(hide_host_proc_sys());
    BERTH_TRY(sys_.fchdir(root_.get()));
    BERTH_TRY(sys_.mount(".", "/", "", MS_MOVE, "").context("move rootfs to /"));
    BERTH_TRY(sys_.chroot("."));
  } else {
    // pivot_root(".", ".") stacks the old root on top of the new one; detach it after making
    // it a slave so the unmount cannot propagate to the host. The cwd stays on the new root,
    // which mount(2) on "." would act on (turning every container mount into a slave):
    // step onto the old root first, as runc does.
    BERTH_ASSIGN(UniqueFd old_root, sys_.openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY, 0));
    BERTH_TRY(sys_.fchdir(root_.get()));
    BERTH_TRY(sys_.pivot_root(".", "."));
    BERTH_TRY(sys_.fchdir(old_root.get()));
    BERTH_TRY(sys_.mount("", ".", "", MS_SLAVE | MS_REC, "").context("make old root a slave"));
    BERTH_TRY(sys_.umount2(".", MNT_DETACH).context("detach old root"));
  }
  // root_ still names the rootfs mount, which is "/" now: no need to open it again.
  BERTH_TRY(sys_.chdir("/"));
  // The rootfs bind was made under a parent that had to be private (pivot_root refuses a
  // shared one), so it came out private: give the container's "/" what was asked for.
  if (plan_.root_propagation_after)
    BERTH_TRY(sys_.mount("", "/", "", plan_.root_propagation_after, "").context("set linux.rootfsPropagation on /"));
  return ok();
}

// With chroot the host's procfs and sysfs stay in the mount namespace, and the kernel lets
// a process that can mount procfs do so only while a fully visible one exists there: an
// unmasked /proc could be mounted from inside. Unmount them first (covered by an empty
// tmpfs where unmounting is refused), as runc's msMoveRoot does.
Status Applier::hide_host_proc_sys() {
  BERTH_ASSIGN(std::string text, sys_.read_file("/proc/self/mountinfo"));
  BERTH_ASSIGN(auto mounts, parse_mountinfo(text));
  const std::string& rootfs = plan_.rootfs;
  for (const auto& m : mounts) {
    bool inside = m.mountpoint == rootfs || str::starts_with(m.mountpoint, rootfs + "/");
    if (m.root != "/" || (m.fstype != "proc" && m.fstype != "sysfs") || inside) continue;
    auto slave = sys_.mount("", m.mountpoint, "", MS_SLAVE | MS_REC, "");
    if (!slave) {
      if (slave.error().err() == ENOENT) continue;  // listed but unreachable by path
      return std::move(slave).context("hide " + m.mountpoint);
    }
    auto gone = sys_.umount2(m.mountpoint, MNT_DETACH);
    if (gone) continue;
    if (gone.error().err() != EINVAL && gone.error().err() != EPERM) return std::move(gone).context("hide " + m.mountpoint);
    BERTH_TRY(sys_.mount("tmpfs", m.mountpoint, "tmpfs", 0, "").context("cover " + m.mountpoint));
  }
  return ok();
}

}  // namespace berth::linux::rootfs
