// The rdma controller's file format, identical in v1 and v2 (linux.resources.rdma):
// rdma.max takes one "<hca device> hca_handle=<n> hca_object=<n>" line per write;
// rdma.max and rdma.current read back as such lines with "max" for no limit.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::cgroups {

// One device's line for rdma.max; empty when neither limit is set (nothing to write).
std::string rdma_max_line(const std::string& device, const spec::Rdma& limits);

struct RdmaEntry {
  std::string device;
  std::optional<uint32_t> hca_handles;  // nullopt = "max"
  std::optional<uint32_t> hca_objects;
  bool operator==(const RdmaEntry&) const = default;
};
Result<std::vector<RdmaEntry>> parse_rdma(std::string_view content);

// Writes every device's limits to rdma.max through `write` (a v1 or v2 directory).
class Dir;
Status set_rdma(const Dir& dir, const std::map<std::string, spec::Rdma>& rdma);

}  // namespace berth::cgroups
