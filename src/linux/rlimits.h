// process.rlimits: RLIMIT_* names and applying them to the calling process.
#pragma once

#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::linux {

int rlimit_resource(const std::string& name);  // -1 if unknown
Status apply_rlimits(const std::vector<spec::Rlimit>& rlimits);

}  // namespace berth::linux
