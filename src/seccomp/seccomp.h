// linux.seccomp: compile the profile to classic BPF with libseccomp, cache the result in the
// state root, load it into the calling process, and hand a SCMP_ACT_NOTIFY listener to
// linux.seccomp.listenerPath. See docs/seccomp.md.
//
// Typical use from create: the parent calls compile_cached() (a hit costs one file read);
// the container init calls load() just before execve, with no_new_privs already set or
// CAP_SYS_ADMIN still held (that ordering is the caller's job), then passes the listener fd
// on with send_to_listener() when load() returned one.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "util/unique_fd.h"

namespace berth::seccomp {

// A finished filter: what seccomp(SECCOMP_SET_MODE_FILTER) takes, in host byte order.
struct Program {
  std::vector<sock_filter> insns;

  std::string_view bytes() const {
    return {reinterpret_cast<const char*>(insns.data()), insns.size() * sizeof(sock_filter)};
  }
  bool operator==(const Program& o) const { return bytes() == o.bytes(); }
};

// Compiles linux.seccomp for the native architecture plus linux.seccomp.architectures.
// Syscall names libseccomp does not know are skipped with a debug line, as runc does; a
// rule whose action equals the default action is skipped (libseccomp refuses it). When the
// default action denies, syscalls newer than every syscall the profile names fail with
// ENOSYS instead of the default errno (runc's patchbpf), so that libc falls back.
Result<Program> compile(const spec::Seccomp& profile);

// compile() behind an on-disk cache: <cache_dir>/<key>.bpf, key = SHA-256 of the normalized
// profile, the libseccomp version, the native architecture and kFormatVersion. A hit builds
// no filter. Logs "seccomp: cache hit <key>" or "seccomp: cache miss <key> (<why>)" at debug
// level. cache_dir is created (0700) when missing; a directory that other users could write
// is not used. Failing to store an entry does not fail the call.
Result<Program> compile_cached(const spec::Seccomp& profile, const std::string& cache_dir);

// Loads the program into the calling thread with seccomp(SECCOMP_SET_MODE_FILTER), with
// linux.seccomp.flags (TSYNC, LOG, SPEC_ALLOW, WAIT_KILLABLE_RECV) and NEW_LISTENER when a
// rule uses SCMP_ACT_NOTIFY. Returns the listener fd (O_CLOEXEC) then, an empty UniqueFd
// otherwise. Needs no_new_privs or CAP_SYS_ADMIN (else EACCES).
Result<UniqueFd> load(const Program& program, const spec::Seccomp& profile);
// The SECCOMP_FILTER_FLAG_* bits load() uses for linux.seccomp.flags (NEW_LISTENER with a
// notify rule): for a caller that loads through linux::Sys::seccomp_set_filter.
Result<unsigned> filter_flags(const spec::Seccomp& profile);

// True when the profile needs a listener (some rule's action is SCMP_ACT_NOTIFY).
bool uses_notify(const spec::Seccomp& profile);

// Connects to linux.seccomp.listenerPath and sends the runtime-spec "container process
// state" ({ociVersion, fds:["seccompFd"], pid, metadata, state}) with notify_fd attached
// (SCM_RIGHTS). state_json is the container's state object (as `berth state` prints it).
Status send_to_listener(int notify_fd, const spec::Seccomp& profile, const std::string& state_json,
                        pid_t pid);

// For `features`: the vocabulary this host and this libseccomp really support.
struct Support {
  std::vector<std::string> actions;          // SCMP_ACT_* the kernel accepts
  std::vector<std::string> operators;        // SCMP_CMP_*
  std::vector<std::string> archs;            // SCMP_ARCH_* libseccomp can compile for
  std::vector<std::string> known_flags;      // SECCOMP_FILTER_FLAG_* berth knows
  std::vector<std::string> supported_flags;  // ... and the kernel accepts
};
Support support();

}  // namespace berth::seccomp
