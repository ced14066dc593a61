// RootDir: paths resolved inside a root with RESOLVE_IN_ROOT (see rootdir.h).
#include "devices/nvidia/rootdir.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "util/file.h"
#include "util/openat2.h"

namespace berth::devices::nvidia {

std::string join_root(const std::string& root, const std::string& in_root) {
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  if (r == "/") return in_root.empty() ? "/" : in_root;
  return r + (in_root.empty() || in_root[0] != '/' ? "/" : "") + in_root;
}

Result<RootDir> RootDir::open(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open " + path);
  char real[PATH_MAX];
  if (!::realpath(path.c_str(), real)) return Error::sys(errno, "realpath " + path);
  return RootDir(std::move(fd), path, real);
}

std::string RootDir::host_path(const std::string& in_root) const { return join_root(real_, in_root); }

Result<UniqueFd> RootDir::open_at(const std::string& path, int flags) const {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  std::string rel = path;
  while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);
  if (rel.empty()) rel = ".";
  int fd = util::openat2_retrying(fd_.get(), rel.c_str(), how);
  if (fd < 0) return Error::sys(errno, "open " + path + " in " + path_);
  return UniqueFd(fd);
}

Result<std::string> RootDir::resolve(const std::string& path) const {
  BERTH_ASSIGN(UniqueFd fd, open_at(path, O_PATH));
  char buf[PATH_MAX];
  std::string link = "/proc/self/fd/" + std::to_string(fd.get());
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n < 0) return Error::sys(errno, "readlink " + link);
  std::string full(buf, static_cast<size_t>(n));
  if (real_ == "/") return full;
  if (full == real_) return std::string("/");
  if (full.compare(0, real_.size() + 1, real_ + "/") != 0)
    return Error::generic("resolved " + path + " outside " + path_ + " (" + full + ")");
  return full.substr(real_.size());
}

bool RootDir::exists(const std::string& path) const { return open_at(path, O_PATH).ok(); }

bool RootDir::stat(const std::string& path, struct stat* st) const {
  auto fd = open_at(path, O_PATH);
  return fd && ::fstat(fd->get(), st) == 0;
}

Result<std::string> RootDir::read(const std::string& path, size_t max_bytes) const {
  BERTH_ASSIGN(UniqueFd fd, open_at(path, O_RDONLY | O_NOCTTY | O_NONBLOCK));
  struct stat st;
  if (::fstat(fd.get(), &st) < 0) return Error::sys(errno, "stat " + path);
  // Never read a FIFO or device planted in an image.
  if (!S_ISREG(st.st_mode)) return Error::generic(path + " in " + path_ + " is not a regular file");
  return file::read_fd(fd.get(), max_bytes);
}

std::vector<std::string> RootDir::list(const std::string& dir) const {
  std::vector<std::string> out;
  auto fd = open_at(dir, O_RDONLY | O_DIRECTORY);
  if (!fd) return out;
  DIR* d = ::fdopendir(fd->release());
  if (!d) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace berth::devices::nvidia
