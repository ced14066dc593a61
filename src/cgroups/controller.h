// The one interface behind every controller file of v1/ and v2/: which spec fields it owns
// (to name the field when the host lacks the controller), how it writes them, and how it
// reads its share of Stats. A v1 controller gets its hierarchy's directory; all v2
// controllers share the unified directory.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "cgroups/common/device_rule.h"
#include "cgroups/fs.h"
#include "cgroups/stats.h"

namespace berth::cgroups {

struct SetContext {
  const spec::Resources& r;
  // The final device rule list; null leaves device rules as they are (an update that does
  // not mention devices).
  const std::vector<DeviceRule>* devices = nullptr;
  // false at create (a fresh directory), true for `update` of a running container:
  // memory.checkBeforeUpdate applies, v1 device rules move by difference.
  bool update = false;
};

struct Controller {
  const char* name;  // v1 subsystem name ("cpu", "name=systemd") or v2 controller
  // The first spec field set for this controller ("" when none): the error names it when
  // the host has no such controller.
  std::string (*first_field)(const SetContext&);
  // Writes only the fields that are set (zero or absent = unchanged).
  Status (*set)(const Dir&, const SetContext&);
  // Adds this controller's statistics; null when it has none.
  Status (*stats)(const Dir&, Stats&);
};

namespace v1 {
// Every v1 subsystem berth knows, in runc's order (cpuset first: a pid may only join a
// cpuset cgroup once cpus/mems are set).
std::span<const Controller* const> controllers();
}  // namespace v1

namespace v2 {
// The v2 controllers (including the devices eBPF program and the freezer-less parts).
std::span<const Controller* const> controllers();
}  // namespace v2

}  // namespace berth::cgroups
