// RecordingSys: a linux::Sys that changes nothing. Every call appends one text line to a
// single ordered log (`mount("proc", "/proc/thread-self/fd/5", "proc", nosuid|nodev|noexec,
// "")`); the Nth call of a given name can be made to fail with a chosen errno. A small model
// of the file system (directories, files, nodes, symlinks, mounts by fstype) answers
// lookups and fstat/fstatfs consistently, so that code taking different paths on ENOENT,
// EEXIST or a file type can be followed step by step.
//
// Fds it hands out are fake (from 2^20 up, never a real fd: closing them is harmless) and
// appear in the log as small numbers from 3, in the order they were handed out; magic links
// "/proc/thread-self/fd/N" are shown with the same small numbers.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "linux/sys.h"

namespace berth::test {

std::string octal(unsigned v);  // "0755"

class RecordingSys : public linux::Sys {
 public:
  RecordingSys();

  // The model: absolute host paths. "/" and the host's /dev/null (char 1:3) exist.
  void add_dir(const std::string& path, mode_t mode = 0755);
  void add_file(const std::string& path, const std::string& content = "", mode_t mode = 0644);
  void add_node(const std::string& path, char type, unsigned major, unsigned minor, mode_t mode = 0666);
  void add_symlink(const std::string& path, const std::string& target);
  void add_mount(const std::string& path, const std::string& fstype);
  bool exists(const std::string& path) const { return nodes_.count(path) != 0; }
  // Fails the nth (1-based) call named `call` (the method name: "mount", "openat2") with err.
  void fail(const std::string& call, int nth, int err);
  // A fake fd for `path` (a pty peer, ...), not logged.
  int fake_fd(const std::string& path);
  // How an fd appears in the log.
  std::string show_fd(int fd) const;
  // The next seccomp_set_filter with NEW_LISTENER returns this real fd (logged " = listener"),
  // so that it can cross a real socket; without one it returns a fake fd.
  void give_listener(UniqueFd fd) { listener_ = std::move(fd); }

  const std::vector<std::string>& log() const { return log_; }
  std::string log_text() const;  // lines joined, each ending in '\n'
  void clear_log() { log_.clear(); }

  Result<UniqueFd> openat(int dirfd, const std::string& path, int flags, mode_t mode) override;
  Result<UniqueFd> openat2(int dirfd, const std::string& path, uint64_t flags, uint64_t mode, uint64_t resolve) override;
  Status mkdirat(int dirfd, const std::string& path, mode_t mode) override;
  Status mknodat(int dirfd, const std::string& path, mode_t mode, dev_t dev) override;
  Status symlinkat(const std::string& target, int dirfd, const std::string& path) override;
  Status unlinkat(int dirfd, const std::string& path, int flags) override;
  Status renameat(int from_dirfd, const std::string& from, int to_dirfd, const std::string& to) override;
  Status fchownat(int dirfd, const std::string& path, uid_t uid, gid_t gid, int flags) override;
  Status fchmodat(int dirfd, const std::string& path, mode_t mode) override;
  Status write_fd(int fd, std::string_view data) override;
  Status copy_tree(int from_dirfd, int to_dirfd) override;
  Result<struct stat> fstat(int fd) override;
  Result<struct stat> fstatat(int dirfd, const std::string& path, int flags) override;
  Result<struct statfs> fstatfs(int fd) override;
  Result<std::string> read_file(const std::string& path) override;
  Status mount(const std::string& source, const std::string& target, const std::string& fstype, unsigned long flags,
               const std::string& data) override;
  Status umount2(const std::string& target, int flags) override;
  Result<UniqueFd> open_tree(int dirfd, const std::string& path, unsigned flags) override;
  Status move_mount(int from_dirfd, const std::string& from_path, int to_dirfd, const std::string& to_path,
                    unsigned flags) override;
  Status mount_setattr(int dirfd, const std::string& path, unsigned flags, const mount_attr& attr) override;
  Result<UniqueFd> fsopen(const std::string& fstype, unsigned flags) override;
  Status fsconfig(int fd, unsigned cmd, const std::string& key, const std::string& value) override;
  Result<UniqueFd> fsmount(int fd, unsigned flags, unsigned attr_flags) override;
  Status pivot_root(const std::string& new_root, const std::string& put_old) override;
  Status chroot(const std::string& path) override;
  Status fchdir(int fd) override;
  Status chdir(const std::string& path) override;
  Status setns(int fd, int nstype) override;
  Status unshare(int flags) override;
  Status sethostname(const std::string& name) override;
  Status setdomainname(const std::string& name) override;
  Status setresuid(uid_t uid) override;
  Status setresgid(gid_t gid) override;
  Status clear_groups() override;
  mode_t umask(mode_t mask) override;
  // The process engine (recording_sys_process.cc).
  Status set_groups(const std::vector<gid_t>& groups) override;
  Status setsid() override;
  Status prctl(int option, unsigned long arg2) override;
  Status drop_bounding_caps(uint64_t keep) override;
  Status capset(const linux::CapSets& caps) override;
  Status set_ambient_caps(uint64_t ambient) override;
  Result<UniqueFd> seccomp_set_filter(std::string_view program, unsigned flags) override;
  Status set_rlimits(const std::vector<spec::Rlimit>& rlimits) override;
  Status set_oom_score_adj(int64_t value) override;
  Status join_session_keyring(const std::string& container_id) override;
  Status set_scheduler(const spec::Scheduler& s) override;
  Status set_io_priority(const spec::IoPriority& p) override;
  Status set_personality(const spec::Personality& p) override;
  Status set_memory_policy(const spec::MemoryPolicy& m) override;
  Status set_controlling_tty(int peer_fd) override;
  Status close_range(unsigned first, unsigned last) override;
  Status clear_cloexec(int fd) override;
  Status dup_onto(int from, int to) override;
  Status execve(const char* path, char* const* argv, char* const* envp) override;
  Status pidfd_kill(int pidfd) override;
  Status set_affinity(pid_t pid, const cpu_set_t& cpus) override;
  Result<UniqueFd> make_userns(const std::string& uid_map, const std::string& gid_map) override;
  Status run_program(int fd, const std::vector<std::string>& argv) override;

 private:
  UniqueFd listener_;
  struct Node {
    char kind = 'd';  // d f c b p l
    mode_t mode = 0755;
    dev_t rdev = 0;
    std::string target;   // symlink
    std::string content;  // file
  };

  // Logging: `line` gets " = -ENAME" on failure. Returns the injected error, if any.
  int begin(const std::string& call);
  Status finish(const std::string& line, int err);
  template <class T>
  Result<T> finish_value(const std::string& line, int err, T value, const std::string& shown);
  Result<UniqueFd> new_fd(const std::string& line, int err, const std::string& path);
  std::string q(const std::string& s) const;  // quoted, fd magic links shown small
  std::string dir_text(int dirfd) const;

  // The model.
  std::string path_of(int fd) const;
  std::string host_path(int dirfd, const std::string& path) const;  // no symlinks followed
  // Walks `path` from base (IN_ROOT: symlinks and ".." stay below `root`). Returns an errno
  // or 0 and the resolved path in *out.
  int walk(const std::string& root, const std::string& base, const std::string& path, bool follow_last,
           bool no_symlinks, std::string* out) const;
  int create(int dirfd, const std::string& path, Node node);
  bool permissive(const std::string& path) const;
  std::string fstype_at(const std::string& path) const;

  std::vector<std::string> log_;
  std::map<std::string, int> calls_;
  std::map<std::pair<std::string, int>, int> failures_;
  std::map<int, std::string> fds_;  // fake fd → path in the model
  int next_fd_ = 0;
  std::map<std::string, Node> nodes_;
  std::map<std::string, std::string> mounts_;  // mountpoint → fstype
  std::set<std::string> permissive_;           // prefixes where every path exists (fsmount)
  std::string root_ = "";                      // the process root in the model ("" = "/")
  std::string cwd_ = "/";
  mode_t umask_ = 022;
};

}  // namespace berth::test
