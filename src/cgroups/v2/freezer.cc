// v2 freezer (pause/resume): cgroup.freeze, and "frozen 1" in cgroup.events once every
// task has stopped. cgroup.events signals changes to poll(2) as POLLPRI.
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "cgroups/v2/v2.h"
#include "util/file.h"
#include "util/strings.h"

namespace berth::cgroups::v2 {
namespace {

Result<bool> read_frozen(int fd, const std::string& path) {
  char buf[512];
  ssize_t n;
  do n = ::pread(fd, buf, sizeof buf - 1, 0); while (n < 0 && errno == EINTR);
  if (n < 0) return Error::sys(errno, "read " + path);
  for (const auto& line : str::split_nonempty(std::string_view(buf, static_cast<size_t>(n)), '\n'))
    if (str::trim(line) == "frozen 1") return true;
  return false;
}

int64_t now_ms() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

Status wait_frozen(const Dir& d) {
  std::string path = d.path() + "/cgroup.events";
  UniqueFd fd(::openat(d.fd(), "cgroup.events", O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open " + path);
  const int64_t deadline = now_ms() + 10000;  // runc gives up after 10 s as well
  while (true) {
    BERTH_ASSIGN(bool frozen, read_frozen(fd.get(), path));
    if (frozen) return ok();
    int64_t left = deadline - now_ms();
    if (left <= 0) return Error::sys(ETIMEDOUT, "wait for \"frozen 1\" in " + path);
    struct pollfd p = {fd.get(), POLLPRI, 0};
    int r = ::poll(&p, 1, static_cast<int>(left < 100 ? left : 100));
    if (r < 0 && errno != EINTR) return Error::sys(errno, "poll " + path);
  }
}

}  // namespace

Status freeze(const Dir& d) {
  BERTH_TRY(d.write("cgroup.freeze", "1"));
  auto st = wait_frozen(d);
  if (!st) (void)d.write("cgroup.freeze", "0");  // do not leave it half frozen
  return st;
}

Status thaw(const Dir& d) { return d.write("cgroup.freeze", "0"); }

Result<bool> frozen(const Dir& d) {
  UniqueFd fd(::openat(d.fd(), "cgroup.events", O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open " + d.path() + "/cgroup.events");
  return read_frozen(fd.get(), d.path() + "/cgroup.events");
}

}  // namespace berth::cgroups::v2
