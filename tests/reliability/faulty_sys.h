// FaultySys: linux::Sys over the real kernel that records each call's name and fails the
// Nth call (any name) with a realistic errno instead of making it. Used to fail every step
// of a real rootfs application in turn, in a throw-away mount namespace.
#pragma once

#include <fcntl.h>

#include <cerrno>
#include <string>
#include <vector>

#include "linux/sys.h"

namespace berth::test {

class FaultySys : public linux::Sys {
 public:
  explicit FaultySys(int fail_at) : fail_at_(fail_at) {}
  const std::vector<std::string>& calls() const { return calls_; }
  int failed_errno() const { return failed_errno_; }

  Result<UniqueFd> openat(int dirfd, const std::string& path, int flags, mode_t mode) override {
    if (int e = call("openat", flags & O_CREAT ? ENOSPC : ENOENT)) return Error::sys(e, "open " + path);
    return real().openat(dirfd, path, flags, mode);
  }
  Result<UniqueFd> openat2(int dirfd, const std::string& path, uint64_t flags, uint64_t mode,
                           uint64_t resolve) override {
    if (int e = call("openat2", EXDEV)) return Error::sys(e, "openat2 " + path);
    return real().openat2(dirfd, path, flags, mode, resolve);
  }
  Status mkdirat(int dirfd, const std::string& path, mode_t mode) override {
    if (int e = call("mkdirat", ENOSPC)) return Error::sys(e, "mkdir " + path);
    return real().mkdirat(dirfd, path, mode);
  }
  Status mknodat(int dirfd, const std::string& path, mode_t mode, dev_t dev) override {
    if (int e = call("mknodat", EPERM)) return Error::sys(e, "mknod " + path);
    return real().mknodat(dirfd, path, mode, dev);
  }
  Status symlinkat(const std::string& target, int dirfd, const std::string& path) override {
    if (int e = call("symlinkat", EROFS)) return Error::sys(e, "symlink " + path);
    return real().symlinkat(target, dirfd, path);
  }
  Status unlinkat(int dirfd, const std::string& path, int flags) override {
    if (int e = call("unlinkat", EBUSY)) return Error::sys(e, "unlink " + path);
    return real().unlinkat(dirfd, path, flags);
  }
  Status renameat(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to) override {
    if (int e = call("renameat", EACCES)) return Error::sys(e, "rename " + from);
    return real().renameat(from_dirfd, from, to_dirfd, to);
  }
  Status fchownat(int dirfd, const std::string& path, uid_t uid, gid_t gid, int flags) override {
    if (int e = call("fchownat", EPERM)) return Error::sys(e, "chown " + path);
    return real().fchownat(dirfd, path, uid, gid, flags);
  }
  Status fchmodat(int dirfd, const std::string& path, mode_t mode) override {
    if (int e = call("fchmodat", EPERM)) return Error::sys(e, "chmod " + path);
    return real().fchmodat(dirfd, path, mode);
  }
  Status write_fd(int fd, std::string_view data) override {
    if (int e = call("write_fd", EIO)) return Error::sys(e, "write");
    return real().write_fd(fd, data);
  }
  Status mount(const std::string& source, const std::string& target, const std::string& fstype,
               unsigned long flags, const std::string& data) override {
    if (int e = call("mount", fstype.empty() ? EPERM : ENODEV)) return Error::sys(e, "mount " + target);
    return real().mount(source, target, fstype, flags, data);
  }
  Status umount2(const std::string& target, int flags) override {
    if (int e = call("umount2", EBUSY)) return Error::sys(e, "umount " + target);
    return real().umount2(target, flags);
  }
  Result<UniqueFd> open_tree(int dirfd, const std::string& path, unsigned flags) override {
    if (int e = call("open_tree", ENOENT)) return Error::sys(e, "open_tree " + path);
    return real().open_tree(dirfd, path, flags);
  }
  Status move_mount(int from_dirfd, const std::string& from_path, int to_dirfd, const std::string& to_path,
                    unsigned flags) override {
    if (int e = call("move_mount", EPERM)) return Error::sys(e, "move_mount");
    return real().move_mount(from_dirfd, from_path, to_dirfd, to_path, flags);
  }
  Status mount_setattr(int dirfd, const std::string& path, unsigned flags, const mount_attr& attr) override {
    if (int e = call("mount_setattr", EPERM)) return Error::sys(e, "mount_setattr");
    return real().mount_setattr(dirfd, path, flags, attr);
  }
  Result<UniqueFd> fsopen(const std::string& fstype, unsigned flags) override {
    if (int e = call("fsopen", ENODEV)) return Error::sys(e, "fsopen " + fstype);
    return real().fsopen(fstype, flags);
  }
  Status fsconfig(int fd, unsigned cmd, const std::string& key, const std::string& value) override {
    if (int e = call("fsconfig", EINVAL)) return Error::sys(e, "fsconfig " + key);
    return real().fsconfig(fd, cmd, key, value);
  }
  Result<UniqueFd> fsmount(int fd, unsigned flags, unsigned attr_flags) override {
    if (int e = call("fsmount", EPERM)) return Error::sys(e, "fsmount");
    return real().fsmount(fd, flags, attr_flags);
  }
  Status pivot_root(const std::string& new_root, const std::string& put_old) override {
    if (int e = call("pivot_root", EBUSY)) return Error::sys(e, "pivot_root");
    return real().pivot_root(new_root, put_old);
  }
  Status chroot(const std::string& path) override {
    if (int e = call("chroot", EPERM)) return Error::sys(e, "chroot");
    return real().chroot(path);
  }
  Status fchdir(int fd) override {
    if (int e = call("fchdir", EACCES)) return Error::sys(e, "fchdir");
    return real().fchdir(fd);
  }
  Status chdir(const std::string& path) override {
    if (int e = call("chdir", ENOENT)) return Error::sys(e, "chdir " + path);
    return real().chdir(path);
  }
  Status setns(int fd, int nstype) override {
    if (int e = call("setns", EPERM)) return Error::sys(e, "setns");
    return real().setns(fd, nstype);
  }
  Status unshare(int flags) override {
    if (int e = call("unshare", ENOMEM)) return Error::sys(e, "unshare");
    return real().unshare(flags);
  }
  Status sethostname(const std::string& name) override {
    if (int e = call("sethostname", EPERM)) return Error::sys(e, "sethostname");
    return real().sethostname(name);
  }
  Status setdomainname(const std::string& name) override {
    if (int e = call("setdomainname", EPERM)) return Error::sys(e, "setdomainname");
    return real().setdomainname(name);
  }
  Status copy_tree(int from_dirfd, int to_dirfd) override {
    if (int e = call("copy_tree", ENOSPC)) return Error::sys(e, "copy tree");
    return real().copy_tree(from_dirfd, to_dirfd);
  }
  Result<struct stat> fstat(int fd) override {
    if (int e = call("fstat", EIO)) return Error::sys(e, "fstat");
    return real().fstat(fd);
  }
  Result<struct stat> fstatat(int dirfd, const std::string& path, int flags) override {
    if (int e = call("fstatat", EIO)) return Error::sys(e, "fstatat " + path);
    return real().fstatat(dirfd, path, flags);
  }
  Result<struct statfs> fstatfs(int fd) override {
    if (int e = call("fstatfs", EIO)) return Error::sys(e, "fstatfs");
    return real().fstatfs(fd);
  }
  Result<std::string> read_file(const std::string& path) override {
    if (int e = call("read_file", EIO)) return Error::sys(e, "read " + path);
    return real().read_file(path);
  }
  Status setresuid(uid_t uid) override {
    if (int e = call("setresuid", EINVAL)) return Error::sys(e, "setresuid");
    return real().setresuid(uid);
  }
  Status setresgid(gid_t gid) override {
    if (int e = call("setresgid", EINVAL)) return Error::sys(e, "setresgid");
    return real().setresgid(gid);
  }
  Status clear_groups() override {
    if (int e = call("clear_groups", EPERM)) return Error::sys(e, "setgroups");
    return real().clear_groups();
  }
  Result<UniqueFd> make_userns(const std::string& uid_map, const std::string& gid_map) override {
    if (int e = call("make_userns", EPERM)) return Error::sys(e, "make user namespace");
    return real().make_userns(uid_map, gid_map);
  }
  Status run_program(int fd, const std::vector<std::string>& argv) override {
    if (int e = call("run_program", ENOEXEC)) return Error::sys(e, "run " + argv[0]);
    return real().run_program(fd, argv);
  }
  // umask cannot fail: recorded only.
  mode_t umask(mode_t mask) override {
    calls_.push_back("umask");
    return real().umask(mask);
  }

 private:
  static linux::Sys& real() { return linux::real_sys(); }
  // Records the call; returns the errno to fail it with (0: make it).
  int call(const char* name, int err) {
    calls_.push_back(name);
    if (static_cast<int>(calls_.size()) != fail_at_) return 0;
    failed_errno_ = err;
    return err;
  }

  int fail_at_;
  int failed_errno_ = 0;
  std::vector<std::string> calls_;
};

}  // namespace berth::test
