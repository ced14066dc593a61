// Which device modules contribute to a container (NVIDIA GPUs, RDMA, CDI specs), asked in
// one place during create. Each module decides from the spec (env, annotations) whether it
// is requested; an unrequested module costs nothing.
#pragma once

#include "berth/result.h"
#include "berth/spec.h"
#include "devices/edits.h"

namespace berth::container {

Result<devices::Edits> collect_device_edits(const spec::Spec& spec, bool user_ns);

}  // namespace berth::container
