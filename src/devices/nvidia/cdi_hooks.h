// The hooks that `nvidia-ctk cdi generate` writes into CDI specs, done natively instead of
// running a host binary during create: nvidia-cdi-hook (or `nvidia-ctk hook`)
// create-symlinks (--link target::link), update-ldcache (--folder dir), enable-cuda-compat
// (--host-driver-version v) and disable-device-node-modification. chmod is skipped with a
// warning. Other hooks stay in Edits::hooks.
#pragma once

#include <string>

#include "berth/result.h"
#include "berth/spec.h"
#include "devices/config.h"
#include "devices/edits.h"

namespace berth::devices::nvidia {

// Rewrites e: the known hooks leave e.hooks and become edits.
Status translate_cdi_hooks(Edits& e, const spec::Spec& spec, const NvidiaConfig& cfg, const std::string& rootfs);

}  // namespace berth::devices::nvidia
