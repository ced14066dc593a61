// Reading RDMA devices from sysfs (see host.h): class/infiniband, infiniband_verbs,
// infiniband_mad, misc/rdma_cm.
#include "devices/rdma/host.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include <algorithm>

#include "util/file.h"
#include "util/strings.h"

namespace berth::devices::rdma {
namespace {

// Entry names of a directory, sorted; empty when it does not exist.
Result<std::vector<std::string>> entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT) return out;
    return Error::sys(errno, "read " + dir);
  }
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// A one-line sysfs attribute without its newline; nullopt when the file is absent or
// unreadable (sysfs refuses reads of empty GID slots with EINVAL/EAGAIN).
std::optional<std::string> attribute(const std::string& path) {
  auto text = file::read(path, 4096);
  if (!text) return std::nullopt;
  return std::string(str::trim(*text));
}

Result<CharNode> char_node(const std::string& class_dir, const std::string& name) {
  std::string path = class_dir + "/" + name + "/dev";
  BERTH_ASSIGN(std::string text, file::read(path, 64));
  BERTH_ASSIGN(auto mm, parse_dev(text).context(path));
  return CharNode{name, mm.first, mm.second};
}

// Nodes of `klass` whose name starts with one of `prefixes` and whose ibdev is `device`.
Status add_nodes(const HostView& host, const std::string& klass, std::initializer_list<std::string_view> prefixes,
                 const std::string& device, std::vector<CharNode>& out) {
  std::string dir = host.sys + "/class/" + klass;
  BERTH_ASSIGN(auto names, entries(dir));
  for (const auto& n : names) {
    bool wanted = std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return str::starts_with(n, p); });
    if (!wanted) continue;  // abi_version and the like
    // Exact comparison: a prefix match would give mlx5_10's nodes to mlx5_1.
    if (attribute(dir + "/" + n + "/ibdev") != device) continue;
    BERTH_ASSIGN(CharNode node, char_node(dir, n));
    out.push_back(std::move(node));
  }
  return ok();
}

// Interfaces of the device: the PCI function's net/ folder (mlx5 Ethernet, IPoIB) and the
// netdev of each port's first GID (soft devices such as rxe have no device/ link).
Status add_netdevs(const std::string& base, HostDevice& d) {
  BERTH_ASSIGN(auto net, entries(base + "/device/net"));
  for (auto& n : net) d.netdevs.push_back(n);
  BERTH_ASSIGN(auto ports, entries(base + "/ports"));
  std::sort(ports.begin(), ports.end(), [](const std::string& a, const std::string& b) {
    return str::parse_u64(a).value_or(0) < str::parse_u64(b).value_or(0);
  });
  for (const auto& p : ports) {
    d.link_layers.push_back(attribute(base + "/ports/" + p + "/link_layer").value_or(""));
    auto nd = attribute(base + "/ports/" + p + "/gid_attrs/ndevs/0");
    if (nd && !nd->empty()) d.netdevs.push_back(*nd);
  }
  std::sort(d.netdevs.begin(), d.netdevs.end());
  d.netdevs.erase(std::unique(d.netdevs.begin(), d.netdevs.end()), d.netdevs.end());
  return ok();
}

}  // namespace

Result<std::pair<uint32_t, uint32_t>> parse_dev(std::string_view text) {
  std::string_view t = str::trim(text);
  size_t colon = t.find(':');
  if (colon == std::string_view::npos) return Error::sys(EINVAL, "parse device number " + std::string(t));
  auto major = str::parse_u64(t.substr(0, colon));
  auto minor = str::parse_u64(t.substr(colon + 1));
  if (!major || !minor || *major > 0xfff || *minor > 0xfffff)
    return Error::sys(EINVAL, "parse device number " + std::string(t));
  return std::pair<uint32_t, uint32_t>(static_cast<uint32_t>(*major), static_cast<uint32_t>(*minor));
}

Result<std::vector<std::string>> device_names(const HostView& host) { return entries(host.sys + "/class/infiniband"); }

Result<HostDevice> resolve(const HostView& host, const std::string& name) {
  HostDevice d;
  d.name = name;
  BERTH_TRY(add_nodes(host, "infiniband_verbs", {"uverbs"}, name, d.nodes).context("rdma device " + name));
  BERTH_TRY(add_nodes(host, "infiniband_mad", {"umad", "issm"}, name, d.nodes).context("rdma device " + name));
  std::string base = host.sys + "/class/infiniband/" + name;
  if (exists(base)) {
    BERTH_TRY(add_netdevs(base, d).context("rdma device " + name));
  } else if (d.nodes.empty()) {
    return Error::sys(ENODEV, "rdma device " + name);
  }
  // Else class/infiniband (tagged by network namespace) hides a device that exclusive mode
  // gave to another namespace, such as the pod sandbox an earlier container moved it into;
  // its nodes still show, its interfaces went with it.
  return d;
}

Result<std::optional<CharNode>> rdma_cm(const HostView& host) {
  std::string dir = host.sys + "/class/misc";
  if (!exists(dir + "/rdma_cm/dev")) return std::optional<CharNode>();
  BERTH_ASSIGN(CharNode n, char_node(dir, "rdma_cm"));
  return std::optional<CharNode>(std::move(n));
}

}  // namespace berth::devices::rdma
