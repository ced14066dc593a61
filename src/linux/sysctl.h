// linux.sysctl: validated against the container's namespaces as runc does, and written
// through a private procfs instance (fsopen/fsmount, never the container's /proc, which it
// could have redirected: CVE-2025-52881).
#pragma once

#include <map>
#include <string>

#include "berth/result.h"

namespace berth::linux {

// new_ipc/new_uts/new_net: whether the container has its own namespace of that kind.
Status validate_sysctls(const std::map<std::string, std::string>& sysctl, bool new_ipc, bool new_uts, bool new_net);
Status write_sysctls(const std::map<std::string, std::string>& sysctl);

}  // namespace berth::linux
