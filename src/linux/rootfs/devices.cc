// The devices phase: default nodes (/dev/null, random, full, tty, zero, urandom),
// linux.devices (type, major, minor, fileMode, uid, gid — mknod, or a bind of the host node
// in a user namespace or where mknod is refused), /dev links (ptmx, fd, stdin..., core) and,
// after the pivot, /dev/console bound from the pty by fd (CVE-2025-52565: never through a
// path the image controls). Nodes of device modules are only checked when /dev is a bind.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "linux/paths.h"
#include "linux/rootfs/apply.h"

namespace berth::linux::rootfs {
namespace {

std::string dirname_of(const std::string& p) {
  auto pos = p.rfind('/');
  return pos == 0 || pos == std::string::npos ? "/" : p.substr(0, pos);
}
std::string basename_of(const std::string& p) { return p.substr(p.rfind('/') + 1); }

mode_t type_bits(char t) {
  switch (t) {
    case 'b': return S_IFBLK;
    case 'p': return S_IFIFO;
    default: return S_IFCHR;  // c and u
  }
}

}  // namespace

// Each directory of the phase ("/dev" above all) is resolved (or created) once.
Result<int> Applier::dir_fd(const std::string& dir) {
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) return it->second.get();
  BERTH_ASSIGN(UniqueFd fd, make_in_root(sys_, root_.get(), dir, Leaf::kDirectory));
  int raw = fd.get();
  dirs_.emplace(dir, std::move(fd));
  return raw;
}

Status Applier::devices() {
  if (!plan_.devices.empty()) {
    // mknod honours the umask: clear it so that every node gets its exact mode in one call.
    mode_t old = sys_.umask(0);
    Status st = ok();
    for (const auto& d : plan_.devices) {
      st = make_device(d).with_context([&] { return "device " + d.path; });
      if (!st) break;
    }
    sys_.umask(old);
    BERTH_TRY(std::move(st));
  }
  for (const auto& l : plan_.links) {
    BERTH_ASSIGN(int parent, dir_fd(dirname_of(l.path)));
    BERTH_TRY(make_link(l, parent, basename_of(l.path)));
  }
  for (const auto& f : plan_.files) BERTH_TRY(write_file(root_.get(), f).context("write " + f.path));
  dirs_.clear();
  return ok();
}

Status Applier::make_device(const DeviceStep& d) {
  if (d.existing) return check_existing_device(d);
  BERTH_ASSIGN(int parent, dir_fd(dirname_of(d.path)));
  std::string name = basename_of(d.path);
  if (d.bind) return bind_device(d, parent, name);
  dev_t want = makedev(d.major, d.minor);
  auto made = sys_.mknodat(parent, name, type_bits(d.type) | (d.mode & 07777), d.type == 'p' ? 0 : want);
  if (made) {
    if (d.uid == 0 && d.gid == 0) return ok();  // made by root already
    return sys_.fchownat(parent, name, d.uid, d.gid, AT_SYMLINK_NOFOLLOW);
  }
  // Where mknod is not allowed, use the host's node, as runc does.
  if (made.error().err() == EPERM) return bind_device(d, parent, name);
  if (made.error().err() != EEXIST) return made;
  // The runtime-spec: an existing file that is not this device is an error.
  BERTH_ASSIGN(struct stat st, sys_.fstatat(parent, name, AT_SYMLINK_NOFOLLOW));
  if ((st.st_mode & S_IFMT) != type_bits(d.type) || (d.type != 'p' && st.st_rdev != want))
    return Error::generic("a different file already exists at " + d.path);
  BERTH_TRY(sys_.fchmodat(parent, name, d.mode & 07777));
  return sys_.fchownat(parent, name, d.uid, d.gid, AT_SYMLINK_NOFOLLOW);
}

// Device modules' nodes when /dev is a bind mount (docker -v /dev:/dev): checked, never
// made, chmod'ed or chowned, since the bind's source is usually the host's own /dev.
Status Applier::check_existing_device(const DeviceStep& d) {
  auto fd = resolve_in_root(sys_, root_.get(), d.path, O_PATH | O_NOFOLLOW);
  std::string why = "/dev is a bind mount, where berth makes no device nodes, and ";
  if (!fd && fd.error().err() == ENOENT) return Error::generic(why + "it has no " + d.path);
  if (!fd) return std::move(fd).error();
  BERTH_ASSIGN(struct stat st, sys_.fstat(fd->get()));
  if ((st.st_mode & S_IFMT) != type_bits(d.type) || (d.type != 'p' && st.st_rdev != makedev(d.major, d.minor)))
    return Error::generic(why + "its " + d.path + " is not " + d.type + " " + std::to_string(d.major) + ":" +
                          std::to_string(d.minor));
  return ok();
}

// An empty file as the mount point, the host's node cloned onto it. move_mount does not
// follow a symlink the image might have put there.
Status Applier::bind_device(const DeviceStep& d, int parent, const std::string& name) {
  auto made = sys_.mknodat(parent, name, S_IFREG | 0644, 0);
  if (!made && made.error().err() != EEXIST) return made;
  BERTH_ASSIGN(UniqueFd tree, sys_.open_tree(AT_FDCWD, d.host_path, OPEN_TREE_CLONE));
  return sys_.move_mount(tree.get(), "", parent, name, MOVE_MOUNT_F_EMPTY_PATH).context("bind " + d.host_path);
}

Status Applier::make_link(const LinkStep& l, int parent, const std::string& name) {
  auto st = sys_.symlinkat(l.target, parent, name);
  if (st || st.error().err() != EEXIST) return std::move(st).context("symlink " + l.path);
  if (!l.replace) return ok();  // runc keeps what the image has
  BERTH_TRY(sys_.unlinkat(parent, name, 0).context("replace " + l.path));
  return sys_.symlinkat(l.target, parent, name).context("symlink " + l.path);
}

// /dev/console must be a plain file or a device node reached without any symlink: a link
// planted by the image would send the pty bind elsewhere (CVE-2025-52565).
Result<UniqueFd> Applier::console_destination() {
  constexpr uint64_t kStrict = RESOLVE_NO_SYMLINKS;
  auto found = resolve_in_root(sys_, root_.get(), "/dev/console", O_PATH, kStrict);
  if (!found && found.error().err() == ENOENT) {
    BERTH_ASSIGN(UniqueFd dev, resolve_in_root(sys_, root_.get(), "/dev", O_PATH | O_DIRECTORY, kStrict));
    auto made = sys_.mknodat(dev.get(), "console", S_IFREG | 0644, 0);
    if (!made && made.error().err() != EEXIST) return std::move(made).error();
    found = sys_.openat(dev.get(), "console", O_PATH | O_NOFOLLOW, 0);
  }
  if (!found) {
    if (found.error().err() == ELOOP) return Error::generic("/dev/console in the rootfs is a symlink");
    return std::move(found).error();
  }
  BERTH_ASSIGN(struct stat st, sys_.fstat(found->get()));
  if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) return Error::generic("/dev/console in the rootfs is not a file");
  return found;
}

Status Applier::console(int peer_fd) {
  if (!plan_.console) return ok();
  BERTH_ASSIGN(UniqueFd dest, console_destination());
  return attach_clone(peer_fd, "", dest.get(), 0, false).context("bind /dev/console");
}

}  // namespace berth::linux::rootfs
