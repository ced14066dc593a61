// The RDMA request (annotation org.berth.rdma.devices) → device nodes, cgroup rules and
// netns moves (see request.h).
#include "devices/rdma/request.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include "util/strings.h"

namespace berth::devices::rdma {
namespace {

std::string where() { return std::string("config.json: annotations[\"") + kAnnotation + "\"]"; }

// Kernel RDMA device names: letters, digits, '_', '-', '.' (mlx5_0, rxe0, siw-eth0...).
bool valid_name(const std::string& n) {
  if (n.empty() || n == "." || n == ".." || n.size() > 64) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

// The node keeps the host's mode and owner, as DRI nodes do: the kernel makes uverbs* and
// rdma_cm 0666 but umad* and issm* 0600 (site udev rules often 0660 to a group), because
// a umad or issm node sends management datagrams to the whole fabric (subnet manager
// traffic). Without a host node of that device (udev has not run, a fake host) the same
// defaults, root-owned.
DeviceNode to_edit(const HostView& host, const CharNode& n) {
  DeviceNode d;
  d.container_path = "/dev/infiniband/" + n.name;
  d.host_path = host.dev + "/infiniband/" + n.name;
  d.type = 'c';
  d.major = n.major;
  d.minor = n.minor;
  bool verbs = str::starts_with(n.name, "uverbs") || n.name == "rdma_cm";
  d.mode = verbs ? 0666 : 0600;
  struct stat st;
  if (::stat(d.host_path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(n.major, n.minor))
    d.mode = st.st_mode & 07777, d.uid = st.st_uid, d.gid = st.st_gid;
  d.access = "rw";
  return d;
}

}  // namespace

Result<std::optional<Request>> parse_request(const spec::Spec& spec) {
  auto it = spec.annotations.find(kAnnotation);
  if (it == spec.annotations.end()) return std::optional<Request>();
  Request r;
  for (const auto& part : str::split(it->second, ',')) {
    std::string name(str::trim(part));
    if (name.empty()) continue;
    if (name == "all") {
      r.all = true;
      continue;
    }
    if (!valid_name(name)) return Error::invalid_spec(where() + ": invalid rdma device name " + str::go_quote(name));
    if (std::find(r.names.begin(), r.names.end(), name) == r.names.end()) r.names.push_back(name);
  }
  if (!r.all && r.names.empty()) return std::optional<Request>();
  if (r.all) r.names.clear();
  return std::optional<Request>(std::move(r));
}

Result<std::vector<HostDevice>> resolve_request(const Request& r, const HostView& host) {
  BERTH_ASSIGN(auto known, device_names(host));
  std::vector<std::string> names = r.all ? known : r.names;
  if (r.all && names.empty()) return Error::sys(ENODEV, where() + ": \"all\": no rdma device on this host");
  std::vector<HostDevice> out;
  for (const auto& n : names) {
    auto d = resolve(host, n);
    if (!d && d.error().err() == ENODEV)
      return Error::sys(ENODEV, where() + ": rdma device " + n + " not found (this host has: " +
                                    (known.empty() ? "none" : str::join(known, ", ")) + ")");
    if (!d) return std::move(d).error();
    out.push_back(std::move(*d));
  }
  return out;
}

Result<Edits> edits(const spec::Spec& spec, const HostView& host) {
  BERTH_ASSIGN(auto req, parse_request(spec));
  Edits e;
  if (!req) return e;
  BERTH_ASSIGN(auto devices, resolve_request(*req, host));
  for (const auto& d : devices)
    for (const auto& n : d.nodes) e.nodes.push_back(to_edit(host, n));
  // Connection management (librdmacm: RoCE address resolution, most MPI and NCCL
  // transports) goes through the one rdma_cm node, shared by every device.
  BERTH_ASSIGN(auto cm, rdma_cm(host));
  if (cm) e.nodes.push_back(to_edit(host, *cm));
  return e;
}

Result<std::vector<NetnsMove>> netns_moves(const spec::Spec& spec, const HostView& host) {
  BERTH_ASSIGN(auto req, parse_request(spec));
  std::vector<NetnsMove> out;
  if (!req) return out;
  BERTH_ASSIGN(auto devices, resolve_request(*req, host));
  for (auto& d : devices) out.push_back({d.name, d.netdevs});
  return out;
}

}  // namespace berth::devices::rdma
