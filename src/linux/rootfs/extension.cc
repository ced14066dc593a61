// Applying what device modules add to the plan: files written before pivot, read-only
// tmpfs overlays with files and host binds of directories or files (procfs masking; left
// out where the container's procfs has no such directory: nothing to hide there).
// Their host programs (ldconfig) run after the pivot in masks.cc, through
// Sys::run_program.
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "linux/paths.h"
#include "linux/rootfs/apply.h"
#include "util/log.h"

namespace berth::linux::rootfs {
namespace {

std::string parent_of(const std::string& p) {
  auto pos = p.rfind('/');
  return pos == 0 || pos == std::string::npos ? "/" : p.substr(0, pos);
}

}  // namespace

Status Applier::write_file(int base_fd, const FileStep& f) {
  BERTH_ASSIGN(UniqueFd dir, make_in_root(sys_, base_fd, parent_of(f.path), Leaf::kDirectory));
  std::string name = f.path.substr(f.path.rfind('/') + 1);
  if (f.replace) return replace_file(dir.get(), name, f);
  BERTH_ASSIGN(UniqueFd fd, sys_.openat(dir.get(), name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, f.mode));
  BERTH_TRY(sys_.write_fd(fd.get(), f.content));
  return sys_.fchmodat(fd.get(), "", f.mode);
}

// As ldconfig writes its cache: a new file under a temporary name, renamed over the path.
// The image may have anything at either name (a symlink out of the rootfs included): the
// temporary name is removed first and created exclusively, and rename replaces a symlink
// instead of following it.
Status Applier::replace_file(int dirfd, const std::string& name, const FileStep& f) {
  std::string tmp = name + ".berth~";
  if (auto st = sys_.unlinkat(dirfd, tmp, 0); !st && st.error().err() != ENOENT) return st;
  BERTH_ASSIGN(UniqueFd fd, sys_.openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, f.mode));
  BERTH_TRY(sys_.write_fd(fd.get(), f.content));
  BERTH_TRY(sys_.fchmodat(fd.get(), "", f.mode));
  return sys_.renameat(dirfd, tmp, dirfd, name);
}

// Where an overlay goes: made if missing (parents included), as any mount point — but never
// inside procfs. There the kernel makes the directories and refuses anyone else's, and an
// overlay only hides what the kernel shows: a directory missing from the container's procfs
// (/proc/driver/nvidia of a kernel without the NVIDIA driver) has nothing to hide, so the
// overlay is left out (nullopt), said in a warning, instead of failing create. That is the
// case when the host a device module read, through its configured procRoot, is not this
// kernel (the fake GPU host of the tests, under containerd's CRI too), or when the driver
// was unloaded since. On a host whose driver is loaded the directory exists and the overlay
// goes on as always; a tmpfs the spec put over part of /proc (the GPU integration tests'
// /proc/driver) is no procfs, and the directory is made in it as before.
Result<std::optional<UniqueFd>> Applier::overlay_target(const std::string& path) {
  auto found = resolve_in_root(sys_, root_.get(), path, O_PATH | O_DIRECTORY);
  if (found) return std::optional<UniqueFd>(std::move(*found));
  if (found.error().err() == ENOENT) {
    // The nearest existing ancestor decides whether the missing part would be in procfs.
    for (std::string up = parent_of(path);; up = parent_of(up)) {
      auto anc = resolve_in_root(sys_, root_.get(), up, O_PATH | O_DIRECTORY);
      if (anc) {
        BERTH_ASSIGN(struct statfs fs, sys_.fstatfs(anc->get()));
        if (fs.f_type == PROC_SUPER_MAGIC) return std::optional<UniqueFd>();
        break;
      }
      if (anc.error().err() != ENOENT || up == "/") break;
    }
  }
  BERTH_ASSIGN(UniqueFd made, make_in_root(sys_, root_.get(), path, Leaf::kDirectory));
  return std::optional<UniqueFd>(std::move(made));
}

Status Applier::mount_overlay(const OverlayStep& o) {
  BERTH_ASSIGN(std::optional<UniqueFd> target, overlay_target(o.path));
  if (!target) {
    log::warn(o.path + " is not in the container's procfs (this kernel has no such directory): nothing to mask, "
              "its read-only overlay is left out");
    return ok();
  }
  UniqueFd dest = std::move(*target);
  BERTH_TRY(sys_.mount("tmpfs", fd_path(dest.get()), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555"));
  BERTH_ASSIGN(UniqueFd top, resolve_in_root(sys_, root_.get(), o.path, O_PATH | O_DIRECTORY));
  for (const auto& f : o.files) {
    FileStep inside = f;
    inside.path = "/" + f.path;
    BERTH_TRY(write_file(top.get(), inside));
  }
  for (const auto& [host, rel] : o.binds) {
    // The mount point must have the source's kind: a MIG device's GI and CI `access` are
    // files, and a file cannot be bound onto a directory (EINVAL).
    BERTH_ASSIGN(struct stat st, sys_.fstatat(AT_FDCWD, host, 0).context("bind " + host));
    Leaf leaf = S_ISDIR(st.st_mode) ? Leaf::kDirectory : Leaf::kFile;
    BERTH_ASSIGN(UniqueFd at, make_in_root(sys_, top.get(), "/" + rel, leaf));
    BERTH_TRY(attach_clone(AT_FDCWD, host, at.get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false)
                  .context("bind " + host));
  }
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY;
  return sys_.mount_setattr(top.get(), "", AT_EMPTY_PATH, attr);
}

}  // namespace berth::linux::rootfs
