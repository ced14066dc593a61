// RootfsPlan execution, phases prepare → mounts → pivot (see apply.h); devices and masks are
// in devices.cc and masks.cc.
#include "linux/rootfs/apply.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "linux/mountinfo.h"
#include "linux/paths.h"

namespace berth::linux::rootfs {
namespace {

// Per-mount MS_* flags → MOUNT_ATTR_* (superblock flags such as sync have no per-mount form,
// and runc's bind remount ignores them too).
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
  else if (flags & MS_RELATIME) a |= MOUNT_ATTR_RELATIME;
  return a;
}

bool sets_atime(unsigned long flags) { return flags & (MS_NOATIME | MS_STRICTATIME | MS_RELATIME); }

}  // namespace

Status Applier::prepare() {
  // Nothing the container mounts may reach the host: make "/" a slave (or what
  // linux.rootfsPropagation asks) in this new mount namespace first.
  BERTH_TRY(sys_.mount("", "/", "", plan_.root_propagation, "").context("set root propagation"));
  if (plan_.root_propagation & MS_SHARED) {
    // pivot_root refuses a shared parent mount; make only that one private (as runc).
    BERTH_ASSIGN(auto mounts, read_mountinfo());
    if (const MountInfo* parent = mount_containing(mounts, plan_.rootfs); parent && parent->shared())
      BERTH_TRY(sys_.mount("", parent->mountpoint, "", MS_PRIVATE, "").context("make rootfs parent private"));
  }
  BERTH_TRY(sys_.mount(plan_.rootfs, plan_.rootfs, "", MS_BIND | MS_REC, "").context("bind rootfs"));
  BERTH_ASSIGN(root_, sys_.openat(AT_FDCWD, plan_.rootfs, O_PATH | O_DIRECTORY, 0).context("open rootfs"));
  for (const auto& e : plan_.exec_after_pivot) {
    BERTH_ASSIGN(UniqueFd fd, sys_.openat(AT_FDCWD, e.host_binary, O_PATH, 0));
    programs_.push_back(std::move(fd));
  }
  return ok();
}

Status Applier::mounts() {
  for (const auto& m : plan_.mounts) {
    Status st = m.kind == MountKind::kBind     ? mount_bind(m)
                : m.kind == MountKind::kCgroup ? mount_cgroup(m)
                                               : mount_filesystem(m);
    BERTH_TRY(std::move(st).with_context([&] { return "mount " + m.destination; }));
  }
  for (const auto& o : plan_.overlays) BERTH_TRY(mount_overlay(o).context("overlay " + o.path));
  return ok();
}

Status Applier::mount_filesystem(const MountStep& m) {
  bool special = m.type == "proc" || m.type == "sysfs";
  UniqueFd dest;
  if (special) {
    // /proc and /sys must be real directories inside the rootfs: no symlink anywhere on the
    // way (CVE-2019-16884, CVE-2023-27561).
    BERTH_TRY(make_in_root(sys_, root_.get(), m.destination, Leaf::kDirectory).context("create destination"));
    BERTH_ASSIGN(dest, sys_.openat2(root_.get(), m.destination.substr(1), O_PATH | O_DIRECTORY, 0,
                                    RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS));
  } else {
    BERTH_ASSIGN(dest, make_in_root(sys_, root_.get(), m.destination, Leaf::kDirectory));
  }
  unsigned long flags = m.opts.flags & ~(MS_BIND | MS_REC | MS_REMOUNT);
  BERTH_TRY(sys_.mount(m.source, fd_path(dest.get()), m.type, flags, m.opts.data_string()));
  if (special) {
    BERTH_ASSIGN(UniqueFd mounted, resolve_in_root(sys_, root_.get(), m.destination, O_PATH | O_DIRECTORY));
    struct statfs fs;
    long want = m.type == "proc" ? PROC_SUPER_MAGIC : SYSFS_MAGIC;
    if (::fstatfs(mounted.get(), &fs) < 0 || fs.f_type != want)
      return Error::generic("the mount at " + m.destination + " is not " + m.type);
  }
  return finish_mount(m);
}

Status Applier::mount_bind(const MountStep& m) {
  unsigned tree_flags = OPEN_TREE_CLONE | (m.opts.flags & MS_REC ? AT_RECURSIVE : 0);
  BERTH_ASSIGN(UniqueFd tree, sys_.open_tree(AT_FDCWD, m.source, tree_flags));
  // Flags from the options apply to the top mount only, as runc's bind remount does.
  mount_attr attr{};
  attr.attr_set = attrs_of(m.opts.flags);
  attr.attr_clr = attrs_of(m.opts.clear);
  if (sets_atime(m.opts.flags)) attr.attr_clr |= MOUNT_ATTR__ATIME;
  if (attr.attr_set || attr.attr_clr) BERTH_TRY(sys_.mount_setattr(tree.get(), "", AT_EMPTY_PATH, attr));
  BERTH_ASSIGN(UniqueFd dest, make_in_root(sys_, root_.get(), m.destination, m.file ? Leaf::kFile : Leaf::kDirectory));
  BERTH_TRY(sys_.move_mount(tree.get(), "", dest.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
  return finish_mount(m);
}

// Propagation changes and recursive attributes, on the mount now at the destination.
Status Applier::finish_mount(const MountStep& m) {
  if (m.opts.propagation.empty() && !m.opts.has_recursive) return ok();
  BERTH_ASSIGN(UniqueFd mnt, resolve_in_root(sys_, root_.get(), m.destination));
  for (unsigned long p : m.opts.propagation) BERTH_TRY(sys_.mount("", fd_path(mnt.get()), "", p, "").context("set propagation"));
  if (m.opts.has_recursive)
    BERTH_TRY(sys_.mount_setattr(mnt.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, m.opts.recursive));
  return ok();
}

Status Applier::mount_cgroup(const MountStep& m) {
  unsigned long flags = m.opts.flags & ~(MS_BIND | MS_REC | MS_REMOUNT | MS_RDONLY);
  bool ro = m.opts.flags & MS_RDONLY;
  BERTH_ASSIGN(UniqueFd dest, make_in_root(sys_, root_.get(), m.destination, Leaf::kDirectory));
  // A v2-only host: the container's cgroup is the whole mount.
  if (plan_.cgroups.size() == 1 && plan_.cgroups[0].name.empty()) {
    const auto& c = plan_.cgroups[0];
    if (plan_.new_cgroup_ns)
      BERTH_TRY(sys_.mount("cgroup2", fd_path(dest.get()), "cgroup2", flags | (ro ? MS_RDONLY : 0), ""));
    else
      BERTH_TRY(attach_clone(AT_FDCWD, c.host_dir, dest.get(), attrs_of(flags | (ro ? MS_RDONLY : 0)), false));
    return finish_mount(m);
  }
  // v1 and hybrid: a tmpfs holding one directory per hierarchy.
  BERTH_TRY(sys_.mount("tmpfs", fd_path(dest.get()), "tmpfs", flags, "mode=755"));
  BERTH_ASSIGN(UniqueFd top, resolve_in_root(sys_, root_.get(), m.destination, O_PATH | O_DIRECTORY));
  for (const auto& c : plan_.cgroups) {
    std::string sub = m.destination + "/" + c.name;
    BERTH_ASSIGN(UniqueFd subfd, make_in_root(sys_, root_.get(), sub, Leaf::kDirectory));
    if (plan_.new_cgroup_ns) {
      BERTH_TRY(sys_.mount("cgroup", fd_path(subfd.get()), c.fstype, flags | (ro ? MS_RDONLY : 0), c.options));
    } else {
      BERTH_TRY(attach_clone(AT_FDCWD, c.host_dir, subfd.get(), attrs_of(flags | (ro ? MS_RDONLY : 0)), false));
    }
  }
  for (const auto& l : plan_.cgroup_links) BERTH_TRY(make_link(l, top.get()));
  if (ro) {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    BERTH_TRY(sys_.mount_setattr(top.get(), "", AT_EMPTY_PATH, attr).context("make cgroup tmpfs read-only"));
  }
  return finish_mount(m);
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
  BERTH_TRY(sys_.fchdir(root_.get()));
  if (plan_.no_pivot) {
    // For a rootfs on ramfs, where pivot_root is impossible: move it over "/" and chroot.
    BERTH_TRY(sys_.mount(".", "/", "", MS_MOVE, "").context("move rootfs to /"));
    BERTH_TRY(sys_.chroot("."));
  } else {
    // pivot_root(".", ".") stacks the old root on top of the new one; detach it after making
    // it a slave so the unmount cannot propagate to the host.
    BERTH_TRY(sys_.pivot_root(".", "."));
    BERTH_TRY(sys_.mount("", ".", "", MS_SLAVE | MS_REC, "").context("make old root a slave"));
    BERTH_TRY(sys_.umount2(".", MNT_DETACH).context("detach old root"));
  }
  BERTH_TRY(sys_.chdir("/"));
  BERTH_ASSIGN(root_, sys_.openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY, 0));
  return ok();
}

}  // namespace berth::linux::rootfs
