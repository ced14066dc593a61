// The CDI specs on this host: every *.json, *.yaml and *.yml file in the configured spec
// directories (default /etc/cdi, then /var/run/cdi: a later directory has higher priority
// and overrides a device of the same name). Two specs of one directory defining the same
// device conflict; a file that does not parse is skipped but named when a requested
// device cannot be found. Read only when a container asks for a CDI device.
#pragma once

#include <string>
#include <vector>

#include "berth/result.h"
#include "devices/cdi/spec.h"

namespace berth::devices::cdi {

struct Registry {
  std::vector<Spec> specs;
  std::vector<size_t> priority;     // the directory index of each spec
  std::vector<std::string> errors;  // "<file>: <why>" for files that could not be used
};

Registry load_registry(const std::vector<std::string>& dirs);

struct Resolved {
  QualifiedName name;
  const Spec* spec = nullptr;
  const Device* device = nullptr;
};

Result<std::vector<Resolved>> resolve(const Registry& reg, const std::vector<QualifiedName>& names);

}  // namespace berth::devices::cdi
