// CDI spec files in YAML, read with libyaml and turned into JSON text so that one JSON
// reader (with its field-naming errors) handles both forms. Plain scalars are typed as
// sigs.k8s.io/yaml (YAML 1.1, which the CDI library uses) types them: null/~, true/false,
// integers in base 10, 0x.., 0o.. and leading-0 octal (fileMode: 0666 is 438), floats;
// quoted scalars and keys are strings. Anchors and aliases are expanded. Only the first
// document is read.
#pragma once

#include <string>
#include <string_view>

#include "berth/result.h"

namespace berth::devices::cdi {

Result<std::string> yaml_to_json(std::string_view yaml, std::string_view source);

}  // namespace berth::devices::cdi
