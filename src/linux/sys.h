// Sys: the one seam between berth and the kernel calls that change the system. Everything
// the container init, an exec tenant, their payload and the rootfs engine do (mounts,
// namespaces, identity, capabilities, seccomp, process attributes, execve) goes through it,
// fd-based wherever the kernel allows (the inventory: docs/architecture.md, "The process
// engine's system calls"). LinuxSys is real; tests use
// tests/support/recording_sys.h, which logs each call as one text line and can fail the Nth
// call of a name with a chosen errno.
#pragma once

#include <linux/mount.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "linux/caps.h"
#include "util/unique_fd.h"

namespace berth::linux {

class Sys {
 public:
  virtual ~Sys() = default;

  // Files and directories (dirfd-relative; the caller chooses O_NOFOLLOW etc.).
  virtual Result<UniqueFd> openat(int dirfd, const std::string& path, int flags, mode_t mode) = 0;
  // openat2(2); resolve = RESOLVE_* flags.
  virtual Result<UniqueFd> openat2(int dirfd, const std::string& path, uint64_t flags, uint64_t mode,
                                   uint64_t resolve) = 0;
  virtual Status mkdirat(int dirfd, const std::string& path, mode_t mode) = 0;
  virtual Status mknodat(int dirfd, const std::string& path, mode_t mode, dev_t dev) = 0;
  virtual Status symlinkat(const std::string& target, int dirfd, const std::string& path) = 0;
  virtual Status unlinkat(int dirfd, const std::string& path, int flags) = 0;
  virtual Status renameat(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to) = 0;
  virtual Status fchownat(int dirfd, const std::string& path, uid_t uid, gid_t gid, int flags) = 0;
  virtual Status fchmodat(int dirfd, const std::string& path, mode_t mode) = 0;
  virtual Status write_fd(int fd, std::string_view data) = 0;
  // Copies the content of one directory into another (files, directories, symlinks, device
  // nodes; mode and owner kept), never following a symlink: tmpcopyup.
  virtual Status copy_tree(int from_dirfd, int to_dirfd) = 0;

  // Inspection whose answer changes what is done next.
  virtual Result<struct stat> fstat(int fd) = 0;
  virtual Result<struct stat> fstatat(int dirfd, const std::string& path, int flags) = 0;
  virtual Result<struct statfs> fstatfs(int fd) = 0;
  virtual Result<std::string> read_file(const std::string& path) = 0;

  // Mounts. `mount` is the classic call (targets are /proc/thread-self/fd/N magic links of
  // fds resolved inside the rootfs); the rest is the new mount API.
  virtual Status mount(const std::string& source, const std::string& target, const std::string& fstype,
                       unsigned long flags, const std::string& data) = 0;
  virtual Status umount2(const std::string& target, int flags) = 0;
  virtual Result<UniqueFd> open_tree(int dirfd, const std::string& path, unsigned flags) = 0;
  virtual Status move_mount(int from_dirfd, const std::string& from_path, int to_dirfd,
                            const std::string& to_path, unsigned flags) = 0;
  virtual Status mount_setattr(int dirfd, const std::string& path, unsigned flags, const mount_attr& attr) = 0;
  virtual Result<UniqueFd> fsopen(const std::string& fstype, unsigned flags) = 0;
  virtual Status fsconfig(int fd, unsigned cmd, const std::string& key, const std::string& value) = 0;
  virtual Result<UniqueFd> fsmount(int fd, unsigned flags, unsigned attr_flags) = 0;
  virtual Status pivot_root(const std::string& new_root, const std::string& put_old) = 0;
  virtual Status chroot(const std::string& path) = 0;
  virtual Status fchdir(int fd) = 0;
  virtual Status chdir(const std::string& path) = 0;

  // Namespaces and identity.
  virtual Status setns(int fd, int nstype) = 0;
  virtual Status unshare(int flags) = 0;
  virtual Status sethostname(const std::string& name) = 0;
  virtual Status setdomainname(const std::string& name) = 0;
  virtual Status setresuid(uid_t uid) = 0;  // real, effective and saved alike
  virtual Status setresgid(gid_t gid) = 0;
  virtual Status clear_groups() = 0;        // setgroups(0, NULL)
  virtual mode_t umask(mode_t mask) = 0;
  virtual Status set_groups(const std::vector<gid_t>& groups) = 0;  // setgroups(2)
  virtual Status setsid() = 0;
  // prctl(option, arg2, 0, 0, 0): PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_KEEPCAPS,
  // PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER.
  virtual Status prctl(int option, unsigned long arg2) = 0;
  // Capabilities: drop every bounding capability not in `keep` (up to the kernel's last);
  // capset(2) of effective/permitted/inheritable; the ambient set cleared, then raised to
  // `ambient` (a capability not permitted and inheritable is skipped, as runc does).
  virtual Status drop_bounding_caps(uint64_t keep) = 0;
  virtual Status capset(const CapSets& caps) = 0;
  virtual Status set_ambient_caps(uint64_t ambient) = 0;
  // seccomp(SECCOMP_SET_MODE_FILTER) of a classic BPF program (its sock_filter array as
  // bytes) with SECCOMP_FILTER_FLAG_* flags: the notify listener when NEW_LISTENER is set.
  // The flags come from linux.seccomp (seccomp::filter_flags).
  virtual Result<UniqueFd> seccomp_set_filter(std::string_view program, unsigned flags) = 0;
  // Process attributes (linux/process_attrs.h, linux/rlimits.h): each one step.
  virtual Status set_rlimits(const std::vector<spec::Rlimit>& rlimits) = 0;
  virtual Status set_oom_score_adj(int64_t value) = 0;
  virtual Status join_session_keyring(const std::string& container_id) = 0;
  virtual Status set_scheduler(const spec::Scheduler& s) = 0;
  virtual Status set_io_priority(const spec::IoPriority& p) = 0;
  virtual Status set_personality(const spec::Personality& p) = 0;
  virtual Status set_memory_policy(const spec::MemoryPolicy& m) = 0;
  // TIOCSCTTY on the pty peer and the peer dup'ed onto stdio (a session leader's terminal).
  virtual Status set_controlling_tty(int peer_fd) = 0;
  // The end of a payload. Neither allocates on success: both run after a seccomp filter
  // may be loaded. execve returns only when it failed (a fake returns ok: "would run").
  virtual Status close_range(unsigned first, unsigned last) = 0;
  virtual Status clear_cloexec(int fd) = 0;  // a preserved fd crosses execve
  virtual Status dup_onto(int from, int to) = 0;  // dup3(from, to, 0): stdio replaced
  virtual Status execve(const char* path, char* const* argv, char* const* envp) = 0;
  // The parent side: SIGKILL through a pidfd (never a pid number that may be reused).
  virtual Status pidfd_kill(int pidfd) = 0;
  // sched_setaffinity(2) of `pid` (0: the caller): process.execCPUAffinity of an exec.
  virtual Status set_affinity(pid_t pid, const cpu_set_t& cpus) = 0;

  // A user namespace with these maps ("0 1000 1\n" lines), owned by a short-lived child that
  // is gone when this returns: the fd keeps the namespace (for MOUNT_ATTR_IDMAP).
  virtual Result<UniqueFd> make_userns(const std::string& uid_map, const std::string& gid_map) = 0;
  // Runs the program open at fd (execveat) with argv and an empty environment in a child,
  // and waits: a non-zero exit is an error.
  virtual Status run_program(int fd, const std::vector<std::string>& argv) = 0;
};

// The real implementation (a process-wide instance).
Sys& real_sys();

// "/proc/thread-self/fd/N": how a mount(2) target or source is named by fd.
std::string fd_path(int fd);

}  // namespace berth::linux
