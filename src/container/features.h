// The OCI features document (`berth features`).
#pragma once

#include <string>

namespace berth::container {

std::string features_json();

}  // namespace berth::container
