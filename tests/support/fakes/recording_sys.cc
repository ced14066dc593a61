// RecordingSys (see recording_sys.h): one method per Sys call — log line, injected
// failure, effect on the model.
#include "support/fakes/recording_sys.h"

#include <fcntl.h>
#include <sched.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>

#include "linux/rootfs/plan.h"
#include "util/strings.h"

namespace berth::test {
namespace {

std::string parent(const std::string& p) {
  auto pos = p.rfind('/');
  return pos == 0 || pos == std::string::npos ? "/" : p.substr(0, pos);
}

std::string bits(uint64_t v, std::initializer_list<std::pair<uint64_t, const char*>> names) {
  std::vector<std::string> parts;
  for (const auto& [bit, name] : names)
    if (bit && (v & bit) == bit) {
      parts.push_back(name);
      v &= ~bit;
    }
  if (v) parts.push_back(octal(static_cast<unsigned>(v)));
  return parts.empty() ? "0" : str::join(parts, "|");
}

std::string open_flags(uint64_t f) {
  f &= ~static_cast<uint64_t>(O_CLOEXEC);
  std::string acc = (f & O_PATH) ? "" : (f & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : (f & O_ACCMODE) == O_RDWR ? "O_RDWR" : "O_RDONLY";
  std::string rest = bits(f & ~static_cast<uint64_t>(O_ACCMODE), {{O_PATH, "O_PATH"}, {O_DIRECTORY, "O_DIRECTORY"},
                                                                {O_NOFOLLOW, "O_NOFOLLOW"}, {O_CREAT, "O_CREAT"},
                                                                {O_EXCL, "O_EXCL"}, {O_TRUNC, "O_TRUNC"}});
  if (acc.empty()) return rest;
  return rest == "0" ? acc : acc + "|" + rest;
}

std::string resolve_flags(uint64_t r) {
  return bits(r, {{RESOLVE_IN_ROOT, "RESOLVE_IN_ROOT"}, {RESOLVE_BENEATH, "RESOLVE_BENEATH"},
                  {RESOLVE_NO_SYMLINKS, "RESOLVE_NO_SYMLINKS"}, {RESOLVE_NO_MAGICLINKS, "RESOLVE_NO_MAGICLINKS"},
                  {RESOLVE_NO_XDEV, "RESOLVE_NO_XDEV"}});
}

std::string at_flags(uint64_t f) {
  return bits(f & ~static_cast<uint64_t>(OPEN_TREE_CLOEXEC),
              {{OPEN_TREE_CLONE, "OPEN_TREE_CLONE"}, {AT_RECURSIVE, "AT_RECURSIVE"}, {AT_EMPTY_PATH, "AT_EMPTY_PATH"},
               {AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"}, {AT_REMOVEDIR, "AT_REMOVEDIR"}});
}

std::string move_flags(unsigned f) {
  return bits(f, {{MOVE_MOUNT_F_EMPTY_PATH, "F_EMPTY_PATH"}, {MOVE_MOUNT_T_EMPTY_PATH, "T_EMPTY_PATH"},
                  {MOVE_MOUNT_F_SYMLINKS, "F_SYMLINKS"}, {MOVE_MOUNT_T_SYMLINKS, "T_SYMLINKS"}});
}

std::string node_text(mode_t mode, dev_t dev) {
  mode_t t = mode & S_IFMT;
  std::string kind = t == S_IFCHR ? "chr" : t == S_IFBLK ? "blk" : t == S_IFIFO ? "fifo" : t == S_IFREG ? "reg" : "?";
  std::string out = kind + " " + octal(mode & 07777);
  if (t == S_IFCHR || t == S_IFBLK) out += " " + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  return out;
}

// The atime field cleared (MOUNT_ATTR__ATIME) shows as "atime".
std::string clear_text(uint64_t clr) {
  std::string rest = linux::rootfs::attr_text(clr & ~MOUNT_ATTR__ATIME);
  if (!(clr & MOUNT_ATTR__ATIME)) return rest;
  return rest == "0" ? "atime" : "atime|" + rest;
}

std::string ns_flags(unsigned f) {
  return bits(f, {{CLONE_NEWUSER, "CLONE_NEWUSER"}, {CLONE_NEWNS, "CLONE_NEWNS"}, {CLONE_NEWPID, "CLONE_NEWPID"},
                  {CLONE_NEWNET, "CLONE_NEWNET"}, {CLONE_NEWIPC, "CLONE_NEWIPC"}, {CLONE_NEWUTS, "CLONE_NEWUTS"},
                  {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}, {CLONE_NEWTIME, "CLONE_NEWTIME"}});
}

char kind_of(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFCHR: return 'c';
    case S_IFBLK: return 'b';
    case S_IFIFO: return 'p';
    default: return 'f';
  }
}

}  // namespace

Result<UniqueFd> RecordingSys::openat(int dirfd, const std::string& path, int flags, mode_t mode) {
  int err = begin("openat");
  std::string line = "openat(" + dir_text(dirfd) + ", " + q(path) + ", " + open_flags(static_cast<uint64_t>(flags)) +
                     ((flags & O_CREAT) ? ", " + octal(mode) : "") + ")";
  std::string p = host_path(dirfd, path);
  if (!err) {
    auto it = nodes_.find(p);
    if (it == nodes_.end() && !permissive(p)) {
      if (flags & O_CREAT) err = create(dirfd, path, Node{'f', mode & ~umask_, 0, "", ""});
      else err = ENOENT;
    } else if (it != nodes_.end()) {
      if ((flags & O_CREAT) && (flags & O_EXCL)) err = EEXIST;
      else if (it->second.kind == 'l' && (flags & O_NOFOLLOW) && !(flags & O_PATH)) err = ELOOP;
      else if ((flags & O_DIRECTORY) && it->second.kind != 'd') err = ENOTDIR;
      else if (it->second.kind == 'l' && !(flags & O_NOFOLLOW)) err = walk("/", parent(p), it->second.target, true, false, &p);
    }
  }
  return new_fd(line, err, p);
}

Result<UniqueFd> RecordingSys::openat2(int dirfd, const std::string& path, uint64_t flags, uint64_t mode,
                                       uint64_t resolve) {
  int err = begin("openat2");
  std::string line = "openat2(" + dir_text(dirfd) + ", " + q(path) + ", " + open_flags(flags) + ", " + resolve_flags(resolve) + ")";
  (void)mode;
  std::string base = path_of(dirfd), out;
  if (!err) {
    std::string root = (resolve & (RESOLVE_IN_ROOT | RESOLVE_BENEATH)) ? base : (root_.empty() ? "/" : root_);
    err = walk(root, base, path, !(flags & O_NOFOLLOW), resolve & RESOLVE_NO_SYMLINKS, &out);
    if (!err && (flags & O_DIRECTORY) && !permissive(out) && nodes_.at(out).kind != 'd') err = ENOTDIR;
  }
  return new_fd(line, err, out);
}

Status RecordingSys::mkdirat(int dirfd, const std::string& path, mode_t mode) {
  int err = begin("mkdirat");
  if (!err) err = create(dirfd, path, Node{'d', mode & ~umask_, 0, "", ""});
  return finish("mkdirat(" + dir_text(dirfd) + ", " + q(path) + ", " + octal(mode) + ")", err);
}

Status RecordingSys::mknodat(int dirfd, const std::string& path, mode_t mode, dev_t dev) {
  int err = begin("mknodat");
  if (!err) err = create(dirfd, path, Node{kind_of(mode), mode & 07777 & ~umask_, dev, "", ""});
  return finish("mknodat(" + dir_text(dirfd) + ", " + q(path) + ", " + node_text(mode, dev) + ")", err);
}

Status RecordingSys::symlinkat(const std::string& target, int dirfd, const std::string& path) {
  int err = begin("symlinkat");
  if (!err) err = create(dirfd, path, Node{'l', 0777, 0, target, ""});
  return finish("symlinkat(" + q(target) + ", " + dir_text(dirfd) + ", " + q(path) + ")", err);
}

Status RecordingSys::unlinkat(int dirfd, const std::string& path, int flags) {
  int err = begin("unlinkat");
  if (!err && nodes_.erase(host_path(dirfd, path)) == 0) err = ENOENT;
  return finish("unlinkat(" + dir_text(dirfd) + ", " + q(path) + ", " + at_flags(static_cast<uint64_t>(flags)) + ")", err);
}

Status RecordingSys::renameat(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to) {
  int err = begin("renameat");
  if (!err) {
    auto it = nodes_.find(host_path(from_dirfd, from));
    if (it == nodes_.end()) {
      err = ENOENT;
    } else {
      auto node = it->second;
      nodes_.erase(it);
      nodes_[host_path(to_dirfd, to)] = node;
    }
  }
  return finish("renameat(" + dir_text(from_dirfd) + ", " + q(from) + ", " + dir_text(to_dirfd) + ", " + q(to) + ")", err);
}

Status RecordingSys::fchownat(int dirfd, const std::string& path, uid_t uid, gid_t gid, int flags) {
  int err = begin("fchownat");
  return finish("fchownat(" + dir_text(dirfd) + ", " + q(path) + ", " + std::to_string(uid) + ", " + std::to_string(gid) +
                    ", " + at_flags(static_cast<uint64_t>(flags)) + ")",
                err);
}

Status RecordingSys::fchmodat(int dirfd, const std::string& path, mode_t mode) {
  int err = begin("fchmodat");
  if (!err)
    if (auto it = nodes_.find(host_path(dirfd, path)); it != nodes_.end()) it->second.mode = mode & 07777;
  return finish("fchmodat(" + dir_text(dirfd) + ", " + q(path) + ", " + octal(mode) + ")", err);
}

Status RecordingSys::write_fd(int fd, std::string_view data) {
  int err = begin("write_fd");
  return finish("write_fd(" + show_fd(fd) + ", " + q(std::string(data)) + ")", err);
}

Status RecordingSys::copy_tree(int from_dirfd, int to_dirfd) {
  int err = begin("copy_tree");
  return finish("copy_tree(" + show_fd(from_dirfd) + ", " + show_fd(to_dirfd) + ")", err);
}

Result<struct stat> RecordingSys::fstatat(int dirfd, const std::string& path, int flags) {
  int err = begin("fstatat");
  std::string line = "fstatat(" + dir_text(dirfd) + ", " + q(path) + ", " + at_flags(static_cast<uint64_t>(flags)) + ")";
  struct stat st {};
  auto it = nodes_.find(host_path(dirfd, path));
  if (!err && it == nodes_.end()) err = ENOENT;
  std::string shown;
  if (!err) {
    const Node& n = it->second;
    st.st_mode = (n.kind == 'd' ? S_IFDIR : n.kind == 'l' ? S_IFLNK : n.kind == 'c' ? S_IFCHR : n.kind == 'b' ? S_IFBLK
                  : n.kind == 'p' ? S_IFIFO : S_IFREG) | n.mode;
    st.st_rdev = n.rdev;
    shown = std::string(1, n.kind) + " " + octal(n.mode);
  }
  return finish_value(line, err, st, shown);
}

Result<std::string> RecordingSys::read_file(const std::string& path) {
  int err = begin("read_file");
  auto it = nodes_.find(host_path(AT_FDCWD, path));
  if (!err && (it == nodes_.end() || it->second.kind != 'f')) err = ENOENT;
  std::string content = err ? "" : it->second.content;
  return finish_value("read_file(" + q(path) + ")", err, content, std::to_string(content.size()) + " bytes");
}

Status RecordingSys::mount(const std::string& source, const std::string& target, const std::string& fstype,
                           unsigned long flags, const std::string& data) {
  int err = begin("mount");
  std::string line = "mount(" + q(source) + ", " + q(target) + ", " + q(fstype) + ", " +
                     linux::rootfs::flags_text(flags) + ", " + q(data) + ")";
  if (!err) {
    std::string t = host_path(AT_FDCWD, target);
    if (flags & MS_MOVE) {
      std::string from = host_path(AT_FDCWD, source);
      if (mounts_.count(from)) mounts_[t] = mounts_[from];
    } else if (flags & MS_BIND) {
      mounts_[t] = fstype_at(host_path(AT_FDCWD, source));
    } else if (!fstype.empty() && !(flags & MS_REMOUNT)) {
      mounts_[t] = fstype;
    }
  }
  return finish(line, err);
}

Status RecordingSys::umount2(const std::string& target, int flags) {
  int err = begin("umount2");
  return finish("umount2(" + q(target) + ", " + (flags & MNT_DETACH ? "MNT_DETACH" : std::to_string(flags)) + ")", err);
}

Result<UniqueFd> RecordingSys::open_tree(int dirfd, const std::string& path, unsigned flags) {
  int err = begin("open_tree");
  std::string line = "open_tree(" + dir_text(dirfd) + ", " + q(path) + ", " + at_flags(flags) + ")";
  return new_fd(line, err, host_path(dirfd, path));
}

Status RecordingSys::move_mount(int from_dirfd, const std::string& from_path, int to_dirfd, const std::string& to_path,
                                unsigned flags) {
  int err = begin("move_mount");
  std::string line = "move_mount(" + show_fd(from_dirfd) + ", " + q(from_path) + ", " + dir_text(to_dirfd) + ", " +
                     q(to_path) + ", " + move_flags(flags) + ")";
  if (!err) {
    std::string from = host_path(from_dirfd, from_path), to = host_path(to_dirfd, to_path);
    auto it = nodes_.find(to);
    if (it != nodes_.end() && it->second.kind == 'l') err = ENOTDIR;  // never onto a symlink
    else if (it == nodes_.end() && !permissive(to)) err = ENOENT;
    else mounts_[to] = fstype_at(from);
    // The moved tree's fd now names the mount at the destination.
    if (!err && from_path.empty()) fds_[from_dirfd] = to;
  }
  return finish(line, err);
}

Status RecordingSys::mount_setattr(int dirfd, const std::string& path, unsigned flags, const mount_attr& attr) {
  int err = begin("mount_setattr");
  std::string line = "mount_setattr(" + show_fd(dirfd) + ", " + q(path) + ", " + at_flags(flags) +
                     ", set=" + linux::rootfs::attr_text(attr.attr_set) + ", clr=" + clear_text(attr.attr_clr);
  if (attr.propagation) line += ", propagation=" + linux::rootfs::flags_text(attr.propagation);
  if (attr.attr_set & MOUNT_ATTR_IDMAP) line += ", userns=" + show_fd(static_cast<int>(attr.userns_fd));
  return finish(line + ")", err);
}

Result<UniqueFd> RecordingSys::fsopen(const std::string& fstype, unsigned flags) {
  int err = begin("fsopen");
  return new_fd("fsopen(" + q(fstype) + ", " + std::to_string(flags) + ")", err, "/[fs:" + fstype + "]");
}

Status RecordingSys::fsconfig(int fd, unsigned cmd, const std::string& key, const std::string& value) {
  int err = begin("fsconfig");
  std::string c = cmd == FSCONFIG_CMD_CREATE ? "FSCONFIG_CMD_CREATE" : cmd == FSCONFIG_SET_FLAG ? "FSCONFIG_SET_FLAG"
                  : cmd == FSCONFIG_SET_STRING ? "FSCONFIG_SET_STRING" : cmd == FSCONFIG_SET_FD ? "FSCONFIG_SET_FD"
                                                                        : std::to_string(cmd);
  return finish("fsconfig(" + show_fd(fd) + ", " + c + ", " + q(key) + ", " + q(value) + ")", err);
}

Result<UniqueFd> RecordingSys::fsmount(int fd, unsigned flags, unsigned attr_flags) {
  int err = begin("fsmount");
  // Everything under a private instance exists (procfs files are the kernel's, not modelled).
  std::string path = path_of(fd) + "/mnt";
  permissive_.insert(path);
  mounts_[path] = path_of(fd).substr(5, path_of(fd).size() - 6);
  return new_fd("fsmount(" + show_fd(fd) + ", " + std::to_string(flags) + ", " + linux::rootfs::attr_text(attr_flags) + ")",
                err, path);
}

Status RecordingSys::pivot_root(const std::string& new_root, const std::string& put_old) {
  int err = begin("pivot_root");
  if (!err) root_ = host_path(AT_FDCWD, new_root);
  return finish("pivot_root(" + q(new_root) + ", " + q(put_old) + ")", err);
}

Status RecordingSys::chroot(const std::string& path) {
  int err = begin("chroot");
  if (!err) root_ = host_path(AT_FDCWD, path);
  return finish("chroot(" + q(path) + ")", err);
}

Status RecordingSys::fchdir(int fd) {
  int err = begin("fchdir");
  if (!err) cwd_ = path_of(fd);
  return finish("fchdir(" + show_fd(fd) + ")", err);
}

Status RecordingSys::chdir(const std::string& path) {
  int err = begin("chdir");
  if (!err) cwd_ = host_path(AT_FDCWD, path);
  return finish("chdir(" + q(path) + ")", err);
}

Status RecordingSys::setns(int fd, int nstype) {
  int err = begin("setns");
  return finish("setns(" + show_fd(fd) + ", " + ns_flags(static_cast<unsigned>(nstype)) + ")", err);
}

Status RecordingSys::unshare(int flags) {
  int err = begin("unshare");
  return finish("unshare(" + ns_flags(static_cast<unsigned>(flags)) + ")", err);
}

Status RecordingSys::sethostname(const std::string& name) {
  int err = begin("sethostname");
  return finish("sethostname(" + q(name) + ")", err);
}

Status RecordingSys::setdomainname(const std::string& name) {
  int err = begin("setdomainname");
  return finish("setdomainname(" + q(name) + ")", err);
}

Status RecordingSys::setresuid(uid_t uid) {
  int err = begin("setresuid");
  return finish("setresuid(" + std::to_string(uid) + ")", err);
}

Status RecordingSys::setresgid(gid_t gid) {
  int err = begin("setresgid");
  return finish("setresgid(" + std::to_string(gid) + ")", err);
}

Status RecordingSys::clear_groups() {
  int err = begin("clear_groups");
  return finish("clear_groups()", err);
}

mode_t RecordingSys::umask(mode_t mask) {
  begin("umask");
  log_.push_back("umask(" + octal(mask) + ") = " + octal(umask_));
  mode_t old = umask_;
  umask_ = mask;
  return old;
}

Result<UniqueFd> RecordingSys::make_userns(const std::string& uid_map, const std::string& gid_map) {
  int err = begin("make_userns");
  return new_fd("make_userns(" + q(uid_map) + ", " + q(gid_map) + ")", err, "/[userns]");
}

Status RecordingSys::run_program(int fd, const std::vector<std::string>& argv) {
  int err = begin("run_program");
  std::vector<std::string> quoted;
  for (const auto& a : argv) quoted.push_back(q(a));
  return finish("run_program(" + show_fd(fd) + ", {" + str::join(quoted, ", ") + "})", err);
}

}  // namespace berth::test
