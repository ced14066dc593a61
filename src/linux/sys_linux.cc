// LinuxSys: Sys on the real kernel, one thin wrapper per system call.
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "linux/caps.h"
#include "linux/console.h"
#include "linux/process_attrs.h"
#include "linux/rlimits.h"
#include "linux/sys.h"
#include "linux/sys_ops.h"
#include "util/file.h"
#include "util/openat2.h"

namespace berth::linux {
namespace {

std::string show(const std::string& s) { return s.empty() ? "\"\"" : s; }

class LinuxSys final : public Sys {
 public:
  Result<UniqueFd> openat(int dirfd, const std::string& path, int flags, mode_t mode) override {
    int fd = ::openat(dirfd, path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) return Error::sys(errno, "open " + path);
    return UniqueFd(fd);
  }
  Result<UniqueFd> openat2(int dirfd, const std::string& path, uint64_t flags, uint64_t mode,
                           uint64_t resolve) override {
    struct open_how how {};
    how.flags = flags | O_CLOEXEC;
    how.mode = mode;
    how.resolve = resolve;
    // Seen on a busy host during an image's "../../.." symlink: EAGAIN, retried.
    int fd = util::openat2_retrying(dirfd, path.c_str(), how);
    if (fd < 0) return Error::sys(errno, "openat2 " + path);
    return UniqueFd(fd);
  }
  Status mkdirat(int dirfd, const std::string& path, mode_t mode) override {
    if (::mkdirat(dirfd, path.c_str(), mode) < 0) return Error::sys(errno, "mkdir " + path);
    return ok();
  }
  Status mknodat(int dirfd, const std::string& path, mode_t mode, dev_t dev) override {
    if (::mknodat(dirfd, path.c_str(), mode, dev) < 0) return Error::sys(errno, "mknod " + path);
    return ok();
  }
  Status symlinkat(const std::string& target, int dirfd, const std::string& path) override {
    if (::symlinkat(target.c_str(), dirfd, path.c_str()) < 0) return Error::sys(errno, "symlink " + path);
    return ok();
  }
  Status unlinkat(int dirfd, const std::string& path, int flags) override {
    if (::unlinkat(dirfd, path.c_str(), flags) < 0) return Error::sys(errno, "unlink " + path);
    return ok();
  }
  Status renameat(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to) override {
    if (::renameat(from_dirfd, from.c_str(), to_dirfd, to.c_str()) < 0) return Error::sys(errno, "rename " + from + " to " + to);
    return ok();
  }
  Status fchownat(int dirfd, const std::string& path, uid_t uid, gid_t gid, int flags) override {
    if (::fchownat(dirfd, path.c_str(), uid, gid, flags) < 0) return Error::sys(errno, "chown " + show(path));
    return ok();
  }
  Status fchmodat(int dirfd, const std::string& path, mode_t mode) override {
    if (path.empty() ? ::fchmod(dirfd, mode) < 0 : chmod_nofollow(dirfd, path, mode) < 0)
      return Error::sys(errno, "chmod " + show(path));
    return ok();
  }
  Status write_fd(int fd, std::string_view data) override { return file::write_all(fd, data); }
  Status copy_tree(int from_dirfd, int to_dirfd) override { return ops::copy_tree(from_dirfd, to_dirfd); }

  Result<struct stat> fstat(int fd) override {
    struct stat st;
    if (::fstat(fd, &st) < 0) return Error::sys(errno, "fstat");
    return st;
  }
  Result<struct stat> fstatat(int dirfd, const std::string& path, int flags) override {
    struct stat st;
    if (::fstatat(dirfd, path.c_str(), &st, flags) < 0) return Error::sys(errno, "stat " + show(path));
    return st;
  }
  Result<struct statfs> fstatfs(int fd) override {
    struct statfs st;
    if (::fstatfs(fd, &st) < 0) return Error::sys(errno, "statfs");
    return st;
  }
  // The container's own files (its /etc/passwd, /etc/group): a FIFO there must not hold
  // the init or an exec.
  Result<std::string> read_file(const std::string& path) override {
    return file::read_regular(AT_FDCWD, path, 64u << 20);
  }

  Status mount(const std::string& source, const std::string& target, const std::string& fstype,
               unsigned long flags, const std::string& data) override {
    if (::mount(source.empty() ? nullptr : source.c_str(), target.c_str(),
                fstype.empty() ? nullptr : fstype.c_str(), flags, data.empty() ? nullptr : data.c_str()) < 0)
      return Error::sys(errno, "mount " + show(source) + " on " + target);
    return ok();
  }
  Status umount2(const std::string& target, int flags) override {
    if (::umount2(target.c_str(), flags) < 0) return Error::sys(errno, "umount " + target);
    return ok();
  }
  Result<UniqueFd> open_tree(int dirfd, const std::string& path, unsigned flags) override {
    int fd = static_cast<int>(::syscall(SYS_open_tree, dirfd, path.c_str(), flags | OPEN_TREE_CLOEXEC));
    if (fd < 0) return Error::sys(errno, "open_tree " + show(path));
    return UniqueFd(fd);
  }
  Status move_mount(int from_dirfd, const std::string& from_path, int to_dirfd, const std::string& to_path,
                    unsigned flags) override {
    if (::syscall(SYS_move_mount, from_dirfd, from_path.c_str(), to_dirfd, to_path.c_str(), flags) < 0)
      return Error::sys(errno, "move_mount to " + show(to_path));
    return ok();
  }
  Status mount_setattr(int dirfd, const std::string& path, unsigned flags, const mount_attr& attr) override {
    mount_attr a = attr;
    if (::syscall(SYS_mount_setattr, dirfd, path.c_str(), flags, &a, sizeof a) < 0)
      return Error::sys(errno, "mount_setattr " + show(path));
    return ok();
  }
  Result<UniqueFd> fsopen(const std::string& fstype, unsigned flags) override {
    int fd = static_cast<int>(::syscall(SYS_fsopen, fstype.c_str(), flags | FSOPEN_CLOEXEC));
    if (fd < 0) return Error::sys(errno, "fsopen " + fstype);
    return UniqueFd(fd);
  }
  Status fsconfig(int fd, unsigned cmd, const std::string& key, const std::string& value) override {
    const char* k = key.empty() ? nullptr : key.c_str();
    const char* v = cmd == FSCONFIG_SET_STRING ? value.c_str() : nullptr;
    // FSCONFIG_SET_FD: the value is the fd's number, passed as aux.
    int aux = cmd == FSCONFIG_SET_FD ? std::atoi(value.c_str()) : 0;
    if (::syscall(SYS_fsconfig, fd, cmd, k, v, aux) < 0) return Error::sys(errno, "fsconfig " + show(key));
    return ok();
  }
  Result<UniqueFd> fsmount(int fd, unsigned flags, unsigned attr_flags) override {
    int m = static_cast<int>(::syscall(SYS_fsmount, fd, flags | FSMOUNT_CLOEXEC, attr_flags));
    if (m < 0) return Error::sys(errno, "fsmount");
    return UniqueFd(m);
  }
  Status pivot_root(const std::string& new_root, const std::string& put_old) override {
    if (::syscall(SYS_pivot_root, new_root.c_str(), put_old.c_str()) < 0) return Error::sys(errno, "pivot_root");
    return ok();
  }
  Status chroot(const std::string& path) override {
    if (::chroot(path.c_str()) < 0) return Error::sys(errno, "chroot " + path);
    return ok();
  }
  Status fchdir(int fd) override {
    if (::fchdir(fd) < 0) return Error::sys(errno, "fchdir");
    return ok();
  }
  Status chdir(const std::string& path) override {
    if (::chdir(path.c_str()) < 0) return Error::sys(errno, "chdir " + path);
    return ok();
  }
  Status setns(int fd, int nstype) override {
    if (::setns(fd, nstype) < 0) return Error::sys(errno, "setns");
    return ok();
  }
  Status unshare(int flags) override {
    if (::unshare(flags) < 0) return Error::sys(errno, "unshare");
    return ok();
  }
  Status sethostname(const std::string& name) override {
    if (::sethostname(name.data(), name.size()) < 0) return Error::sys(errno, "sethostname");
    return ok();
  }
  Status setdomainname(const std::string& name) override {
    if (::setdomainname(name.data(), name.size()) < 0) return Error::sys(errno, "setdomainname");
    return ok();
  }
  Status setresuid(uid_t uid) override {
    if (::setresuid(uid, uid, uid) < 0) return Error::sys(errno, "setuid " + std::to_string(uid));
    return ok();
  }
  Status setresgid(gid_t gid) override {
    if (::setresgid(gid, gid, gid) < 0) return Error::sys(errno, "setgid " + std::to_string(gid));
    return ok();
  }
  Status clear_groups() override {
    if (::setgroups(0, nullptr) < 0) return Error::sys(errno, "setgroups");
    return ok();
  }
  Status set_groups(const std::vector<gid_t>& groups) override {
    if (::setgroups(groups.size(), groups.data()) < 0) return Error::sys(errno, "setgroups");
    return ok();
  }
  Status setsid() override {
    if (::setsid() < 0) return Error::sys(errno, "setsid");
    return ok();
  }
  Status prctl(int option, unsigned long arg2) override {
    if (::prctl(option, arg2, 0, 0, 0) < 0) return Error::sys(errno, "prctl " + std::to_string(option));
    return ok();
  }
  Status drop_bounding_caps(uint64_t keep) override { return linux::drop_bounding_caps(keep); }
  Status capset(const CapSets& caps) override { return set_cap_sets(caps); }
  Status set_ambient_caps(uint64_t ambient) override { return linux::set_ambient_caps(ambient); }
  // The same call as seccomp::load (seccomp/load.cc), which the seccomp tests use; linux/
  // does not include seccomp/, so the few lines are here twice.
  Result<UniqueFd> seccomp_set_filter(std::string_view program, unsigned flags) override {
    size_t n = program.size() / sizeof(sock_filter);
    if (n == 0 || n > BPF_MAXINSNS) return Error::generic("seccomp: program of " + std::to_string(n) + " instructions");
    sock_fprog fprog{static_cast<unsigned short>(n), reinterpret_cast<sock_filter*>(const_cast<char*>(program.data()))};
    long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
    if (rc < 0) {
      int e = errno;
      char hex[16];
      std::snprintf(hex, sizeof hex, "%#x", flags);
      std::string what = std::string("seccomp(SECCOMP_SET_MODE_FILTER, ") + hex + ")";
      if (e == EACCES) what += " without no_new_privs or CAP_SYS_ADMIN";
      return Error::sys(e, what);
    }
    if (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) return UniqueFd(static_cast<int>(rc));
    return UniqueFd();
  }
  Status set_rlimits(const std::vector<spec::Rlimit>& rlimits) override { return apply_rlimits(rlimits); }
  Status set_oom_score_adj(int64_t value) override { return linux::set_oom_score_adj(value); }
  Status join_session_keyring(const std::string& id) override { return linux::join_session_keyring(id); }
  Status set_scheduler(const spec::Scheduler& s) override { return linux::set_scheduler(s); }
  Status set_io_priority(const spec::IoPriority& p) override { return linux::set_io_priority(p); }
  Status set_personality(const spec::Personality& p) override { return linux::set_personality(p); }
  Status set_memory_policy(const spec::MemoryPolicy& m) override { return linux::set_memory_policy(m); }
  Status set_controlling_tty(int peer_fd) override { return make_controlling_tty(peer_fd); }
  // No allocation on success (a seccomp filter may be loaded): the text is built on failure.
  Status close_range(unsigned first, unsigned last) override {
    if (::syscall(SYS_close_range, first, last, 0) < 0) return Error::sys(errno, "close_range");
    return ok();
  }
  Status clear_cloexec(int fd) override {
    if (::fcntl(fd, F_SETFD, 0) < 0) return Error::sys(errno, "keep fd " + std::to_string(fd) + " across execve");
    return ok();
  }
  Status dup_onto(int from, int to) override {
    if (::dup3(from, to, 0) < 0) return Error::sys(errno, "dup fd " + std::to_string(from) + " onto " + std::to_string(to));
    return ok();
  }
  Status execve(const char* path, char* const* argv, char* const* envp) override {
    ::execve(path, argv, envp);
    return Error::sys(errno, "execve");
  }
  Status pidfd_kill(int pidfd) override {
    if (::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) < 0) return Error::sys(errno, "pidfd_send_signal");
    return ok();
  }
  Status set_affinity(pid_t pid, const cpu_set_t& cpus) override {
    if (::sched_setaffinity(pid, sizeof cpus, &cpus) < 0) return Error::sys(errno, "sched_setaffinity");
    return ok();
  }
  mode_t umask(mode_t mask) override { return ::umask(mask); }
  Result<UniqueFd> make_userns(const std::string& uid_map, const std::string& gid_map) override {
    return ops::make_userns(uid_map, gid_map);
  }
  Status run_program(int fd, const std::vector<std::string>& argv) override { return ops::run_program(fd, argv); }

 private:
  // fchmodat2 with AT_SYMLINK_NOFOLLOW (Linux 6.6): a mode change never follows a symlink
  // the image put in place of a node; older kernels get the plain call.
  static int chmod_nofollow(int dirfd, const std::string& path, mode_t mode) {
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
    long r = ::syscall(SYS_fchmodat2, dirfd, path.c_str(), mode, AT_SYMLINK_NOFOLLOW);
    if (r < 0 && errno == ENOSYS) r = ::fchmodat(dirfd, path.c_str(), mode, 0);
    return static_cast<int>(r);
  }
};

}  // namespace

Sys& real_sys() {
  static LinuxSys sys;
  return sys;
}

std::string fd_path(int fd) { return "/proc/thread-self/fd/" + std::to_string(fd); }

}  // namespace berth::linux
