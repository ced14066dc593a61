// Host cgroup layout, read once per process from /proc/self/mountinfo and /proc/self/cgroup
// (or the same files under a test root): v1 (controllers in their own hierarchies), pure v2
// (cgroup2 at /sys/fs/cgroup) or hybrid (v1 controllers plus a controller-less cgroup2,
// usually at /sys/fs/cgroup/unified, as systemd's "hybrid" mode mounts it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"

namespace berth::cgroups {

enum class Layout { kV1, kV2, kHybrid };
std::string_view to_string(Layout layout);

// One mounted hierarchy.
struct Hierarchy {
  std::vector<std::string> controllers;  // {"cpu","cpuacct"}, {"name=systemd"}; empty for cgroup2
  std::string mountpoint;  // as the host sees it ("/sys/fs/cgroup/cpu")
  std::string root;        // the mount's root within the hierarchy (mountinfo field 4)
  std::string own;         // this process's cgroup in the hierarchy (/proc/self/cgroup)
  bool has(std::string_view controller) const;
};

struct Host {
  Layout layout = Layout::kV1;
  std::string prefix;                 // "" on a real host; a fake tree's directory in tests
  std::vector<Hierarchy> v1;          // v1 and hybrid
  std::optional<Hierarchy> unified;   // v2 and hybrid
  bool systemd_running = false;       // <prefix>/run/systemd/system is a directory (sd_booted)

  // The real directory of a hierarchy path: prefix + mountpoint + rel.
  std::string dir(const Hierarchy& h, std::string_view rel = {}) const;
  const Hierarchy* find_v1(std::string_view controller) const;
};

// Parses the two files (exposed for tests).
Result<Host> parse_host(std::string_view mountinfo, std::string_view self_cgroup);
// Reads <prefix>/proc/self/mountinfo and <prefix>/proc/self/cgroup.
Result<Host> probe(const std::string& prefix = "");
// The real host, probed on first use and then kept: no operation re-reads mountinfo.
const Result<Host>& host();

// The layout alone (the brief's detect()).
Result<Layout> detect(const std::string& prefix = "");

}  // namespace berth::cgroups
