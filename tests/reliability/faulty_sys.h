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
  // The process engine's calls: failed or passed on like the rest.
  Status set_groups(const std::vector<gid_t>& groups) override {
    if (int e = call("set_groups", EPERM)) return Error::sys(e, "setgroups");
    return real().set_groups(groups);
  }
  Status setsid() override {
    if (int e = call("setsid", EPERM)) return Error::sys(e, "setsid");
    return real().setsid();
  }
  Status prctl(int option, unsigned long arg2) override {
    if (int e = call("prctl", EINVAL)) return Error::sys(e, "prctl");
    return real().prctl(option, arg2);
  }
  Status drop_bounding_caps(uint64_t keep) override {
    if (int e = call("drop_bounding_caps", EPERM)) return Error::sys(e, "drop bounding capabilities");
    return real().drop_bounding_caps(keep);
  }
  Status capset(const linux::CapSets& caps) override {
    if (int e = call("capset", EPERM)) return Error::sys(e, "set capabilities");
    return real().capset(caps);
  }
  Status set_ambient_caps(uint64_t ambient) override {
    if (int e = call("set_ambient_caps", EPERM)) return Error::sys(e, "raise ambient capabilities");
    return real().set_ambient_caps(ambient);
  }
  Result<UniqueFd> seccomp_set_filter(std::string_view program, unsigned flags) override {
    if (int e = call("seccomp_set_filter", EACCES)) return Error::sys(e, "seccomp");
    return real().seccomp_set_filter(program, flags);
  }
  Status set_rlimits(const std::vector<spec::Rlimit>& rlimits) override {
    if (int e = call("set_rlimits", EPERM)) return Error::sys(e, "setrlimit");
    return real().set_rlimits(rlimits);
  }
  Status set_oom_score_adj(int64_t value) override {
    if (int e = call("set_oom_score_adj", EACCES)) return Error::sys(e, "oom_score_adj");
    return real().set_oom_score_adj(value);
  }
  Status join_session_keyring(const std::string& id) override {
    if (int e = call("join_session_keyring", EDQUOT)) return Error::sys(e, "keyctl");
    return real().join_session_keyring(id);
  }
  Status set_scheduler(const spec::Scheduler& s) override {
    if (int e = call("set_scheduler", EPERM)) return Error::sys(e, "sched_setattr");
    return real().set_scheduler(s);
  }
  Status set_io_priority(const spec::IoPriority& p) override {
    if (int e = call("set_io_priority", EPERM)) return Error::sys(e, "ioprio_set");
    return real().set_io_priority(p);
  }
  Status set_personality(const spec::Personality& p) override {
    if (int e = call("set_personality", EINVAL)) return Error::sys(e, "personality");
    return real().set_personality(p);
  }
  Status set_memory_policy(const spec::MemoryPolicy& m) override {
    if (int e = call("set_memory_policy", EINVAL)) return Error::sys(e, "set_mempolicy");
    return real().set_memory_policy(m);
  }
  Status set_controlling_tty(int peer_fd) override {
    if (int e = call("set_controlling_tty", EPERM)) return Error::sys(e, "TIOCSCTTY");
    return real().set_controlling_tty(peer_fd);
  }
  Status close_range(unsigned first, unsigned last) override {
    if (int e = call("close_range", EINVAL)) return Error::sys(e, "close_range");
    return real().close_range(first, last);
  }
  Status clear_cloexec(int fd) override {
    if (int e = call("clear_cloexec", EBADF)) return Error::sys(e, "fcntl");
    return real().clear_cloexec(fd);
  }
  Status dup_onto(int from, int to) override {
    if (int e = call("dup_onto", EBADF)) return Error::sys(e, "dup3");
    return real().dup_onto(from, to);
  }
  Status execve(const char* path, char* const* argv, char* const* envp) override {
    if (int e = call("execve", ENOENT)) return Error::sys(e, "execve");
    return real().execve(path, argv, envp);
  }
  Status pidfd_kill(int pidfd) override {
    if (int e = call("pidfd_kill", ESRCH)) return Error::sys(e, "pidfd_send_signal");
    return real().pidfd_kill(pidfd);
  }
  Status set_affinity(pid_t pid, const cpu_set_t& cpus) override {
    if (int e = call("set_affinity", EINVAL)) return Error::sys(e, "sched_setaffinity");
    return real().set_affinity(pid, cpus);
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
