// The host's RDMA devices as sysfs describes them: a device's character nodes (uverbs,
// umad, issm), the rdma_cm node, its network interfaces and port link layers. Every number
// is read from a `dev` file ("MAJ:MIN"), never computed: uverbsN is numbered independently
// of the device (uverbs1 may belong to mlx5_0) and rdma_cm has a dynamic misc minor. Reads
// go through a HostView whose roots tests point at a fake tree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"

namespace berth::devices::rdma {

struct HostView {
  std::string sys = "/sys";
  std::string dev = "/dev";
};

struct CharNode {
  std::string name;  // uverbs0, umad1, issm1, rdma_cm (under /dev/infiniband)
  uint32_t major = 0, minor = 0;
  bool operator==(const CharNode&) const = default;
};

struct HostDevice {
  std::string name;                  // mlx5_0
  std::vector<CharNode> nodes;       // uverbs*, umad*, issm* whose ibdev is exactly `name`
  std::vector<std::string> netdevs;  // RoCE Ethernet / IPoIB interfaces, sorted, unique
  std::vector<std::string> link_layers;  // per port, in port order: InfiniBand, Ethernet
};

// "231:192\n" → {231, 192}.
Result<std::pair<uint32_t, uint32_t>> parse_dev(std::string_view text);

// Names under <sys>/class/infiniband, sorted. Empty when the class does not exist.
Result<std::vector<std::string>> device_names(const HostView& host);

// One device by exact name; ENODEV when neither <sys>/class/infiniband/<name> nor a node of
// it exists (exclusive mode hides devices of other namespaces from class/infiniband only).
Result<HostDevice> resolve(const HostView& host, const std::string& name);

// <sys>/class/misc/rdma_cm/dev (present once rdma_ucm is loaded); nullopt when absent.
Result<std::optional<CharNode>> rdma_cm(const HostView& host);

}  // namespace berth::devices::rdma
