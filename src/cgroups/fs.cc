// Control-file access and directory helpers shared by every controller: see fs.h.
#include "cgroups/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "util/file.h"
#include "util/strings.h"
#include "util/unique_fd.h"

namespace berth::cgroups {

static std::string join_path(const std::string& dir, std::string_view file) {
  std::string p = dir;
  if (p.empty() || p.back() != '/') p += '/';
  p += file;
  return p;
}

bool Dir::exists(std::string_view file) const {
  return ::faccessat(fd_, std::string(file).c_str(), F_OK, 0) == 0;
}

Result<std::string> Dir::read(std::string_view file) const {
  UniqueFd fd(::openat(fd_, std::string(file).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open " + join_path(path_, file));
  return file::read_fd(fd.get(), 1u << 20).context("read " + join_path(path_, file));
}

// O_TRUNC is ignored by cgroupfs (as for `echo v > file`) but lets a test tree of plain
// files hold exactly the last value written.
constexpr int kWriteFlags = O_WRONLY | O_TRUNC | O_CLOEXEC;

// runc's text for a refused value (`failed to write "7": write <path>: invalid argument`),
// which engines and people search for; write_field puts the spec field in front.
static Error write_error(int err, std::string_view value, const std::string& path) {
  return Error::sys(err, "failed to write \"" + std::string(value) + "\": write " + path);
}

Status Dir::write(std::string_view file, std::string_view value) const {
  UniqueFd fd(::openat(fd_, std::string(file).c_str(), kWriteFlags));
  if (!fd) return Error::sys(errno, "open " + join_path(path_, file));
  ssize_t n;
  do n = ::write(fd.get(), value.data(), value.size()); while (n < 0 && errno == EINTR);
  if (n < 0) return write_error(errno, value, join_path(path_, file));
  return ok();
}

Result<uint64_t> Dir::read_u64(std::string_view file) const {
  BERTH_ASSIGN(auto text, read(file));
  return parse_u64_or_max(str::trim(text)).context(join_path(path_, file));
}

uint64_t Dir::read_u64_or(std::string_view file, uint64_t fallback) const {
  auto v = read_u64(file);
  return v ? *v : fallback;
}

Result<std::map<std::string, uint64_t>> Dir::read_keyed(std::string_view file) const {
  BERTH_ASSIGN(auto text, read(file));
  return parse_keyed(text);
}

Status write_field(const Dir& dir, std::string_view file, std::string_view value,
                   std::string_view field) {
  UniqueFd fd(::openat(dir.fd(), std::string(file).c_str(), kWriteFlags));
  if (!fd) {
    int e = errno;
    if (e == ENOENT)
      return Error::unsupported(std::string(field) + ": not supported on this host (" +
                                join_path(dir.path(), file) + " does not exist)");
    return Error::sys(e, "open " + join_path(dir.path(), file)).context(field);
  }
  ssize_t n;
  do n = ::write(fd.get(), value.data(), value.size()); while (n < 0 && errno == EINTR);
  if (n < 0) return write_error(errno, value, join_path(dir.path(), file)).context(field);
  return ok();
}

Error missing_controller(std::string_view field, std::string_view controller) {
  return Error::unsupported(std::string(field) + ": not supported on this host (no " +
                            std::string(controller) + " cgroup controller is mounted)");
}

Result<uint64_t> parse_u64_or_max(std::string_view s) {
  if (s == "max") return UINT64_MAX;
  auto v = str::parse_u64(s);
  if (!v) return Error::generic("not a number: \"" + std::string(s) + "\"");
  return *v;
}

std::map<std::string, uint64_t> parse_keyed(std::string_view content) {
  std::map<std::string, uint64_t> out;
  for (const auto& line : str::split_nonempty(content, '\n')) {
    auto sp = line.find(' ');
    if (sp == std::string::npos) continue;
    auto v = str::parse_u64(str::trim(std::string_view(line).substr(sp + 1)));
    if (v) out[line.substr(0, sp)] = *v;
  }
  return out;
}

template <class F>
static Status for_each_subdir(const std::string& path, F&& f) {
  DIR* d = ::opendir(path.c_str());
  if (!d) return Error::sys(errno, "open " + path);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (e->d_type != DT_DIR || name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(d);
  for (const auto& n : names) BERTH_TRY(f(join_path(path, n)));
  return ok();
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

Status remove_cgroup(const std::string& path) {
  // Fast path: an empty leaf goes in one call.
  if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return ok();
  if (errno != EBUSY && errno != ENOTEMPTY) return Error::sys(errno, "rmdir " + path);
  // Children first (a container may have made sub-cgroups), then retry EBUSY: the kernel
  // keeps a cgroup busy until its last exiting task is released.
  auto st = for_each_subdir(path, [](const std::string& sub) { return remove_cgroup(sub); });
  if (!st) {
    if (st.error().err() == ENOENT) return ok();
    return st;
  }
  long delay = 1;
  for (int tries = 0;; ++tries) {
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return ok();
    if (errno != EBUSY || tries == 10) return Error::sys(errno, "rmdir " + path);
    sleep_ms(delay);
    delay *= 2;
  }
}

static Status collect_pids(const std::string& path, std::vector<pid_t>& out) {
  BERTH_ASSIGN(auto text, file::read(join_path(path, "cgroup.procs")));
  for (const auto& line : str::split_nonempty(text, '\n')) {
    auto v = str::parse_i64(str::trim(line));
    if (v && *v > 0) out.push_back(static_cast<pid_t>(*v));
  }
  return for_each_subdir(path, [&](const std::string& sub) { return collect_pids(sub, out); });
}

Result<std::vector<pid_t>> list_pids(const std::string& path) {
  std::vector<pid_t> out;
  BERTH_TRY(collect_pids(path, out));
  return out;
}

Result<std::vector<std::string>> make_dirs(const std::string& base, const std::string& rel) {
  std::vector<std::string> created;
  std::string cur = base;
  for (const auto& part : str::split_nonempty(rel, '/')) {
    cur = join_path(cur, part);
    if (::mkdir(cur.c_str(), 0755) == 0) {
      created.push_back(cur);
    } else if (errno != EEXIST) {
      int e = errno;
      for (auto it = created.rbegin(); it != created.rend(); ++it) ::rmdir(it->c_str());
      return Error::sys(e, "mkdir " + cur);
    }
  }
  return created;
}

}  // namespace berth::cgroups
