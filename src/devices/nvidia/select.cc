// Device selection (see select.h).
#include "devices/nvidia/select.h"

#include <algorithm>
#include <optional>

#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

struct Chooser {
  const std::vector<Gpu>& gpus;
  const NvmlLookup& nvml;
  std::optional<std::vector<NvmlGpu>> nvml_data;
  Selection sel;

  SelectedGpu& slot(const Gpu& g) {
    for (auto& s : sel.gpus)
      if (s.gpu.index == g.index) return s;
    sel.gpus.push_back({g, false, {}});
    return sel.gpus.back();
  }

  void add_mig(const Gpu& g, const NvmlMig& m) {
    auto& s = slot(g);
    bool seen = std::any_of(s.migs.begin(), s.migs.end(), [&](const NvmlMig& x) { return x.uuid == m.uuid; });
    if (!seen) s.migs.push_back(m);
  }

  Status unknown(const std::string& id, const std::string& why = "") {
    return Error::invalid_spec("unknown device \"" + id + "\"" + (why.empty() ? "" : " (" + why + ")") +
                               "; devices on this host: " + describe_gpus(gpus));
  }

  Result<const std::vector<NvmlGpu>*> mig_data(const std::string& id) {
    if (!nvml_data) {
      auto r = nvml();
      if (!r) return std::move(r).error().context("MIG device \"" + id + "\" needs NVML");
      nvml_data = std::move(*r);
    }
    return &*nvml_data;
  }

  const Gpu* by_bus(const std::string& bus) {
    auto key = pci_key(bus);
    for (const auto& g : gpus)
      if (key && pci_key(g.bus_id) == key) return &g;
    return nullptr;
  }

  Status by_uuid_prefix(const std::string& id) {
    std::vector<const Gpu*> hits;
    for (const auto& g : gpus)
      if (str::starts_with(str::to_lower(g.uuid), str::to_lower(id))) hits.push_back(&g);
    if (hits.size() > 1) return unknown(id, "ambiguous: it is a prefix of " + std::to_string(hits.size()) + " GPU UUIDs");
    if (hits.empty()) return unknown(id);
    slot(*hits[0]).whole = true;
    return ok();
  }

  Status by_mig_uuid(const std::string& id) {
    BERTH_ASSIGN(auto data, mig_data(id));
    std::vector<std::pair<const Gpu*, NvmlMig>> hits;
    for (const auto& ng : *data)
      for (const auto& m : ng.migs)
        if (str::starts_with(str::to_lower(m.uuid), str::to_lower(id))) hits.emplace_back(by_bus(ng.bus_id), m);
    if (hits.size() > 1) return unknown(id, "ambiguous: it is a prefix of " + std::to_string(hits.size()) + " MIG UUIDs");
    if (hits.empty() || !hits[0].first) return unknown(id);
    add_mig(*hits[0].first, hits[0].second);
    return ok();
  }

  Status by_pair(const std::string& id, uint64_t gi, uint64_t mi) {
    if (gi >= gpus.size()) return unknown(id, "no GPU " + std::to_string(gi));
    const Gpu& g = gpus[gi];
    BERTH_ASSIGN(auto data, mig_data(id));
    for (const auto& ng : *data) {
      if (pci_key(ng.bus_id) != pci_key(g.bus_id)) continue;
      if (!ng.mig_enabled) return unknown(id, "MIG is not enabled on GPU " + std::to_string(gi));
      for (const auto& m : ng.migs)
        if (m.index == mi) {
          add_mig(g, m);
          return ok();
        }
    }
    return unknown(id, "GPU " + std::to_string(gi) + " has no MIG device " + std::to_string(mi));
  }

  Status one(const std::string& id) {
    if (id == "all") {
      for (const auto& g : gpus) slot(g).whole = true;
      return ok();
    }
    if (auto n = str::parse_u64(id)) {
      if (*n >= gpus.size()) return unknown(id);
      slot(gpus[*n]).whole = true;
      return ok();
    }
    if (str::starts_with(str::to_lower(id), "gpu-")) return by_uuid_prefix(id);
    if (str::starts_with(str::to_lower(id), "mig-")) return by_mig_uuid(id);
    if (auto parts = str::split(id, ':'); parts.size() == 2) {
      auto a = str::parse_u64(parts[0]), b = str::parse_u64(parts[1]);
      if (a && b) return by_pair(id, *a, *b);
    }
    if (const Gpu* g = pci_key(id) ? by_bus(id) : nullptr) {
      slot(*g).whole = true;
      return ok();
    }
    return unknown(id);
  }
};

}  // namespace

const SelectedGpu* Selection::find(unsigned index) const {
  for (const auto& s : gpus)
    if (s.gpu.index == index) return &s;
  return nullptr;
}

std::string describe_gpus(const std::vector<Gpu>& gpus) {
  if (gpus.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& g : gpus) parts.push_back(std::to_string(g.index) + " " + g.uuid + " " + g.bus_id);
  return str::join(parts, ", ");
}

Result<Selection> select_devices(const std::vector<std::string>& ids, const std::vector<Gpu>& gpus, const NvmlLookup& nvml) {
  Chooser c{gpus, nvml, std::nullopt, {}};
  for (const auto& id : ids) BERTH_TRY(c.one(id));
  std::sort(c.sel.gpus.begin(), c.sel.gpus.end(), [](const SelectedGpu& a, const SelectedGpu& b) { return a.gpu.index < b.gpu.index; });
  return std::move(c.sel);
}

}  // namespace berth::devices::nvidia
