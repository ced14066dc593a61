// Invariants of a CDI spec that parse_spec accepted, shared by fuzz_cdi_json and
// fuzz_cdi_yaml: every device has a valid qualified name, the spec resolves through a
// registry of its own, and its containerEdits merge into Edits that keep the merger's
// promises (one node and one mount per container path, parents first, one value per env
// name). Host paths are never stat'ed: nodes that would be are given numbers first.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "devices/cdi/apply.h"
#include "devices/cdi/registry.h"
#include "devices/cdi/spec.h"

namespace berth::fuzz {

inline void check(bool ok) {
  if (!ok) std::abort();
}

// Nodes whose type or numbers are missing would be completed by stat() of the host path.
inline void pin_nodes(devices::cdi::ContainerEdits& e) {
  for (auto& n : e.device_nodes) {
    if (n.type.empty()) n.type = "c";
    if (n.type != "p" && n.major.value_or(0) == 0 && n.minor.value_or(0) == 0) n.minor = 1;
  }
}

inline void check_edits(const devices::Edits& e) {
  std::set<std::string> paths;
  for (const auto& n : e.nodes) {
    check(paths.insert(n.container_path).second);
    check(!n.access.empty() && n.access.find_first_not_of("rwm") == std::string::npos);
    check(n.mode <= 07777);
    check(n.type == 'c' || n.type == 'b' || n.type == 'u' || n.type == 'p');
  }
  paths.clear();
  auto depth = [](const std::string& p) { return std::count(p.begin(), p.end(), '/'); };
  for (size_t i = 0; i < e.mounts.size(); ++i) {
    check(paths.insert(e.mounts[i].container_path).second);
    if (i > 0) check(depth(e.mounts[i - 1].container_path) <= depth(e.mounts[i].container_path));
    for (const auto& o : e.mounts[i].options) check(o != "bind");
  }
  std::set<std::string> names;
  for (const auto& v : e.env) {
    auto eq = v.find('=');
    check(eq != std::string::npos && eq > 0);
    check(names.insert(v.substr(0, eq)).second);
  }
  std::set<uint32_t> gids(e.additional_gids.begin(), e.additional_gids.end());
  check(gids.size() == e.additional_gids.size());
}

inline void check_spec(const devices::cdi::Spec& s, const std::string& source) {
  using namespace devices::cdi;
  check(s.source == source);
  check(!s.devices.empty());
  std::vector<QualifiedName> names;  // the first 64 devices (resolve() is quadratic)
  for (const auto& d : s.devices) {
    // validate() and parse_qualified_name() must agree on what a kind and a name are.
    auto q = parse_qualified_name(s.kind + "=" + d.name);
    check(q && q->kind == s.kind && q->device == d.name);
    if (names.size() < 64) names.push_back(*q);
    if (auto r = requested_devices(d.annotations))
      for (const auto& n : *r) check(parse_qualified_name(n.text()).ok());
  }
  if (auto r = requested_devices(s.annotations))
    for (const auto& n : *r) check(parse_qualified_name(n.text()).ok());

  Registry reg;
  reg.specs.push_back(s);
  reg.priority.push_back(0);
  pin_nodes(reg.specs[0].container_edits);
  for (auto& d : reg.specs[0].devices) pin_nodes(d.container_edits);
  auto resolved = resolve(reg, names);
  check(resolved.ok() && resolved->size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) check((*resolved)[i].device->name == names[i].device);
  // All devices together, and each alone.
  if (auto e = cdi_edits(*resolved)) check_edits(*e);
  for (size_t i = 0; i < resolved->size() && i < 8; ++i)
    if (auto e = cdi_edits({(*resolved)[i]})) check_edits(*e);
}

}  // namespace berth::fuzz
