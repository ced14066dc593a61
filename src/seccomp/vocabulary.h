// The linux.seccomp vocabulary as numbers: actions (defaultAction, syscalls[].action with
// errnoRet/defaultErrnoRet), operators (syscalls[].args[].op), architectures and flags.
// Shared by compile (libseccomp values), load (filter flags) and support() (features).
#pragma once

#include <seccomp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "berth/result.h"

namespace berth::seccomp::vocab {

// SCMP_ACT_* name → the filter's return value. ERRNO and TRACE carry errno_ret (EPERM when
// unset, as runc). Errors name the property: action_path or errno_path
// ("linux.seccomp.defaultAction", "linux.seccomp.syscalls[2].errnoRet").
Result<uint32_t> action(std::string_view name, std::optional<uint32_t> errno_ret, const std::string& action_path,
                        const std::string& errno_path);
// SCMP_ACT_* name → the kernel's SECCOMP_RET_* action without data (for probing); nullopt if unknown.
std::optional<uint32_t> kernel_action(std::string_view name);
std::optional<scmp_compare> compare(std::string_view name);
// SCMP_ARCH_* name → libseccomp's arch token; 0 when libseccomp does not know it.
uint32_t arch_token(std::string_view name);
// libseccomp arch token → the AUDIT_ARCH_* value the kernel puts in seccomp_data.arch.
// x32 shares x86_64's (its syscalls are told apart by bit 30 of the number).
uint32_t audit_arch(uint32_t token);
// SECCOMP_FILTER_FLAG_* name → bit; nullopt if berth does not know it.
std::optional<unsigned> filter_flag(std::string_view name);

}  // namespace berth::seccomp::vocab
