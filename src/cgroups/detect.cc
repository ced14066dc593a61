// Host layout detection (v1 | v2 | hybrid) from mountinfo and /proc/self/cgroup: detect.h.
#include "cgroups/detect.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "util/mountinfo.h"
#include "util/file.h"
#include "util/strings.h"

namespace berth::cgroups {

std::string_view to_string(Layout layout) {
  switch (layout) {
    case Layout::kV1: return "v1";
    case Layout::kV2: return "v2";
    case Layout::kHybrid: return "hybrid";
  }
  return "?";
}

bool Hierarchy::has(std::string_view c) const {
  return std::find(controllers.begin(), controllers.end(), c) != controllers.end();
}

std::string Host::dir(const Hierarchy& h, std::string_view rel) const {
  std::string out = prefix + h.mountpoint;
  if (!rel.empty() && rel != "/") {
    if (rel.front() != '/') out += '/';
    out += rel;
  }
  return out;
}

const Hierarchy* Host::find_v1(std::string_view controller) const {
  for (const auto& h : v1)
    if (h.has(controller)) return &h;
  return nullptr;
}

static bool is_v1_controller(std::string_view opt) {
  static const char* kKnown[] = {"cpuset", "cpu",     "cpuacct", "blkio",      "memory",
                                 "devices", "freezer", "net_cls", "perf_event", "net_prio",
                                 "hugetlb", "pids",    "rdma",    "misc"};
  for (auto k : kKnown)
    if (opt == k) return true;
  return str::starts_with(opt, "name=");
}

struct Mount {
  std::string fstype, root, mountpoint, super;
};

static std::vector<Mount> cgroup_mounts(std::string_view mountinfo) {
  std::vector<Mount> out;
  for (const auto& line : str::split_nonempty(mountinfo, '\n')) {
    auto f = str::split(line, ' ');
    // id parent maj:min root mountpoint options [optional...] - fstype source superopts:
    // the separator comes after the six fixed fields, whatever those contain.
    if (f.size() < 7) continue;
    auto dash = std::find(f.begin() + 6, f.end(), "-");
    if (dash == f.end() || f.end() - dash < 4) continue;
    std::string fstype = *(dash + 1);
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    out.push_back({fstype, unescape_mountinfo(f[3]), unescape_mountinfo(f[4]), *(dash + 3)});
  }
  return out;
}

// "hier:controllers:path" lines → controller (or "" for cgroup2) → path.
static std::map<std::string, std::string> own_cgroups(std::string_view self_cgroup) {
  std::map<std::string, std::string> out;
  for (const auto& line : str::split_nonempty(self_cgroup, '\n')) {
    auto c1 = line.find(':');
    auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    std::string path = line.substr(c2 + 1);
    std::string ctrls = line.substr(c1 + 1, c2 - c1 - 1);
    if (ctrls.empty()) {
      out[""] = path;
      continue;
    }
    for (const auto& c : str::split_nonempty(ctrls, ',')) out[c] = path;
  }
  return out;
}

Result<Host> parse_host(std::string_view mountinfo, std::string_view self_cgroup) {
  Host host;
  auto own = own_cgroups(self_cgroup);
  std::vector<Hierarchy> v2;
  for (const auto& m : cgroup_mounts(mountinfo)) {
    Hierarchy h;
    h.mountpoint = m.mountpoint;
    h.root = m.root;
    if (m.fstype == "cgroup2") {
      h.own = own.count("") ? own[""] : "/";
      v2.push_back(std::move(h));
      continue;
    }
    for (const auto& opt : str::split_nonempty(m.super, ','))
      if (is_v1_controller(opt)) h.controllers.push_back(opt);
    if (h.controllers.empty()) continue;
    // A hierarchy mounted twice (a bind mount) counts once, as runc takes the first.
    bool seen = std::any_of(host.v1.begin(), host.v1.end(),
                            [&](const Hierarchy& o) { return o.controllers == h.controllers; });
    if (seen) continue;
    h.own = own.count(h.controllers[0]) ? own[h.controllers[0]] : "/";
    host.v1.push_back(std::move(h));
  }
  auto at = [&](std::string_view mp) {
    return std::find_if(v2.begin(), v2.end(), [&](const Hierarchy& h) { return h.mountpoint == mp; });
  };
  if (auto it = at("/sys/fs/cgroup"); it != v2.end()) {
    // cgroup2 on /sys/fs/cgroup is a pure v2 host whatever else is mounted (as runc decides).
    host.layout = Layout::kV2;
    host.unified = *it;
    host.v1.clear();
    return host;
  }
  if (host.v1.empty()) {
    if (v2.empty()) return Error::generic("cgroups: no cgroup mount found in mountinfo");
    host.layout = Layout::kV2;
    host.unified = v2.front();
    return host;
  }
  host.layout = v2.empty() ? Layout::kV1 : Layout::kHybrid;
  if (!v2.empty()) {
    auto it = at("/sys/fs/cgroup/unified");
    host.unified = it != v2.end() ? *it : v2.front();
  }
  return host;
}

Result<Host> probe(const std::string& prefix) {
  BERTH_ASSIGN(auto mountinfo, file::read(prefix + "/proc/self/mountinfo"));
  BERTH_ASSIGN(auto self_cgroup, file::read(prefix + "/proc/self/cgroup"));
  BERTH_ASSIGN(auto host, parse_host(mountinfo, self_cgroup));
  host.prefix = prefix;
  struct stat st;
  host.systemd_running = ::lstat((prefix + "/run/systemd/system").c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  return host;
}

const Result<Host>& host() {
  static const Result<Host> kHost = probe("");
  return kHost;
}

Result<Layout> detect(const std::string& prefix) {
  if (prefix.empty()) {
    const auto& h = host();
    if (!h) return h.error();
    return h->layout;
  }
  BERTH_ASSIGN(auto h, probe(prefix));
  return h.layout;
}

}  // namespace berth::cgroups
