// Names of linux.seccomp (defaultAction, defaultErrnoRet, syscalls[].action/errnoRet,
// args[].op, architectures, flags) mapped to libseccomp and kernel values (see vocabulary.h).
#include "seccomp/vocabulary.h"

#include <cerrno>

#include "util/strings.h"

namespace berth::seccomp::vocab {

Result<uint32_t> action(std::string_view name, std::optional<uint32_t> errno_ret, const std::string& action_path,
                        const std::string& errno_path) {
  // The return data is 16 bits wide; runc truncates larger values silently, berth refuses them.
  if (errno_ret && *errno_ret > 0xffff)
    return Error::invalid_spec(errno_path + ": " + std::to_string(*errno_ret) + " does not fit in 16 bits");
  uint32_t data = errno_ret.value_or(EPERM);
  // runc maps SCMP_ACT_KILL to KILL_THREAD, which is also libseccomp's meaning of it.
  if (name == "SCMP_ACT_KILL" || name == "SCMP_ACT_KILL_THREAD") return uint32_t{SCMP_ACT_KILL_THREAD};
  if (name == "SCMP_ACT_KILL_PROCESS") return uint32_t{SCMP_ACT_KILL_PROCESS};
  if (name == "SCMP_ACT_TRAP") return uint32_t{SCMP_ACT_TRAP};
  if (name == "SCMP_ACT_ERRNO") return uint32_t{SCMP_ACT_ERRNO(data)};
  if (name == "SCMP_ACT_TRACE") return uint32_t{SCMP_ACT_TRACE(data)};
  if (name == "SCMP_ACT_ALLOW") return uint32_t{SCMP_ACT_ALLOW};
  if (name == "SCMP_ACT_LOG") return uint32_t{SCMP_ACT_LOG};
  if (name == "SCMP_ACT_NOTIFY") return uint32_t{SCMP_ACT_NOTIFY};
  return Error::invalid_spec(action_path + ": unknown action " + str::go_quote(name));
}

std::optional<uint32_t> kernel_action(std::string_view name) {
  if (name == "SCMP_ACT_KILL" || name == "SCMP_ACT_KILL_THREAD") return SECCOMP_RET_KILL_THREAD;
  if (name == "SCMP_ACT_KILL_PROCESS") return SECCOMP_RET_KILL_PROCESS;
  if (name == "SCMP_ACT_TRAP") return SECCOMP_RET_TRAP;
  if (name == "SCMP_ACT_ERRNO") return SECCOMP_RET_ERRNO;
  if (name == "SCMP_ACT_TRACE") return SECCOMP_RET_TRACE;
  if (name == "SCMP_ACT_ALLOW") return SECCOMP_RET_ALLOW;
  if (name == "SCMP_ACT_LOG") return SECCOMP_RET_LOG;
  if (name == "SCMP_ACT_NOTIFY") return SECCOMP_RET_USER_NOTIF;
  return std::nullopt;
}

std::optional<scmp_compare> compare(std::string_view name) {
  if (name == "SCMP_CMP_NE") return SCMP_CMP_NE;
  if (name == "SCMP_CMP_LT") return SCMP_CMP_LT;
  if (name == "SCMP_CMP_LE") return SCMP_CMP_LE;
  if (name == "SCMP_CMP_EQ") return SCMP_CMP_EQ;
  if (name == "SCMP_CMP_GE") return SCMP_CMP_GE;
  if (name == "SCMP_CMP_GT") return SCMP_CMP_GT;
  if (name == "SCMP_CMP_MASKED_EQ") return SCMP_CMP_MASKED_EQ;
  return std::nullopt;
}

uint32_t arch_token(std::string_view name) {
  constexpr std::string_view kPrefix = "SCMP_ARCH_";
  if (!str::starts_with(name, kPrefix)) return 0;
  // libseccomp's own names are the lower-case suffixes: x86_64, x32, aarch64, mipsel64n32...
  std::string lower = str::to_lower(name.substr(kPrefix.size()));
  return seccomp_arch_resolve_name(lower.c_str());
}

uint32_t audit_arch(uint32_t token) { return token == SCMP_ARCH_X32 ? AUDIT_ARCH_X86_64 : token; }

std::optional<unsigned> filter_flag(std::string_view name) {
  if (name == "SECCOMP_FILTER_FLAG_TSYNC") return SECCOMP_FILTER_FLAG_TSYNC;
  if (name == "SECCOMP_FILTER_FLAG_LOG") return SECCOMP_FILTER_FLAG_LOG;
  if (name == "SECCOMP_FILTER_FLAG_SPEC_ALLOW") return SECCOMP_FILTER_FLAG_SPEC_ALLOW;
  if (name == "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") return SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  return std::nullopt;
}

}  // namespace berth::seccomp::vocab
