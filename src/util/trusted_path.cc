// Walking a host path that berth must trust: the state root and org.criu.config (see
// trusted_path.h, docs/security.md "Paths berth trusts").
#include "util/trusted_path.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <deque>

#include "util/file.h"
#include "util/strings.h"

namespace berth::trusted {
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit (MAXSYMLINKS)

std::string mode_text(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

std::string uid_text(uid_t u) { return std::to_string(static_cast<unsigned long>(u)); }

// Root of a user namespace that does not map the host's root (rootless podman runs its
// runtime so) sees "/", /run and /run/user owned by the overflow uid: their real owner
// cannot be named from there. Such a parent is accepted (never a state root, a container
// directory or a CRIU file); read once, and only when a parent's owner is not trusted.
bool unmapped_owner(uid_t uid) {
  static const long overflow = [] {
    auto map = file::read("/proc/self/uid_map", 4096);
    if (!map) return -1L;  // no user namespaces: the initial one
    auto words = str::split_nonempty(*map, ' ');
    bool initial = words.size() >= 3 && words[0] == "0" && words[1] == "0" && str::trim(words[2]) == "4294967295";
    if (initial) return -1L;
    auto text = file::read("/proc/sys/kernel/overflowuid", 64);
    auto v = text ? str::parse_u64(str::trim(*text)) : std::nullopt;
    return v ? static_cast<long>(*v) : 65534L;
  }();
  return overflow >= 0 && static_cast<long>(uid) == overflow;
}

bool root_or_caller(uid_t owner, uid_t caller) { return owner == 0 || owner == caller; }

std::string not_root_or_caller(uid_t owner, uid_t caller) {
  if (caller == 0) return "owned by uid " + uid_text(owner) + ", not by root";
  return "owned by uid " + uid_text(owner) + ", neither root nor the caller (uid " + uid_text(caller) + ")";
}

std::string writable_by(mode_t m) {
  return std::string("writable by ") + ((m & S_IWOTH) ? "others" : "group") + " (mode " + mode_text(m) + ")";
}

struct Step {
  UniqueFd fd;  // O_PATH
  struct stat st {};
  std::string path;  // "" for "/"
};

std::vector<DirId> ids_of(const std::vector<Step>& stack) {
  std::vector<DirId> ids;
  for (const auto& s : stack) ids.push_back({s.st.st_dev, s.st.st_ino});
  return ids;
}

Error refused(const WalkOptions& o, const std::string& path, const std::string& where, const std::string& problem) {
  std::string text = o.what + " " + path + ": ";
  if (!where.empty()) text += where + ": ";
  return Error::generic(text + problem);
}

std::vector<std::string> components(const std::string& p) {
  auto v = str::split_nonempty(p, '/');
  std::erase(v, ".");
  return v;
}

class Walk {
 public:
  Walk(const std::string& path, const WalkOptions& o) : o_(o) {
    path_ = path;
    if (path_.empty() || path_[0] != '/') {
      char cwd[PATH_MAX];
      if (::getcwd(cwd, sizeof cwd)) path_ = std::string(cwd) + "/" + path_;
    }
    for (auto& c : components(path_)) todo_.push_back(std::move(c));
  }

  // Walks every component but the last one of a file (`file`), or all of a directory's.
  // Returns false when a component is missing (and not made).
  Result<bool> run(bool file) {
    BERTH_TRY(push_root());
    int links = 0;
    while (!todo_.empty()) {
      if (file && todo_.size() == 1) return true;
      std::string name = std::move(todo_.front());
      todo_.pop_front();
      if (name == "..") {
        if (stack_.size() > 1) stack_.pop_back();
        continue;
      }
      BERTH_TRY(check_top_as_parent());
      BERTH_ASSIGN(bool found, step(name, file, links));
      if (!found) return false;
    }
    return true;
  }

  Step& top() { return stack_.back(); }
  const std::string& path() const { return path_; }
  std::string last() const { return todo_.empty() ? "" : todo_.front(); }
  std::string shown(const std::string& name) { return top().path + "/" + name; }
  std::vector<DirId> dirs() const { return ids_of(stack_); }
  Status check_top_as_parent() {
    std::string problem = check_parent(top().st, o_.caller);
    if (problem.empty()) return ok();
    return refused(o_, path_, top().path.empty() ? "/" : top().path, problem);
  }

 private:
  Status push_root() {
    Step s;
    s.fd.reset(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!s.fd || ::fstat(s.fd.get(), &s.st) < 0) return Error::sys(errno, o_.what + " " + path_ + ": open /");
    stack_.clear();
    stack_.push_back(std::move(s));
    return ok();
  }

  Result<bool> step(const std::string& name, bool file, int& links) {
    std::string where = shown(name);
    UniqueFd fd(::openat(top().fd.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd && errno == ENOENT && o_.create && !file) {
      // Made in a parent checked above: nobody else can have renamed it in meanwhile, and
      // an entry someone planted first (a sticky /tmp) is refused below by its owner.
      if (::mkdirat(top().fd.get(), name.c_str(), 0700) < 0 && errno != EEXIST)
        return Error::sys(errno, o_.what + " " + path_ + ": mkdir " + where);
      fd.reset(::openat(top().fd.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    }
    if (!fd && errno == ENOENT) return false;
    if (!fd) return Error::sys(errno, o_.what + " " + path_ + ": open " + where);
    Step s;
    if (::fstat(fd.get(), &s.st) < 0) return Error::sys(errno, o_.what + " " + path_ + ": stat " + where);
    if (S_ISLNK(s.st.st_mode)) {
      BERTH_TRY(follow(fd.get(), s.st, where, links));
      return true;
    }
    if (!S_ISDIR(s.st.st_mode)) return refused(o_, path_, where, "not a directory");
    s.fd = std::move(fd);
    s.path = where;
    stack_.push_back(std::move(s));
    return true;
  }

  // A link of root or the caller in a directory checked above leads where they chose.
  Status follow(int link, const struct stat& st, const std::string& where, int& links) {
    if (!root_or_caller(st.st_uid, o_.caller))
      return refused(o_, path_, where, "a symbolic link " + not_root_or_caller(st.st_uid, o_.caller) + ": not followed");
    if (++links > kMaxLinks) return Error::sys(ELOOP, o_.what + " " + path_);
    char buf[PATH_MAX];
    ssize_t n = ::readlinkat(link, "", buf, sizeof buf);
    if (n < 0 || n == static_cast<ssize_t>(sizeof buf))
      return Error::sys(n < 0 ? errno : ENAMETOOLONG, o_.what + " " + path_ + ": readlink " + where);
    std::string target(buf, static_cast<size_t>(n));
    auto parts = components(target);
    todo_.insert(todo_.begin(), parts.begin(), parts.end());
    if (!target.empty() && target[0] == '/') stack_.resize(1);
    return ok();
  }

  const WalkOptions& o_;
  std::string path_;
  std::deque<std::string> todo_;
  std::vector<Step> stack_;
};

}  // namespace

std::string check_parent(const struct stat& st, uid_t caller) {
  if (!root_or_caller(st.st_uid, caller) && !unmapped_owner(st.st_uid)) return not_root_or_caller(st.st_uid, caller);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) return writable_by(st.st_mode) + " without the sticky bit";
  return "";
}

std::string check_private(const struct stat& st, uid_t caller) {
  if (st.st_uid != caller)
    return "owned by uid " + uid_text(st.st_uid) + ", not by the caller (uid " + uid_text(caller) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return writable_by(st.st_mode);
  return "";
}

Result<Walked> open_dir(const std::string& path, const WalkOptions& o) {
  Walk w(path, o);
  BERTH_ASSIGN(bool found, w.run(false));
  Walked out;
  out.path = w.top().path.empty() ? "/" : w.top().path;
  out.dirs = w.dirs();
  if (!found) {
    out.missing = true;
    return out;
  }
  out.st = w.top().st;
  std::string problem = check_private(out.st, o.caller);
  if (!problem.empty()) return refused(o, w.path(), "", problem);
  out.fd.reset(::openat(w.top().fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!out.fd) return Error::sys(errno, "open " + o.what + " " + w.path());
  return out;
}

Result<Walked> open_file(const std::string& path, const WalkOptions& o) {
  Walk w(path, o);
  BERTH_ASSIGN(bool found, w.run(true));
  Walked out;
  out.dirs = w.dirs();
  if (!found) {
    out.missing = true;
    out.path = w.path();
    return out;
  }
  std::string name = w.last();
  if (name.empty() || name == "..") return refused(o, w.path(), "", "not a regular file");
  BERTH_TRY(w.check_top_as_parent());
  out.path = w.shown(name);
  struct stat lst;
  if (::fstatat(w.top().fd.get(), name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) < 0) {
    if (errno != ENOENT) return Error::sys(errno, o.what + " " + w.path());
    out.missing = true;
    out.dirs = w.dirs();
    return out;
  }
  if (S_ISLNK(lst.st_mode)) return refused(o, w.path(), "", "a symbolic link (not followed)");
  if (!S_ISREG(lst.st_mode)) return refused(o, w.path(), "", "not a regular file");
  out.fd.reset(::openat(w.top().fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!out.fd) return Error::sys(errno, o.what + " " + w.path());
  // The checks that count are on the opened fd: whatever was there at the lstat.
  if (::fstat(out.fd.get(), &out.st) < 0) return Error::sys(errno, o.what + " " + w.path());
  if (!S_ISREG(out.st.st_mode)) return refused(o, w.path(), "", "not a regular file");
  if (!root_or_caller(out.st.st_uid, o.caller)) return refused(o, w.path(), "", not_root_or_caller(out.st.st_uid, o.caller));
  if (out.st.st_mode & (S_IWGRP | S_IWOTH)) return refused(o, w.path(), "", writable_by(out.st.st_mode));
  return out;
}

}  // namespace berth::trusted
