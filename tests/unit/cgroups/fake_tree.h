// A fake cgroup host for unit tests: a temporary directory with proc/self/mountinfo,
// proc/self/cgroup and sys/fs/cgroup/... holding plain files where the kernel would have
// control files. Plain files keep the last value written (berth writes with O_TRUNC).
#pragma once

#include <string>
#include <vector>

#include "cgroups/detect.h"

namespace berth::cgroups::testing {

class FakeTree {
 public:
  // v1 and hybrid mount these hierarchies (each entry one mount, "cpu,cpuacct" co-mounts).
  explicit FakeTree(Layout layout, std::vector<std::string> v1_mounts = default_v1_mounts());
  ~FakeTree();
  FakeTree(const FakeTree&) = delete;
  FakeTree& operator=(const FakeTree&) = delete;

  static std::vector<std::string> default_v1_mounts();

  const std::string& root() const { return root_; }
  Host host() const;  // probe(root())

  // Pre-creates the container's directory at `path` (relative to each mount) with the
  // control files the kernel would put there, as mkdir on cgroupfs does.
  void add_cgroup(const std::string& path);

  void write(const std::string& rel, const std::string& content) const;
  std::string read(const std::string& rel) const;  // trimmed of a trailing newline
  bool exists(const std::string& rel) const;
  // sys/fs/cgroup/<mount>/<path>/<file>, or sys/fs/cgroup[/unified]/<path>/<file> for "".
  std::string file(const std::string& mount, const std::string& path, const std::string& name) const;

 private:
  void add_v1_files(const std::string& mount, const std::string& dir);
  void add_v2_files(const std::string& dir);
  std::string unified_mount() const;

  Layout layout_;
  std::vector<std::string> mounts_;
  std::string root_;
};

}  // namespace berth::cgroups::testing
