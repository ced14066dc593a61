// Reading /proc/<pid>: the fields berth needs to tell whether a pid is still the process it
// started (state + start time), and small /proc helpers shared by several modules.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "berth/result.h"
#include "util/unique_fd.h"

namespace berth::linux {

struct ProcStat {
  char state = '?';          // R S D Z X T ...
  pid_t ppid = 0;
  uint64_t start_time = 0;   // clock ticks since boot (field 22)
};

// Parses the text of /proc/<pid>/stat (the command name may hold spaces and parentheses).
Result<ProcStat> parse_proc_stat(std::string_view text);
// ENOENT when the process is gone.
Result<ProcStat> read_proc_stat(pid_t pid);

// True when pid exists, is not a zombie/dead, and started at start_time (0 = don't check).
bool process_alive(pid_t pid, uint64_t start_time);
// A pidfd for `pid` only while it is still the process that started at `start_time`: what
// is signalled or joined through it afterwards cannot be a process that reused the number.
// Invalid when pidfd_open fails (errno from it) or the pid is no longer that process
// (errno 0).
UniqueFd pin_process(pid_t pid, uint64_t start_time);

}  // namespace berth::linux
