// mounts[] of type "cgroup"/"cgroup2" (see apply.h): on a cgroup v2 host the container's
// cgroup itself (mounted fresh in a cgroup namespace, bound where a user namespace may not); on v1 and hybrid hosts a tmpfs holding one directory per hierarchy (and the
// unified one), each the container's cgroup in it — bound from the host, or freshly mounted
// in a cgroup namespace — plus links for co-mounted controllers ("cpu" -> "cpu,cpuacct").
// The options' flags (ro, nosuid, ...) go on the whole tree with one recursive
// mount_setattr at the end.
#include <fcntl.h>
#include <sys/mount.h>

#include <utility>

#include "linux/paths.h"
#include "linux/selinux.h"
#include "linux/rootfs/apply.h"

namespace berth::linux::rootfs {
namespace {

constexpr unsigned long kDefaultFlags = MS_NOSUID | MS_NODEV | MS_NOEXEC;  // runc's for the tmpfs

mount_attr tree_attrs(const MountStep& m) {
  mount_attr attr{};
  attr.attr_set = attrs_of(m.opts.flags);
  attr.attr_clr = (m.opts.flags & (MS_NOATIME | MS_STRICTATIME | MS_RELATIME)) ? MOUNT_ATTR__ATIME : 0;
  return attr;
}

}  // namespace

Status Applier::mount_cgroup(const MountStep& m) {
  if (auto before = std::exchange(before_cgroup_mount_, nullptr)) BERTH_TRY(before());
  BERTH_ASSIGN(UniqueFd dest, make_in_root(sys_, root_.get(), m.destination, Leaf::kDirectory));
  BERTH_TRY(check_destination(m, dest.get()));
  if (plan_.cgroups.size() == 1 && plan_.cgroups[0].name.empty()) {
    // A cgroup v2 host: the container's cgroup is the whole mount.
    const CgroupDir& c = plan_.cgroups[0];
    if (plan_.new_cgroup_ns) {
      std::string source = m.source.empty() ? "cgroup2" : m.source;
      auto st = sys_.mount(source, fd_path(dest.get()), "cgroup2", m.opts.flags & ~(MS_BIND | MS_REC), m.opts.data_string());
      // From a user namespace the kernel may refuse the fresh mount (EPERM, or EBUSY for
      // the host's superblock, as in a systemd user session's delegated subtree): runc then
      // binds the container's cgroup, which is what the namespace shows as its root.
      bool bind_instead = !st && plan_.user_ns && (st.error().err() == EPERM || st.error().err() == EBUSY);
      if (!bind_instead) {
        BERTH_TRY(std::move(st));
        if (m.opts.propagation.empty()) return ok();
        BERTH_ASSIGN(UniqueFd mnt, reopen_mount(m, false));
        return finish_mount(m, mnt.get());
      }
    }
    BERTH_ASSIGN(UniqueFd tree, sys_.open_tree(AT_FDCWD, c.host_dir, OPEN_TREE_CLONE | AT_RECURSIVE));
    mount_attr attr = tree_attrs(m);
    if (attr.attr_set || attr.attr_clr) BERTH_TRY(sys_.mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, attr));
    BERTH_TRY(sys_.move_mount(tree.get(), "", dest.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
    return finish_mount(m, tree.get());
  }
  // v1 and hybrid: a tmpfs holding one directory per hierarchy (labelled, as runc's).
  std::string data = "mode=755";
  if (!plan_.mount_label.empty()) data += "," + context_option(plan_.mount_label);
  BERTH_TRY(sys_.mount("tmpfs", fd_path(dest.get()), "tmpfs", kDefaultFlags, data));
  BERTH_ASSIGN(UniqueFd top, reopen_mount(m, false));
  for (const auto& c : plan_.cgroups)
    BERTH_TRY(mount_cgroup_hierarchy(m, c, top.get()).context(c.name.empty() ? "cgroup" : c.name));
  for (const auto& l : plan_.cgroup_links) {
    auto st = sys_.symlinkat(l.target, top.get(), l.path.substr(l.path.rfind('/') + 1));
    if (!st && st.error().err() != EEXIST) return std::move(st).context("symlink " + l.path);
  }
  mount_attr attr = tree_attrs(m);
  if (attr.attr_set || attr.attr_clr)
    BERTH_TRY(sys_.mount_setattr(top.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, attr).context("cgroup mount flags"));
  return finish_mount(m, top.get());
}

Status Applier::mount_cgroup_hierarchy(const MountStep& m, const CgroupDir& c, int top_fd) {
  // A directory just made in a tmpfs just mounted: nothing of the image can be in the way.
  auto made = sys_.mkdirat(top_fd, c.name, 0755);
  if (!made && made.error().err() != EEXIST) return made;
  if (plan_.new_cgroup_ns) {
    // In a cgroup namespace a fresh mount shows the container's cgroup as its root. runc
    // names the source of the named systemd hierarchy "systemd".
    std::string source = c.options == "name=systemd" ? "systemd" : "cgroup";
    unsigned long flags = kDefaultFlags | (m.opts.flags & MS_RDONLY);
    return sys_.mount(source, fd_path(top_fd) + "/" + c.name, c.fstype, flags, c.options);
  }
  // One classic bind (the flags follow for the whole tree at once): the source is the
  // runtime's own cgroup path, the target a directory just made.
  return sys_.mount(c.host_dir, fd_path(top_fd) + "/" + c.name, "", MS_BIND | MS_REC, "");
}

}  // namespace berth::linux::rootfs
