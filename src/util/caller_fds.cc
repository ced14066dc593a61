// The caller's fds (see caller_fds.h).
#include "util/caller_fds.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace berth::caller_fds {
namespace {

bool g_recorded = false;
std::vector<int> g_passed;  // sorted, fds >= 3 only

// Without /proc (a bare chroot): every fd below this is asked with fcntl. An fd above it
// counts as not passed, and is refused rather than trusted.
constexpr int kScanWithoutProc = 4096;

// /proc/self/fd through getdents64 (no opendir: no allocation, one fd, which is ours and
// left out by number). False if /proc cannot be read.
bool list_proc(std::vector<int>& out) {
  int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return false;
  alignas(8) char buf[4096];
  bool done = false, ok = true;
  while (!done) {
    long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n < 0) ok = false;
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + at);
      at += d->d_reclen;
      char* end = nullptr;
      long fd = std::strtol(d->d_name, &end, 10);
      if (end == d->d_name || *end != '\0' || fd < 3 || fd == dir) continue;
      out.push_back(static_cast<int>(fd));
    }
  }
  ::close(dir);
  return ok;
}

}  // namespace

void record() {
  g_passed.clear();
  if (!list_proc(g_passed)) {
    g_passed.clear();
    for (int fd = 3; fd < kScanWithoutProc; ++fd)
      if (::fcntl(fd, F_GETFD) >= 0) g_passed.push_back(fd);
  }
  std::sort(g_passed.begin(), g_passed.end());
  g_recorded = true;
}

bool passed(int fd) {
  if (!g_recorded) return fd >= 0 && ::fcntl(fd, F_GETFD) >= 0;
  return std::binary_search(g_passed.begin(), g_passed.end(), fd);
}

void cloexec_all_but_passed() {
  if (!g_recorded) return;
  unsigned from = 3;
  for (int fd : g_passed) {
    if (static_cast<unsigned>(fd) > from)
      ::syscall(SYS_close_range, from, static_cast<unsigned>(fd) - 1, CLOSE_RANGE_CLOEXEC);
    from = static_cast<unsigned>(fd) + 1;
  }
  ::syscall(SYS_close_range, from, ~0U, CLOSE_RANGE_CLOEXEC);
}

Result<int> check(int listen_fds, int preserve_fds) {
  for (int fd = 3; fd < 3 + listen_fds + preserve_fds; ++fd) {
    if (passed(fd)) continue;
    std::string what = fd < 3 + listen_fds ? "LISTEN_FDS=" + std::to_string(listen_fds)
                                           : "--preserve-fds " + std::to_string(preserve_fds);
    return Error::invalid_argument(what + ": fd " + std::to_string(fd) + " was not passed by the caller");
  }
  return listen_fds + preserve_fds;
}

}  // namespace berth::caller_fds
