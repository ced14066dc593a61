// The state root and per-container directories (see state_store.h).
#include "container/state_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <cerrno>

#include "container/record.h"
#include "linux/paths.h"
#include "util/file.h"
#include "util/trusted_path.h"

namespace berth::container {
namespace {

constexpr const char* kRecordFile = "state.json";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kFifoFile = "exec.fifo";
constexpr const char* kSettingUpFile = "setting-up";
// The record carries the config's annotations, so it may be as large as the config.json it
// came from (create reads up to 64 MiB): a 1 MiB cap made a container created from a
// 10 MiB config unreadable, and so impossible to start or delete.
constexpr size_t kMaxRecordBytes = 64u << 20;

// issue 31: a state root or container directory that anyone but the caller can write is
// not the caller's record. Whoever can rename entries there swaps a container's directory
// for a forged state.json and config.json, and root's `delete -f` then signals the pid they
// name and runs their poststop hooks as uid 0 (runc 1.1.5 trusts any --root).
trusted::WalkOptions root_walk(bool create) { return {"state root", ::geteuid(), create}; }

Status check_container_dir(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) < 0) return Error::sys(errno, "stat container directory " + path);
  std::string problem = trusted::check_private(st, ::geteuid());
  if (!problem.empty()) return Error::generic("container directory " + path + ": " + problem);
  return ok();
}

bool id_char_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '+' || c == '-' || c == '.';
}

// A mount on a directory of a container's state (a killed restore leaves the rootfs bound at
// criu-root) is detached, never descended into: removing the state through it removed the
// rootfs's files. statx's mount-root bit, not st_dev: a bind from the same file system has
// the same device. False (and the directory kept) if it cannot be detached.
bool detach_if_mounted(int dirfd, const char* name) {
  struct statx sx;
  if (::statx(dirfd, name, AT_SYMLINK_NOFOLLOW, 0, &sx) < 0) return true;
  if (!(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) || !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) return true;
  std::string at = "/proc/self/fd/" + std::to_string(dirfd) + "/" + name;
  return ::umount2(at.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0;
}

// Removes everything under dirfd (one level of files plus nested dirs), never following links.
// Returns the first errno that stopped a removal (0: none), so that the caller can say why
// a directory stayed (a read-only state root gives EROFS, not a vague "busy").
int remove_tree_at(int parent, const char* name) {
  int first = 0;
  auto note = [&first](int r) {
    if (r < 0 && errno != ENOENT && first == 0) first = errno;
  };
  // Never into another mount (RESOLVE_NO_XDEV): a restore killed while CRIU ran leaves the
  // container's rootfs bound at criu-root, and walking into it would empty the rootfs. Such
  // a directory stays, and its rmdir says EBUSY. Where openat2 is missing (before 5.6), the
  // old open.
  struct open_how how = {};
  how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, parent, name, &how, sizeof(how)));
  if (fd < 0 && errno == ENOSYS) fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EXDEV) first = EBUSY;
  if (fd >= 0) {
    DIR* d = ::fdopendir(fd);
    if (d) {
      while (struct dirent* e = ::readdir(d)) {
        if (std::string_view(e->d_name) == "." || std::string_view(e->d_name) == "..") continue;
        if (e->d_type == DT_DIR) {
          if (!detach_if_mounted(::dirfd(d), e->d_name)) {
            note(-1);
            continue;
          }
          int e2 = remove_tree_at(::dirfd(d), e->d_name);
          if (first == 0) first = e2;
        } else {
          note(::unlinkat(::dirfd(d), e->d_name, 0));
        }
      }
      ::closedir(d);
    } else {
      ::close(fd);
    }
  }
  note(::unlinkat(parent, name, AT_REMOVEDIR));
  return first;
}

}  // namespace

Status validate_id(const std::string& id) {
  bool ok_chars = !id.empty() && std::all_of(id.begin(), id.end(), id_char_ok);
  if (!ok_chars || id == "." || id == "..") return Error::invalid_argument("invalid id format: " + id);
  return ok();
}

Status ContainerDir::lock() {
  int r;
  do r = ::flock(dirfd_.get(), LOCK_EX); while (r < 0 && errno == EINTR);
  if (r < 0) return Error::sys(errno, "lock container " + id_);
  return ok();
}

Result<ContainerRecord> ContainerDir::read_record() const {
  auto text = file::read(dirfd_.get(), kRecordFile, kMaxRecordBytes);
  if (!text) {
    // A directory without state.json is a create that never got far: nothing to show.
    if (text.error().err() == ENOENT) return Error::not_exist();
    return std::move(text).error();
  }
  return record_from_json(*text, path_ + "/" + kRecordFile);
}

// Each replacement of state.json costs a rename and, on a disk filesystem, writeback
// (docs/performance.md): skip writes that would change nothing.
Status ContainerDir::write_record(const ContainerRecord& record) {
  std::string text = record_to_json(record);
  if (text == last_record_) return ok();
  BERTH_TRY(file::write_atomic(dirfd_.get(), kRecordFile, text, 0600).context("write state of " + id_));
  last_record_ = std::move(text);
  return ok();
}

Result<spec::Spec> ContainerDir::read_config() const {
  BERTH_ASSIGN(auto text, file::read(dirfd_.get(), kConfigFile));
  return spec::parse_spec(text, path_ + "/" + kConfigFile);
}

Result<std::vector<spec::Hook>> ContainerDir::read_hooks(const char* key,
                                                          std::vector<spec::Hook> spec::Hooks::*which) const {
  BERTH_ASSIGN(auto text, file::read(dirfd_.get(), kConfigFile));
  // Our own copy (to_json): a key is never escaped there, so its absence is certain.
  if (text.find(key) == std::string::npos) return std::vector<spec::Hook>();
  BERTH_ASSIGN(auto spec, spec::parse_spec(text, path_ + "/" + kConfigFile));
  if (!spec.hooks) return std::vector<spec::Hook>();
  return std::move((*spec.hooks).*which);
}

Status ContainerDir::write_config(const spec::Spec& spec) {
  return file::write_atomic(dirfd_.get(), kConfigFile, spec::to_json(spec), 0600)
      .context("write config copy of " + id_);
}

bool ContainerDir::has_fifo() const {
  struct stat st;
  return ::fstatat(dirfd_.get(), kFifoFile, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

Status ContainerDir::mark_setting_up() {
  UniqueFd fd(::openat(dirfd_.get(), kSettingUpFile, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return Error::sys(errno, std::string("create ") + kSettingUpFile + " of " + id_);
  return ok();
}

Status ContainerDir::clear_setting_up() {
  if (::unlinkat(dirfd_.get(), kSettingUpFile, 0) < 0 && errno != ENOENT)
    return Error::sys(errno, std::string("remove ") + kSettingUpFile + " of " + id_);
  return ok();
}

bool ContainerDir::setting_up() const {
  struct stat st;
  return ::fstatat(dirfd_.get(), kSettingUpFile, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// The root and every directory above it are walked from "/" on fds and checked as they are
// opened (util/trusted_path.h); the fd of the checked root is what every later call uses.
Result<StateStore> StateStore::open(const std::string& root) {
  BERTH_ASSIGN(auto walked, trusted::open_dir(root, root_walk(true)));
  return StateStore(root, std::move(walked.fd));
}

Result<StateStore> StateStore::open_existing(const std::string& root) {
  BERTH_ASSIGN(auto walked, trusted::open_dir(root, root_walk(false)));
  return StateStore(root, std::move(walked.fd));
}

Result<ContainerDir> StateStore::create(const std::string& id) {
  BERTH_TRY(validate_id(id));
  if (::mkdirat(fd_.get(), id.c_str(), 0711) < 0) {
    if (errno == EEXIST) return Error(0, ErrorKind::kExists, "container with id exists: " + id);
    return Error::sys(errno, "create container directory " + id);
  }
  UniqueFd dfd(::openat(fd_.get(), id.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dfd) return Error::sys(errno, "open container directory " + id);
  BERTH_TRY(check_container_dir(dfd.get(), root_ + "/" + id));
  return ContainerDir(id, root_ + "/" + id, std::move(dfd));
}

Result<ContainerDir> StateStore::create_locked(const std::string& id, Rollback& undo) {
  BERTH_ASSIGN(auto dir, create(id));
  undo.push([root = root_, id] {
    auto s = StateStore::open_existing(root);
    if (s) (void)s->remove(id);
  });
  BERTH_TRY(dir.lock());
  return dir;
}

Result<ContainerDir> StateStore::open_container(const std::string& id) const {
  BERTH_TRY(validate_id(id));
  if (!fd_) return Error::not_exist();
  UniqueFd dfd(::openat(fd_.get(), id.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dfd) {
    if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) return Error::not_exist();
    return Error::sys(errno, "open container directory " + id);
  }
  BERTH_TRY(check_container_dir(dfd.get(), root_ + "/" + id));
  return ContainerDir(id, root_ + "/" + id, std::move(dfd));
}

Status StateStore::remove(const std::string& id) {
  BERTH_TRY(validate_id(id));
  if (!fd_) return ok();
  int err = remove_tree_at(fd_.get(), id.c_str());
  struct stat st;
  if (::fstatat(fd_.get(), id.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
    return Error::sys(err ? err : EBUSY, "remove container directory " + id);
  return ok();
}

Result<std::vector<std::string>> StateStore::list_ids() const {
  std::vector<std::string> ids;
  if (!fd_) return ids;
  int fd = ::openat(fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error::sys(errno, "open state root " + root_);
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return Error::sys(errno, "read state root " + root_);
  }
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (e->d_type != DT_DIR || name == "." || name == "..") continue;
    if (validate_id(name)) ids.push_back(name);
  }
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

Status write_pid_file(const std::string& path, pid_t pid) {
  std::string abs = linux::absolute_path(path);
  std::string dir = abs.substr(0, abs.rfind('/'));
  UniqueFd dfd(::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dfd) return Error::sys(errno, "open pid file directory " + dir);
  return file::write_atomic(dfd.get(), abs.substr(abs.rfind('/') + 1), std::to_string(pid), 0644)
      .context("write pid file");
}

}  // namespace berth::container
