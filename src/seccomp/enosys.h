// The -ENOSYS prologue (runc's patchbpf): a profile that denies by default also denies
// syscalls newer than the profile, and libc only falls back (clone3 → clone, fchmodat2 →
// fchmodat...) on ENOSYS, not on EPERM. This prologue returns ENOSYS for every syscall
// number above the largest one the profile names, per architecture of
// linux.seccomp.architectures, and hands everything else to libseccomp's program.
#pragma once

#include <linux/filter.h>

#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::seccomp {

// Instructions to put in front of libseccomp's program (which starts by loading the arch
// itself, so nothing is carried over); empty when the default action already permits
// (ALLOW, LOG, TRACE, as runc) or already returns ENOSYS.
Result<std::vector<sock_filter>> enosys_prologue(const spec::Seccomp& profile);

}  // namespace berth::seccomp
