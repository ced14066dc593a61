// The devices phase: default nodes (/dev/null, zero, full, random, urandom, tty),
// linux.devices (type, major, minor, fileMode, uid, gid — mknod, or a bind of the host node
// in a user namespace where mknod is not allowed), /dev links (fd, stdin..., ptmx) and
// /dev/console bound from the pty by fd (CVE-2025-52565: never by a path the image controls).
#include <fcntl.h>
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

Status Applier::devices() {
  for (const auto& d : plan_.devices) BERTH_TRY(make_device(d).with_context([&] { return "device " + d.path; }));
  for (const auto& l : plan_.links) BERTH_TRY(make_link(l, root_.get()));
  for (const auto& f : plan_.files) BERTH_TRY(write_file(root_.get(), f).context("write " + f.path));
  return ok();
}

Status Applier::console(int peer_fd) {
  if (!plan_.console) return ok();
  BERTH_ASSIGN(UniqueFd dest, make_in_root(sys_, root_.get(), "/dev/console", Leaf::kFile));
  struct stat st;
  if (::fstat(dest.get(), &st) < 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
    return Error::generic("/dev/console in the rootfs is not a file");
  return attach_clone(peer_fd, "", dest.get(), 0, false).context("bind /dev/console");
}

Status Applier::make_device(const DeviceStep& d) {
  if (d.bind) {
    BERTH_ASSIGN(UniqueFd dest, make_in_root(sys_, root_.get(), d.path, Leaf::kFile));
    return attach_clone(AT_FDCWD, d.host_path, dest.get(), 0, false);
  }
  BERTH_ASSIGN(UniqueFd parent, make_in_root(sys_, root_.get(), dirname_of(d.path), Leaf::kDirectory));
  std::string name = basename_of(d.path);
  dev_t want = makedev(d.major, d.minor);
  auto made = sys_.mknodat(parent.get(), name, type_bits(d.type) | (d.mode & 0777), want);
  if (!made) {
    if (made.error().err() != EEXIST) return made;
    // The runtime-spec: an existing file that is not this device is an error.
    struct stat st;
    if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        (st.st_mode & S_IFMT) != type_bits(d.type) || (d.type != 'p' && st.st_rdev != want))
      return Error::generic("a different file already exists at " + d.path);
  }
  // mknod honours the umask; set the exact mode and owner afterwards.
  BERTH_TRY(sys_.fchmodat(parent.get(), name, d.mode & 07777));
  return sys_.fchownat(parent.get(), name, d.uid, d.gid, AT_SYMLINK_NOFOLLOW);
}

Status Applier::make_link(const LinkStep& l, int base_fd) {
  BERTH_ASSIGN(UniqueFd parent, make_in_root(sys_, base_fd, dirname_of(l.path), Leaf::kDirectory));
  auto st = sys_.symlinkat(l.target, parent.get(), basename_of(l.path));
  if (!st && st.error().err() != EEXIST) return std::move(st).context("symlink " + l.path);
  return ok();
}

}  // namespace berth::linux::rootfs
