// Census of what containers may leave on the host (see census.h).
#include "reliability/census.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace berth::test {
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Every entry below `dir` (relative names), directories marked with a trailing '/'.
void walk(const fs::path& dir, const fs::path& rel, bool dirs_only, std::vector<std::string>* out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    bool is_dir = it->is_directory(ec) && !it->is_symlink(ec);
    fs::path r = rel / it->path().filename();
    if (is_dir) {
      out->push_back(r.string() + "/");
      walk(it->path(), r, dirs_only, out);
    } else if (!dirs_only) {
      out->push_back(r.string());
    }
  }
}

struct ProcEntry {
  pid_t ppid = 0;
  char state = '?';
  std::string comm;
};

std::map<pid_t, ProcEntry> all_processes() {
  std::map<pid_t, ProcEntry> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (struct dirent* e = ::readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string text = read_volatile("/proc/" + std::to_string(pid) + "/stat");
    size_t open = text.find('('), close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 4 > text.size()) continue;
    ProcEntry p;
    p.comm = text.substr(open + 1, close - open - 1);
    std::istringstream rest(text.substr(close + 2));
    rest >> p.state >> p.ppid;
    out[pid] = p;
  }
  ::closedir(d);
  return out;
}

std::vector<std::string> process_lines() {
  auto procs = all_processes();
  std::vector<std::string> out;
  for (pid_t pid : descendants()) {
    auto it = procs.find(pid);
    if (it == procs.end()) continue;
    out.push_back(std::to_string(pid) + " " + it->second.state + " " + it->second.comm);
  }
  return out;
}

std::vector<std::string> fd_lines() {
  std::vector<std::string> out;
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return out;
  int own = ::dirfd(d);
  while (struct dirent* e = ::readdir(d)) {
    int fd = std::atoi(e->d_name);
    if (e->d_name[0] == '.' || fd == own) continue;
    char target[4096];
    ssize_t n = ::readlinkat(own, e->d_name, target, sizeof target - 1);
    target[n < 0 ? 0 : n] = 0;
    out.push_back(std::string(e->d_name) + " -> " + target);
  }
  ::closedir(d);
  return sorted(out);
}

std::vector<std::string> mount_lines_under(const std::vector<std::string>& prefixes) {
  std::ifstream f("/proc/self/mountinfo");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string id, parent, dev, root, mountpoint;
    in >> id >> parent >> dev >> root >> mountpoint;
    for (const auto& p : prefixes)
      if (starts_with(mountpoint, p)) {
        // The id and parent id change with every mount; what was mounted where does not.
        out.push_back(mountpoint + " " + root + " " + line.substr(line.find(" - ") + 3));
        break;
      }
  }
  return sorted(out);
}

bool is_temp_name(const std::string& name) {
  return name.size() > 1 && name[0] == '.' && name.find(".tmp") != std::string::npos;
}

void add_diff(const char* what, const std::vector<std::string>& before, const std::vector<std::string>& after,
              std::string* out) {
  std::multiset<std::string> b(before.begin(), before.end()), a(after.begin(), after.end());
  for (const auto& x : a)
    if (b.count(x) < a.count(x) && out->find("+ " + std::string(what) + ": " + x + "\n") == std::string::npos)
      *out += "+ " + std::string(what) + ": " + x + "\n";
  for (const auto& x : b)
    if (a.count(x) < b.count(x) && out->find("- " + std::string(what) + ": " + x + "\n") == std::string::npos)
      *out += "- " + std::string(what) + ": " + x + "\n";
}

}  // namespace

std::string read_volatile(const std::string& path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::vector<pid_t> descendants() {
  auto procs = all_processes();
  std::vector<pid_t> out;
  std::set<pid_t> tree = {::getpid()};
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& [pid, p] : procs)
      if (tree.count(p.ppid) && !tree.count(pid)) {
        tree.insert(pid);
        out.push_back(pid);
        grew = true;
      }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> stable_netdevs() {
  std::vector<std::string> out = {"lo"};
  std::ifstream f("/proc/net/route");
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string dev, dest;
    in >> dev >> dest;
    if (dest == "00000000" && dev != "lo") {
      out.push_back(dev);
      break;
    }
  }
  return out;
}

std::vector<std::string> cgroup_mounts() {
  std::ifstream f("/proc/self/mountinfo");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string id, parent, dev, root, mountpoint;
    in >> id >> parent >> dev >> root >> mountpoint;
    std::string tail = line.substr(line.find(" - ") + 3);
    if (starts_with(tail, "cgroup ") || starts_with(tail, "cgroup2 ")) out.push_back(mountpoint);
  }
  return sorted(out);
}

void remove_cgroup_parent(const std::string& rel) {
  for (const auto& m : cgroup_mounts()) {
    std::vector<std::string> dirs;
    fs::path top = m + rel;
    walk(top, "", true, &dirs);
    std::sort(dirs.rbegin(), dirs.rend());  // children before parents
    for (const auto& d : dirs) ::rmdir((top / d).c_str());
    ::rmdir(top.c_str());
  }
}

Census take_census(const CensusScope& scope) {
  Census c;
  c.mounts = mount_lines_under(scope.mount_prefixes);
  if (!scope.cgroup_parent.empty())
    for (const auto& m : cgroup_mounts()) {
      std::vector<std::string> dirs;
      walk(m + scope.cgroup_parent, "", true, &dirs);
      for (const auto& d : dirs) c.cgroups.push_back(m + scope.cgroup_parent + "/" + d);
    }
  c.cgroups = sorted(c.cgroups);
  if (!scope.state_root.empty()) {
    std::vector<std::string> entries;
    walk(scope.state_root, "", false, &entries);
    // Compiled seccomp filters are a cache meant to outlive containers; its temp files not.
    for (const auto& e : entries)
      if (!starts_with(e, ".seccomp-cache/") || is_temp_name(fs::path(e).filename()))
        c.state.push_back(e);
    c.state = sorted(c.state);
  }
  for (const auto& d : scope.temp_dirs) {
    std::vector<std::string> entries;
    walk(d, "", false, &entries);
    for (const auto& e : entries)
      if (is_temp_name(fs::path(e).filename())) c.temp_files.push_back(d + "/" + e);
  }
  c.temp_files = sorted(c.temp_files);
  c.processes = process_lines();
  c.fds = fd_lines();
  for (const auto& n : scope.netdevs)
    if (::access(("/sys/class/net/" + n).c_str(), F_OK) == 0) c.netdevs.push_back(n);
  return c;
}

std::string Census::leftovers(const Census& after) const {
  std::string out;
  add_diff("mount", mounts, after.mounts, &out);
  add_diff("cgroup", cgroups, after.cgroups, &out);
  add_diff("state", state, after.state, &out);
  add_diff("temp file", temp_files, after.temp_files, &out);
  add_diff("process", processes, after.processes, &out);
  add_diff("fd", fds, after.fds, &out);
  add_diff("netdev", netdevs, after.netdevs, &out);
  return out;
}

int reap_children(int timeout_ms) {
  int reaped = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    pid_t p;
    while ((p = ::waitpid(-1, nullptr, WNOHANG)) > 0) ++reaped;
    if (p < 0 || descendants().empty() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return reaped;
}

}  // namespace berth::test
