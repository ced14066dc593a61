// RecordingSys (see recording_sys.h): the model of the file system, fds and mounts, the
// call counter that injects failures, and the text of fds, flags and modes in the log.
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/sysmacros.h>

#include <cstring>

#include "linux/paths.h"
#include "support/fakes/recording_sys.h"
#include "util/strings.h"

namespace berth::test {
namespace {

constexpr int kFdBase = 1 << 20;  // above the kernel's nr_open default: never a real fd
constexpr const char* kMagic = "/proc/thread-self/fd/";

std::string join(const std::string& dir, const std::string& name) {
  if (name.empty()) return dir;
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string parent(const std::string& p) {
  auto pos = p.rfind('/');
  return pos == 0 || pos == std::string::npos ? "/" : p.substr(0, pos);
}

const char* errno_name(int e) {
  switch (e) {
    case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ELOOP: return "ELOOP";
    case ENOTDIR: return "ENOTDIR";
    case EINVAL: return "EINVAL";
    case EBUSY: return "EBUSY";
    case ENOSYS: return "ENOSYS";
    case EROFS: return "EROFS";
    case ENOSPC: return "ENOSPC";
    case EXDEV: return "EXDEV";
    case EIO: return "EIO";
    default: return "E?";
  }
}

}  // namespace

std::string octal(unsigned v) {
  char buf[16];
  snprintf(buf, sizeof buf, "%#o", v);
  return buf;
}

RecordingSys::RecordingSys() {
  nodes_["/"] = Node{'d', 0755, 0, "", ""};
  add_dir("/dev");
  add_node("/dev/null", 'c', 1, 3);
  mounts_["/"] = "ext4";
}

void RecordingSys::add_dir(const std::string& path, mode_t mode) {
  std::string p = linux::clean_path(path);
  if (p != "/" && !nodes_.count(parent(p))) add_dir(parent(p));
  nodes_[p] = Node{'d', mode, 0, "", ""};
}

void RecordingSys::add_file(const std::string& path, const std::string& content, mode_t mode) {
  std::string p = linux::clean_path(path);
  add_dir(parent(p));
  nodes_[p] = Node{'f', mode, 0, "", content};
}

void RecordingSys::add_node(const std::string& path, char type, unsigned major, unsigned minor, mode_t mode) {
  std::string p = linux::clean_path(path);
  add_dir(parent(p));
  nodes_[p] = Node{type, mode, makedev(major, minor), "", ""};
}

void RecordingSys::add_symlink(const std::string& path, const std::string& target) {
  std::string p = linux::clean_path(path);
  add_dir(parent(p));
  nodes_[p] = Node{'l', 0777, 0, target, ""};
}

void RecordingSys::add_mount(const std::string& path, const std::string& fstype) { mounts_[linux::clean_path(path)] = fstype; }

void RecordingSys::fail(const std::string& call, int nth, int err) { failures_[{call, nth}] = err; }

int RecordingSys::fake_fd(const std::string& path) {
  int fd = kFdBase + next_fd_++;
  fds_[fd] = path;
  return fd;
}

std::string RecordingSys::show_fd(int fd) const {
  if (fd == AT_FDCWD) return "AT_FDCWD";
  if (fd >= kFdBase) return std::to_string(fd - kFdBase + 3);
  return std::to_string(fd);
}

std::string RecordingSys::log_text() const {
  std::string out;
  for (const auto& l : log_) out += l + "\n";
  return out;
}

int RecordingSys::begin(const std::string& call) {
  int n = ++calls_[call];
  auto it = failures_.find({call, n});
  return it == failures_.end() ? 0 : it->second;
}

Status RecordingSys::finish(const std::string& line, int err) {
  log_.push_back(err ? line + " = -" + errno_name(err) : line);
  if (err) return Error::sys(err, line.substr(0, line.find('(')));
  return ok();
}

template <class T>
Result<T> RecordingSys::finish_value(const std::string& line, int err, T value, const std::string& shown) {
  if (err) {
    log_.push_back(line + " = -" + errno_name(err));
    return Error::sys(err, line.substr(0, line.find('(')));
  }
  log_.push_back(line + " = " + shown);
  return value;
}

Result<UniqueFd> RecordingSys::new_fd(const std::string& line, int err, const std::string& path) {
  if (err) {
    log_.push_back(line + " = -" + errno_name(err));
    return Error::sys(err, line.substr(0, line.find('(')));
  }
  int fd = fake_fd(path);
  log_.push_back(line + " = " + show_fd(fd));
  return UniqueFd(fd);
}

// Strings in the log: quoted, with the fd of a magic link shown as the log shows fds.
std::string RecordingSys::q(const std::string& s) const {
  std::string shown = s;
  if (str::starts_with(s, kMagic)) {
    std::string rest = s.substr(std::strlen(kMagic));
    size_t slash = rest.find('/');
    if (auto n = str::parse_i64(rest.substr(0, slash)))
      shown = kMagic + show_fd(static_cast<int>(*n)) + (slash == std::string::npos ? "" : rest.substr(slash));
  }
  std::string out = "\"";
  for (char c : shown) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out + "\"";
}

std::string RecordingSys::dir_text(int dirfd) const { return show_fd(dirfd); }

std::string RecordingSys::path_of(int fd) const {
  if (fd == AT_FDCWD) return cwd_;
  auto it = fds_.find(fd);
  return it == fds_.end() ? "/<bad fd " + std::to_string(fd) + ">" : it->second;
}

std::string RecordingSys::host_path(int dirfd, const std::string& path) const {
  if (str::starts_with(path, kMagic)) {
    std::string rest = path.substr(std::strlen(kMagic));
    size_t slash = rest.find('/');
    auto n = str::parse_i64(rest.substr(0, slash));
    std::string base = n ? path_of(static_cast<int>(*n)) : "/<bad magic link>";
    return slash == std::string::npos ? base : linux::clean_path(base + rest.substr(slash));
  }
  if (!path.empty() && path[0] == '/') return linux::clean_path(root_ + path);
  return linux::clean_path(join(path_of(dirfd), path));
}

bool RecordingSys::permissive(const std::string& path) const {
  for (const auto& p : permissive_)
    if (path == p || str::starts_with(path, p + "/")) return true;
  return false;
}

int RecordingSys::walk(const std::string& root, const std::string& base, const std::string& path, bool follow_last,
                       bool no_symlinks, std::string* out) const {
  std::vector<std::string> todo;
  auto push_path = [&](const std::string& p) {
    std::vector<std::string> parts;
    size_t i = 0;
    while (i <= p.size()) {
      size_t j = p.find('/', i);
      if (j == std::string::npos) j = p.size();
      if (j > i) parts.push_back(p.substr(i, j - i));
      i = j + 1;
    }
    todo.insert(todo.begin(), parts.begin(), parts.end());
  };
  std::string cur = !path.empty() && path[0] == '/' ? root : base;
  push_path(path);
  int links = 0;
  while (!todo.empty()) {
    std::string comp = todo.front();
    todo.erase(todo.begin());
    if (comp == ".") continue;
    if (comp == "..") {
      if (cur != root) cur = parent(cur);
      continue;
    }
    std::string next = join(cur, comp);
    bool last = todo.empty();
    if (permissive(next)) {
      cur = next;
      continue;
    }
    auto it = nodes_.find(next);
    if (it == nodes_.end()) return ENOENT;
    if (it->second.kind == 'l' && (!last || follow_last)) {
      if (no_symlinks || ++links > 40) return ELOOP;
      const std::string& t = it->second.target;
      if (!t.empty() && t[0] == '/') cur = root;
      push_path(t);
      continue;
    }
    if (!last && it->second.kind != 'd') return ENOTDIR;
    cur = next;
  }
  *out = cur;
  return 0;
}

int RecordingSys::create(int dirfd, const std::string& path, Node node) {
  std::string p = host_path(dirfd, path);
  if (nodes_.count(p)) return EEXIST;
  auto par = nodes_.find(parent(p));
  if (par == nodes_.end()) return ENOENT;
  if (par->second.kind != 'd') return ENOTDIR;
  nodes_[p] = std::move(node);
  return 0;
}

std::string RecordingSys::fstype_at(const std::string& path) const {
  std::string best = "/";
  for (const auto& [mp, type] : mounts_)
    if ((path == mp || mp == "/" || str::starts_with(path, mp + "/")) && mp.size() >= best.size()) best = mp;
  return mounts_.at(best);
}

Result<struct stat> RecordingSys::fstat(int fd) {
  int err = begin("fstat");
  std::string line = "fstat(" + show_fd(fd) + ")";
  struct stat st {};
  auto it = nodes_.find(path_of(fd));
  // What the model does not know (a host bind source) is a directory.
  Node n = it == nodes_.end() ? Node{} : it->second;
  mode_t type = n.kind == 'f' ? S_IFREG : n.kind == 'c' ? S_IFCHR : n.kind == 'b' ? S_IFBLK
                : n.kind == 'p' ? S_IFIFO : n.kind == 'l' ? S_IFLNK : S_IFDIR;
  st.st_mode = type | n.mode;
  st.st_rdev = n.rdev;
  std::string shown = std::string(1, n.kind) + " " + octal(n.mode);
  if (n.kind == 'c' || n.kind == 'b') shown += " " + std::to_string(major(n.rdev)) + ":" + std::to_string(minor(n.rdev));
  return finish_value(line, err, st, shown);
}

Result<struct statfs> RecordingSys::fstatfs(int fd) {
  int err = begin("fstatfs");
  std::string type = fstype_at(path_of(fd));
  struct statfs st {};
  st.f_type = type == "proc" ? PROC_SUPER_MAGIC : type == "sysfs" ? SYSFS_MAGIC : type == "tmpfs" ? TMPFS_MAGIC
              : type == "cgroup2" ? CGROUP2_SUPER_MAGIC : EXT4_SUPER_MAGIC;
  return finish_value("fstatfs(" + show_fd(fd) + ")", err, st, type);
}

template Result<struct stat> RecordingSys::finish_value(const std::string&, int, struct stat, const std::string&);
template Result<struct statfs> RecordingSys::finish_value(const std::string&, int, struct statfs, const std::string&);
template Result<std::string> RecordingSys::finish_value(const std::string&, int, std::string, const std::string&);

}  // namespace berth::test
