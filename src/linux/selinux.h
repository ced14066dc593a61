// SELinux on this host, for linux.mountLabel and process.selinuxLabel: the probe (is
// selinuxfs mounted and answering), the `context=` mount option a label becomes, and the
// fscreate attribute that labels the files the init creates in the rootfs.
#pragma once

#include <string>

#include "berth/result.h"
#include "linux/sys.h"

namespace berth::linux {

// SELinux is on when `<root>/proc/self/mounts` lists a selinuxfs at /sys/fs/selinux and
// `<root>/sys/fs/selinux/enforce` reads 0 or 1 (permissive or enforcing): a directory left
// from a package, or a policy-less selinuxfs, is not SELinux. `root` is "/" on a real host;
// tests point it at a fake tree.
bool selinux_enabled(const std::string& root = "/");

// A label is put into mount data between double quotes (the kernel's option parser keeps
// the commas and colons of "system_u:object_r:t:s0:c1,c2" together there): one holding a
// quote, a control character or nothing at all could end the option early and smuggle
// others in, so it is refused, naming `field`.
Status check_label(const std::string& label, const std::string& field);

// The mount data word for linux.mountLabel: context="<label>" (runc's and crun's form).
std::string context_option(const std::string& label);

// Labels what this thread creates from now on (mkdirat, mknodat, symlinkat in the rootfs)
// with `label`, through /proc/thread-self/attr/fscreate, checked to be a procfs file. execve
// resets the attribute, so the container's process never inherits it.
Status set_fscreate_label(Sys& sys, const std::string& label);

}  // namespace berth::linux
