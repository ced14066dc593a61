// The mounts phase (see apply.h): mounts[] of every type in order — binds (bind, rbind,
// idmap, ridmap, per-mount uidMappings/gidMappings via a prepared tree), proc and sysfs
// (checked to be what they claim, there, after mounting), tmpfs (tmpcopyup, the original
// directory mode), devpts, mqueue, overlay and any other type with its data — then the
// propagation options and recursive attributes (rro, rnosuid, ...) of each. "cgroup" mounts
// are in cgroup_mount.cc.
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "linux/paths.h"
#include "linux/rootfs/apply.h"
#include "util/strings.h"

namespace berth::linux::rootfs {
namespace {

bool sets_atime(unsigned long flags) { return flags & (MS_NOATIME | MS_STRICTATIME | MS_RELATIME); }

// The mode a fresh tmpfs root gets: its "mode=" option, or the kernel's 1777.
mode_t tmpfs_root_mode(const MountOptions& o) {
  for (const auto& d : o.data)
    if (str::starts_with(d, "mode="))
      if (auto v = str::parse_u64(d.substr(5), 8)) return static_cast<mode_t>(*v & 07777);
  return 01777;
}

}  // namespace

Status Applier::mounts() {
  for (const auto& m : plan_.mounts) {
    Status st = m.kind == MountKind::kBind     ? mount_bind(m)
                : m.kind == MountKind::kCgroup ? mount_cgroup(m)
                                               : mount_filesystem(m);
    // The kernel lets a user namespace's root mount proc only for a pid namespace that
    // namespace owns (and sysfs only for a network namespace it owns): say so, since
    // the bare EPERM is what a rootless user meets first.
    if (!st && st.error().err() == EPERM && plan_.user_ns && (m.type == "proc" || m.type == "sysfs"))
      return std::move(st)
          .context(std::string("in a user namespace the kernel mounts ") + m.type + " only for a " +
                   (m.type == "proc" ? "pid" : "network") + " namespace of the container's own (add one to " +
                   "linux.namespaces" + (m.type == "sysfs" ? ", or bind the host's /sys" : "") + ")")
          .context("mount " + m.destination);
    BERTH_TRY(std::move(st).with_context([&] { return "mount " + m.destination; }));
  }
  for (const auto& o : plan_.overlays) BERTH_TRY(mount_overlay(o).context("overlay " + o.path));
  return ok();
}

// A destination reached through a symlink of the image may land inside procfs, where the
// plan's check of the path as written saw nothing (CVE-2019-16884): refuse it there too.
Status Applier::check_destination(const MountStep& m, int dest_fd) {
  BERTH_ASSIGN(struct statfs fs, sys_.fstatfs(dest_fd));
  // What the config itself places inside /proc passed the plan's check; a destination that a
  // symlink of the image carried there was not written as /proc/... and is refused.
  if (fs.f_type != PROC_SUPER_MAGIC || m.destination == "/proc" || allowed_inside_proc(m)) return ok();
  return Error::generic(str::go_quote(m.destination) + " cannot be mounted because it is inside /proc");
}

// The mount just made at m.destination, opened again from the root (O_RDONLY: usable for
// fchmod, fstatfs, mount_setattr and as a copy target).
Result<UniqueFd> Applier::reopen_mount(const MountStep& m, bool no_symlinks) {
  return resolve_in_root(sys_, root_.get(), m.destination, O_RDONLY | O_DIRECTORY,
                         no_symlinks ? RESOLVE_NO_SYMLINKS : 0);
}

Status Applier::mount_filesystem(const MountStep& m) {
  bool special = m.type == "proc" || m.type == "sysfs";
  bool tmpfs = m.type == "tmpfs";
  UniqueFd dest;
  bool created = false;
  if (special) {
    // proc and sysfs go on an ordinary directory, with no symlink anywhere on the way
    // (CVE-2019-16884, CVE-2023-27561): a planted /proc symlink is an error, not a detour.
    auto found = resolve_in_root(sys_, root_.get(), m.destination, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
    if (!found && found.error().err() == ENOENT) {
      BERTH_TRY(to_status(make_in_root(sys_, root_.get(), m.destination, Leaf::kDirectory)));
      found = resolve_in_root(sys_, root_.get(), m.destination, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
    }
    if (!found) {
      int e = found.error().err();
      if (e == ELOOP || e == ENOTDIR)
        // runc's words, article-less: runc's own tests match them.
        return Error::sys(e, "filesystem " + str::go_quote(m.type) + " must be mounted on ordinary directory");
      return std::move(found).error();
    }
    dest = std::move(*found);
  } else {
    BERTH_ASSIGN(dest, make_in_root(sys_, root_.get(), m.destination, Leaf::kDirectory, 0755, &created));
    BERTH_TRY(check_destination(m, dest.get()));
  }
  // tmpcopyup reads the directory the tmpfs is about to cover: an fd opened now still sees
  // it afterwards (lookups from it do not cross the new mount).
  UniqueFd covered;
  if (tmpfs && m.opts.tmpcopyup && !created) {
    BERTH_ASSIGN(covered, sys_.openat(dest.get(), ".", O_RDONLY | O_DIRECTORY, 0));
  }
  mode_t old_mode = 0;
  if (tmpfs && !created) {
    BERTH_ASSIGN(struct stat st, sys_.fstat(dest.get()));
    old_mode = st.st_mode & 07777;
  }
  unsigned long flags = m.opts.flags & ~(MS_BIND | MS_REC);
  if (m.type == "proc" && proc_pidns_ >= 0)
    BERTH_TRY(mount_proc_for_pidns(m, flags, dest.get()));
  else
    BERTH_TRY(sys_.mount(m.source, fd_path(dest.get()), m.type, flags, m.opts.data_string()));
  bool chmod_needed = tmpfs && !created && old_mode != tmpfs_root_mode(m.opts);
  bool need_fd = special || m.defer_ro || covered || chmod_needed || !m.opts.propagation.empty() || m.opts.has_recursive;
  if (!need_fd) return ok();
  BERTH_ASSIGN(UniqueFd mnt, reopen_mount(m, special));
  if (special) {
    BERTH_ASSIGN(struct statfs fs, sys_.fstatfs(mnt.get()));
    long want = m.type == "proc" ? PROC_SUPER_MAGIC : SYSFS_MAGIC;
    if (static_cast<long>(fs.f_type) != want) return Error::generic("the mount at " + m.destination + " is not " + m.type);
  }
  if (tmpfs) {
    // runc gives the tmpfs the mode of the directory it covers.
    if (chmod_needed) BERTH_TRY(sys_.fchmodat(mnt.get(), "", old_mode));
    if (covered) BERTH_TRY(sys_.copy_tree(covered.get(), mnt.get()));
  }
  BERTH_TRY(finish_mount(m, mnt.get()));
  if (m.defer_ro) deferred_ro_.push_back(std::move(mnt));
  return ok();
}

Status Applier::mount_bind(const MountStep& m) {
  if (m.opts.flags & MS_REMOUNT) return remount_bind(m);
  mount_attr attr{};
  attr.attr_set = attrs_of(m.opts.flags);
  attr.attr_clr = attrs_of(m.opts.clear);
  if (sets_atime(m.opts.flags)) attr.attr_clr |= MOUNT_ATTR__ATIME;
  bool plain = !attr.attr_set && !attr.attr_clr && !m.opts.has_recursive && !m.prepared && m.opts.propagation.empty();
  if (plain) {
    // Nothing to change on the copy: one bind(2) onto the resolved destination.
    BERTH_ASSIGN(UniqueFd dest, make_in_root(sys_, root_.get(), m.destination, m.file ? Leaf::kFile : Leaf::kDirectory));
    BERTH_TRY(check_destination(m, dest.get()));
    return sys_.mount(m.source, fd_path(dest.get()), "", MS_BIND | (m.opts.flags & MS_REC), "");
  }
  UniqueFd own;
  int tree = -1;
  if (m.prepared && m.prepared->valid()) {
    tree = m.prepared->get();  // cut and idmapped by the runtime before the user namespace
  } else {
    unsigned tree_flags = OPEN_TREE_CLONE | (m.opts.flags & MS_REC ? AT_RECURSIVE : 0);
    BERTH_ASSIGN(own, sys_.open_tree(AT_FDCWD, m.source, tree_flags));
    tree = own.get();
  }
  // Flags from the options apply to the top mount only, as runc's bind remount does; the
  // source's other flags are kept (a nosuid source stays nosuid). They are set on the
  // detached copy: the mount is never visible without them.
  if (attr.attr_set || attr.attr_clr) BERTH_TRY(sys_.mount_setattr(tree, "", AT_EMPTY_PATH, attr));
  // Recursive attributes on the detached tree: one call, nothing to resolve afterwards.
  if (m.opts.has_recursive) BERTH_TRY(sys_.mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, m.opts.recursive));
  BERTH_ASSIGN(UniqueFd dest, make_in_root(sys_, root_.get(), m.destination, m.file ? Leaf::kFile : Leaf::kDirectory));
  BERTH_TRY(check_destination(m, dest.get()));
  BERTH_TRY(sys_.move_mount(tree, "", dest.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
  // The tree fd now names the mount at the destination.
  for (unsigned long p : m.opts.propagation)
    BERTH_TRY(sys_.mount("", fd_path(tree), "", p, "").context("set propagation"));
  // A tree cut by or for the runtime is a way back to a host mount: closed once placed, not
  // left open (close-on-exec) until the payload starts.
  if (m.prepared) m.prepared->reset();
  return ok();
}

// procfs shows the pid namespace its creator is active in, unless told otherwise: a
// process outside a joined pid namespace mounts that namespace's /proc with "pidns", so
// that no process enters the namespace before the rootfs is set up (docs/security.md).
Status Applier::mount_proc_for_pidns(const MountStep& m, unsigned long flags, int dest_fd) {
  BERTH_ASSIGN(UniqueFd fs, sys_.fsopen("proc", 0));
  BERTH_TRY(sys_.fsconfig(fs.get(), FSCONFIG_SET_FD, "pidns", std::to_string(proc_pidns_)));
  for (const auto& d : m.opts.data) {
    size_t eq = d.find('=');
    if (eq == std::string::npos) BERTH_TRY(sys_.fsconfig(fs.get(), FSCONFIG_SET_FLAG, d, ""));
    else BERTH_TRY(sys_.fsconfig(fs.get(), FSCONFIG_SET_STRING, d.substr(0, eq), d.substr(eq + 1)));
  }
  BERTH_TRY(sys_.fsconfig(fs.get(), FSCONFIG_CMD_CREATE, "", ""));
  BERTH_ASSIGN(UniqueFd mnt, sys_.fsmount(fs.get(), 0, static_cast<unsigned>(attrs_of(flags))));
  return sys_.move_mount(mnt.get(), "", dest_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

// "bind,remount,...": new flags for the mount already at the destination.
Status Applier::remount_bind(const MountStep& m) {
  BERTH_ASSIGN(UniqueFd mnt, resolve_in_root(sys_, root_.get(), m.destination));
  mount_attr attr{};
  attr.attr_set = attrs_of(m.opts.flags);
  attr.attr_clr = attrs_of(m.opts.clear) | (sets_atime(m.opts.flags) ? MOUNT_ATTR__ATIME : 0);
  BERTH_TRY(sys_.mount_setattr(mnt.get(), "", AT_EMPTY_PATH | (m.opts.flags & MS_REC ? AT_RECURSIVE : 0), attr));
  return finish_mount(m, mnt.get());
}

// Propagation changes and recursive attributes, on the mount now at the destination.
Status Applier::finish_mount(const MountStep& m, int mnt_fd) {
  for (unsigned long p : m.opts.propagation)
    BERTH_TRY(sys_.mount("", fd_path(mnt_fd), "", p, "").context("set propagation"));
  if (m.opts.has_recursive)
    BERTH_TRY(sys_.mount_setattr(mnt_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, m.opts.recursive));
  return ok();
}

}  // namespace berth::linux::rootfs
