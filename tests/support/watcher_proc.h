// /proc reading shared by the static watchers that run inside test containers
// (visibility_watcher.cc, ptrace_window_watcher.cc): whole files, links, mount ids.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>

namespace watcher {

inline std::string read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

inline std::string link_of(const std::string& path) {
  char buf[512];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// The mount id of `path` (0 if statx cannot say); its type in *mode.
inline unsigned long long mount_id(const std::string& path, mode_t* mode) {
  struct statx sx {};
  if (::syscall(SYS_statx, AT_FDCWD, path.c_str(), 0, STATX_MNT_ID | STATX_TYPE, &sx) < 0) return 0;
  if (!(sx.stx_mask & STATX_MNT_ID)) return 0;
  if (mode) *mode = sx.stx_mode;
  return sx.stx_mnt_id;
}

// The first field of every mountinfo line: the mount ids of that view.
inline std::set<unsigned long long> mount_ids(const std::string& mountinfo) {
  std::set<unsigned long long> ids;
  for (size_t at = 0; at < mountinfo.size();) {
    ids.insert(std::strtoull(mountinfo.c_str() + at, nullptr, 10));
    size_t nl = mountinfo.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return ids;
}

// The file the test waits for before it starts the runtime: the watcher scans by then.
inline void mark_ready(const std::string& out_dir) {
  ::close(::open((out_dir + "/ready").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
}

// As the container's init, reap what reparented to us (sh -c children of execs).
inline void reap_children() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

// The watchers' loop: passes over /proc until OUT_DIR/stop appears (looked for every 64
// passes), visit(pid) for every process but us until it answers true for that pid (done
// with it); the ready mark after the first pass, reaping after each. False when /proc
// cannot be listed.
template <class Visit>
bool scan_proc_until_stopped(const std::string& out_dir, Visit visit) {
  int self = ::getpid();
  std::set<int> done;
  bool ready = false;
  std::string stop = out_dir + "/stop";
  for (unsigned long pass = 0;; ++pass) {
    if (pass % 64 == 0 && ::access(stop.c_str(), F_OK) == 0) return true;
    DIR* d = ::opendir("/proc");
    if (!d) return false;
    while (dirent* e = ::readdir(d)) {
      int pid = std::atoi(e->d_name);
      if (pid <= 0 || pid == self || done.count(pid)) continue;
      if (visit(pid)) done.insert(pid);
    }
    ::closedir(d);
    if (!ready) {
      ready = true;
      mark_ready(out_dir);
    }
    reap_children();
  }
}

}  // namespace watcher
