// linux.sysctl: validated against the container's namespaces as runc does, and written
// through a private procfs instance (fsopen/fsmount, never the container's /proc, which it
// could have redirected: CVE-2025-52881).
#pragma once

#include <map>
#include <string>

#include "berth/result.h"
#include "linux/sys.h"

namespace berth::linux {

// new_ipc/new_uts/new_net: whether the container has its own namespace of that kind.
Status validate_sysctls(const std::map<std::string, std::string>& sysctl, bool new_ipc, bool new_uts, bool new_net);
Status write_sysctls(Sys& sys, const std::map<std::string, std::string>& sysctl);
Status write_sysctls(const std::map<std::string, std::string>& sysctl);  // on real_sys()

// A key in its dotted form: "net/ipv4/conf/eth0.100/forwarding" (slashes first, as
// sysctl(8) accepts) becomes "net.ipv4.conf.eth0/100.forwarding".
std::string sysctl_dotted(const std::string& key);
// The file under /proc/sys for a key: "net.ipv4.conf.eth0/100.forwarding" →
// "net/ipv4/conf/eth0.100/forwarding".
std::string sysctl_path(const std::string& key);

}  // namespace berth::linux
