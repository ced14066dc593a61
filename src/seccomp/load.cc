// Loading a compiled linux.seccomp filter with linux.seccomp.flags, and support(): which
// actions, operators, architectures and flags this kernel and libseccomp accept (features).
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "seccomp/seccomp.h"
#include "seccomp/vocabulary.h"
#include "spec/names.h"
#include "util/strings.h"

namespace berth::seccomp {
namespace {

long sys_seccomp(unsigned op, unsigned flags, void* arg) { return ::syscall(SYS_seccomp, op, flags, arg); }

}  // namespace

Result<unsigned> filter_flags(const spec::Seccomp& p) {
  unsigned flags = 0;
  for (size_t i = 0; i < p.flags.size(); ++i) {
    auto bit = vocab::filter_flag(p.flags[i]);
    if (!bit)
      return Error::invalid_spec("linux.seccomp.flags[" + std::to_string(i) + "]: seccomp flag " + p.flags[i] +
                                 " is not known to berth");
    flags |= *bit;
  }
  if (uses_notify(p)) {
    flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    // The kernel refuses TSYNC with a listener unless a failed sync reports ESRCH.
    if (flags & SECCOMP_FILTER_FLAG_TSYNC) flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
  } else {
    // Only meaningful for a listener; the kernel refuses it without one.
    flags &= ~unsigned{SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV};
  }
  return flags;
}

namespace {

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%#x", v);
  return buf;
}

}  // namespace

Result<UniqueFd> load(const Program& program, const spec::Seccomp& profile) {
  if (program.insns.empty() || program.insns.size() > BPF_MAXINSNS)
    return Error::generic("seccomp: program of " + std::to_string(program.insns.size()) + " instructions");
  BERTH_ASSIGN(unsigned flags, filter_flags(profile));
  sock_fprog fprog{static_cast<unsigned short>(program.insns.size()), const_cast<sock_filter*>(program.insns.data())};
  long rc = sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, &fprog);
  if (rc < 0) {
    int e = errno;
    std::string what = "seccomp(SECCOMP_SET_MODE_FILTER, " + hex(flags) + ")";
    if (e == EACCES) what += " without no_new_privs or CAP_SYS_ADMIN";
    return Error::sys(e, what);
  }
  if (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) return UniqueFd(static_cast<int>(rc));
  return UniqueFd();
}

Support support() {
  Support s;
  for (auto name : spec::names::seccomp_actions()) {
    auto act = vocab::kernel_action(name);
    uint32_t value = act.value_or(0);
    if (act && sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &value) == 0) s.actions.emplace_back(name);
  }
  for (auto name : spec::names::seccomp_operators())
    if (vocab::compare(name)) s.operators.emplace_back(name);
  for (auto name : spec::names::seccomp_archs())
    if (vocab::arch_token(name) != 0) s.archs.emplace_back(name);
  for (auto name : spec::names::seccomp_flags()) {
    auto bit = vocab::filter_flag(name);
    if (!bit) continue;
    s.known_flags.emplace_back(name);
    unsigned probe = *bit;
    if (probe == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) probe |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    // libseccomp's probe: a known flag gets as far as reading the (null) program.
    if (sys_seccomp(SECCOMP_SET_MODE_FILTER, probe, nullptr) < 0 && errno == EFAULT)
      s.supported_flags.emplace_back(name);
  }
  return s;
}

}  // namespace berth::seccomp
