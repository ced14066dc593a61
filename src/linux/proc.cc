// /proc/<pid>/stat parsing and liveness (see proc.h).
#include "linux/proc.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "util/strings.h"

namespace berth::linux {

Result<ProcStat> parse_proc_stat(std::string_view text) {
  // "pid (comm) S ppid ..." — comm may contain ") ", so split at the last ')'.
  size_t close = text.rfind(')');
  if (close == std::string_view::npos || close + 2 >= text.size())
    return Error::generic("malformed /proc stat line");
  auto fields = str::split_nonempty(text.substr(close + 2), ' ');
  // fields[0] is field 3 (state); start time is field 22 → fields[19].
  if (fields.size() < 20) return Error::generic("malformed /proc stat line: too few fields");
  // The kernel's states are single letters (R S D Z T t X I P ...).
  if (fields[0].size() != 1 || !std::isalpha(static_cast<unsigned char>(fields[0][0])))
    return Error::generic("malformed /proc stat line: bad state");
  ProcStat st;
  st.state = fields[0][0];
  auto ppid = str::parse_i64(fields[1]);
  auto start = str::parse_u64(str::trim(fields[19]));
  if (!ppid || !start) return Error::generic("malformed /proc stat line: bad numbers");
  st.ppid = static_cast<pid_t>(*ppid);
  st.start_time = *start;
  return st;
}

Result<ProcStat> read_proc_stat(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::sys(errno, path);
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  int e = errno;
  ::close(fd);
  if (n <= 0) return Error::sys(n < 0 ? e : ESRCH, path);
  return parse_proc_stat(std::string_view(buf, static_cast<size_t>(n)));
}

bool process_alive(pid_t pid, uint64_t start_time) {
  if (pid <= 0) return false;
  auto st = read_proc_stat(pid);
  if (!st) return false;
  if (st->state == 'Z' || st->state == 'X' || st->state == 'x') return false;
  return start_time == 0 || st->start_time == start_time;
}

UniqueFd pin_process(pid_t pid, uint64_t start_time) {
  UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (fd && !process_alive(pid, start_time)) {
    fd.reset();
    errno = 0;
  }
  return fd;
}

}  // namespace berth::linux
