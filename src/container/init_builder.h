// From a validated spec to the init's configuration: namespace decisions (one clone3, or
// joins + unshares + a second stage), the rootfs plan, capabilities, and the refusal of
// fields this build or host cannot honour (each named).
#pragma once

#include <memory>
#include <optional>

#include "berth/container.h"
#include "berth/spec.h"
#include "container/cgroup_setup.h"
#include "container/process/init_config.h"
#include "devices/nvidia/ldconfig_cache.h"

namespace berth::container {

// Fields berth knows but cannot honour here: a clear error naming the field.
Status refuse_unsupported(const spec::Spec& spec);

struct BuiltInit {
  process::InitConfig cfg;
  linux::NamespacePlan ns;
  std::vector<spec::DeviceRule> device_rules;  // added by device modules, for the cgroup
  bool spec_changed = false;  // device modules added hooks or linux.netDevices to the spec
  // A device module's ldconfig run missed the ld.so.cache cache: stored after the init ran it.
  std::optional<devices::nvidia::LdconfigFill> ldconfig_fill;
};

// `rootfs` is the absolute host path of root.path. The cgroup mount view is filled in by
// the caller once the cgroups exist. Device modules' hooks and netDevices are folded into
// `spec` (see merge_spec_edits); the caller persists it when spec_changed.
Result<std::unique_ptr<BuiltInit>> build_init(spec::Spec& spec, const CreateOptions& o, const std::string& rootfs,
                                              const OciState& state);

}  // namespace berth::container
