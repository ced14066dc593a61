// Control-file access for one cgroup directory, through a directory fd opened once (no path
// walks per write), and the helpers every controller shares: writing a spec field's value
// so that a missing file names the field, reading numbers and "key value" files, rmdir with
// the EBUSY retry, and listing every process of a subtree.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"

namespace berth::cgroups {

// A cgroup directory: an fd owned elsewhere (the Manager) and its path, for messages.
class Dir {
 public:
  Dir() = default;
  Dir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  bool valid() const { return fd_ >= 0; }

  bool exists(std::string_view file) const;
  Result<std::string> read(std::string_view file) const;
  // One write(2) of `value`: cgroup files take one value per call.
  Status write(std::string_view file, std::string_view value) const;
  // Reads a single number; "max" reads as UINT64_MAX.
  Result<uint64_t> read_u64(std::string_view file) const;
  // The same, with a fallback for a missing or unreadable file (statistics).
  uint64_t read_u64_or(std::string_view file, uint64_t fallback) const;
  // Reads a flat keyed file ("key value" lines: memory.stat, cpu.stat, memory.events).
  Result<std::map<std::string, uint64_t>> read_keyed(std::string_view file) const;

 private:
  int fd_ = -1;
  std::string path_;
};

// Writes a spec field's value. A missing file means the host cannot honour the field, so
// the error names it: "linux.resources.network.classID: not supported on this host
// (/sys/fs/cgroup/x/net_cls.classid does not exist)". Other failures carry the field too.
Status write_field(const Dir& dir, std::string_view file, std::string_view value,
                   std::string_view field);
// The error for a field whose controller is absent from this host.
Error missing_controller(std::string_view field, std::string_view controller);

// "12345" or "max" → number; UINT64_MAX for "max".
Result<uint64_t> parse_u64_or_max(std::string_view s);
// Parses "key value" lines into a map (values that are not numbers are skipped).
std::map<std::string, uint64_t> parse_keyed(std::string_view content);

// rmdir of a cgroup and its children, depth first; ENOENT is success (idempotent);
// EBUSY is retried with a short backoff (a dying task still leaving), ~1 s at most.
Status remove_cgroup(const std::string& path);

// Every pid in the cgroup at `path` and below (cgroup.procs of each directory).
Result<std::vector<pid_t>> list_pids(const std::string& path);

// mkdir -p below an existing base; returns the directories it created, outermost first.
Result<std::vector<std::string>> make_dirs(const std::string& base, const std::string& rel);

}  // namespace berth::cgroups
