// linux.sysctl: keys checked for their form (no path out of their subtree: CVE-2022-0811
// class), validated against the container's namespaces as runc does, and written beneath
// sys/ of a private procfs instance (fsopen/fsmount, never the container's /proc, which it
// could have redirected: CVE-2025-52881).
#pragma once

#include <map>
#include <string>

#include "berth/result.h"
#include "linux/namespaces.h"
#include "linux/sys.h"

namespace berth::linux {

// The file under /proc/sys for a key whose form is safe: only the characters real keys use,
// and no empty, "." or ".." component in the path (nor, as '.' and '/' swap, in the dotted
// key), so the file lies beneath the key's first components (CVE-2022-0811 class). The
// error names the key as written.
Result<std::string> sysctl_checked_path(const std::string& key);

// new_ipc/new_uts/new_net: whether the container has its own namespace of that kind (for
// net: one that is not the runtime's own, see private_network). Keys are checked for their
// form first.
Status validate_sysctls(const std::map<std::string, std::string>& sysctl, bool new_ipc, bool new_uts, bool new_net);
// Whether the container's network namespace is not the runtime's: created, or joined by a
// path that names another one (runc's isHostNetNS).
Result<bool> private_network(const NamespacePlan& ns);
// Each key beneath sys/ of a private procfs instance (RESOLVE_BENEATH, no symlinks, no
// mount crossing), the opened file checked to be a regular procfs file before the write.
Status write_sysctls(Sys& sys, const std::map<std::string, std::string>& sysctl);
Status write_sysctls(const std::map<std::string, std::string>& sysctl);  // on real_sys()

// A key in its dotted form: "net/ipv4/conf/eth0.100/forwarding" (slashes first, as
// sysctl(8) accepts) becomes "net.ipv4.conf.eth0/100.forwarding".
std::string sysctl_dotted(const std::string& key);
// The file under /proc/sys for a key: "net.ipv4.conf.eth0/100.forwarding" →
// "net/ipv4/conf/eth0.100/forwarding".
std::string sysctl_path(const std::string& key);

}  // namespace berth::linux
