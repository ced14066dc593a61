// rdma.max / rdma.current format shared by v1 and v2 (linux.resources.rdma): see rdma.h.
#include "cgroups/common/rdma.h"

#include "cgroups/fs.h"
#include "util/strings.h"

namespace berth::cgroups {

std::string rdma_max_line(const std::string& device, const spec::Rdma& limits) {
  if (!limits.hca_handles && !limits.hca_objects) return {};
  std::string line = device;
  if (limits.hca_handles) line += " hca_handle=" + std::to_string(*limits.hca_handles);
  if (limits.hca_objects) line += " hca_object=" + std::to_string(*limits.hca_objects);
  return line;
}

static Result<std::optional<uint32_t>> parse_limit(std::string_view v, std::string_view line) {
  if (v == "max") return std::optional<uint32_t>();
  auto n = str::parse_u64(v);
  if (!n || *n > 0xffffffffu)
    return Error::generic("invalid rdma line \"" + std::string(line) + "\"");
  return std::optional<uint32_t>(static_cast<uint32_t>(*n));
}

Result<std::vector<RdmaEntry>> parse_rdma(std::string_view content) {
  std::vector<RdmaEntry> out;
  for (const auto& line : str::split_nonempty(content, '\n')) {
    auto fields = str::split_nonempty(line, ' ');
    if (fields.empty()) continue;
    RdmaEntry e;
    e.device = fields[0];
    for (size_t i = 1; i < fields.size(); ++i) {
      auto eq = fields[i].find('=');
      if (eq == std::string::npos)
        return Error::generic("invalid rdma line \"" + line + "\"");
      std::string_view key = std::string_view(fields[i]).substr(0, eq);
      BERTH_ASSIGN(auto v, parse_limit(std::string_view(fields[i]).substr(eq + 1), line));
      if (key == "hca_handle") e.hca_handles = v;
      else if (key == "hca_object") e.hca_objects = v;
    }
    out.push_back(std::move(e));
  }
  return out;
}

Status set_rdma(const Dir& dir, const std::map<std::string, spec::Rdma>& rdma) {
  for (const auto& [device, limits] : rdma) {
    std::string line = rdma_max_line(device, limits);
    if (line.empty()) continue;
    BERTH_TRY(write_field(dir, "rdma.max", line, "linux.resources.rdma[\"" + device + "\"]"));
  }
  return ok();
}

}  // namespace berth::cgroups
