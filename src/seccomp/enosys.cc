// linux.seccomp.architectures × syscalls[].names → the -ENOSYS prologue (see enosys.h).
#include "seccomp/enosys.h"

#include <seccomp.h>

#include <cerrno>
#include <cstddef>
#include <optional>

#include "seccomp/vocabulary.h"
#include "util/log.h"

namespace berth::seccomp {
namespace {

// x32 syscalls run under AUDIT_ARCH_X86_64 with this bit set in the number.
constexpr uint32_t kX32Bit = 0x40000000;
// On s390(x), a number the kernel does not know is turned into 0 (the old setup(2)
// multiplexer), so "newer than the profile" shows up as syscall 0.
constexpr uint32_t kS390Multiplex = 0;

struct ArchLimits {
  uint32_t audit = 0;
  std::optional<uint32_t> max;      // the arch itself (x86_64 for AUDIT_ARCH_X86_64)
  std::optional<uint32_t> max_x32;  // only for AUDIT_ARCH_X86_64
  bool s390 = false;
};

bool permissive_default(const spec::Seccomp& p) {
  const std::string& a = p.default_action;
  // A tracer is expected to cope with new syscalls itself, as runc reasons.
  if (a == "SCMP_ACT_ALLOW" || a == "SCMP_ACT_LOG" || a == "SCMP_ACT_TRACE") return true;
  return a == "SCMP_ACT_ERRNO" && p.default_errno_ret == uint32_t{ENOSYS};
}

std::optional<uint32_t> largest_syscall(const spec::Seccomp& p, uint32_t token) {
  std::optional<uint32_t> best;
  for (const auto& rule : p.syscalls)
    for (const auto& name : rule.names) {
      int nr = seccomp_syscall_resolve_name_arch(token, name.c_str());
      if (nr < 0) continue;  // unknown, or a pseudo number: not on this arch
      if (!best || static_cast<uint32_t>(nr) > *best) best = static_cast<uint32_t>(nr);
    }
  return best;
}

Result<std::vector<ArchLimits>> collect_limits(const spec::Seccomp& p) {
  std::vector<ArchLimits> out;
  for (size_t i = 0; i < p.architectures.size(); ++i) {
    uint32_t token = vocab::arch_token(p.architectures[i]);
    if (token == 0)
      return Error::invalid_spec("linux.seccomp.architectures[" + std::to_string(i) + "]: unknown architecture " +
                                 p.architectures[i]);
    std::optional<uint32_t> max = largest_syscall(p, token);
    if (!max) {
      log::debug("seccomp: no syscall of the profile exists on " + p.architectures[i] + ", no ENOSYS stub for it");
      continue;
    }
    uint32_t audit = vocab::audit_arch(token);
    ArchLimits* slot = nullptr;
    for (auto& l : out)
      if (l.audit == audit) slot = &l;
    if (!slot) {
      slot = &out.emplace_back();
      slot->audit = audit;
    }
    slot->s390 = token == SCMP_ARCH_S390 || token == SCMP_ARCH_S390X;
    (token == SCMP_ARCH_X32 ? slot->max_x32 : slot->max) = *max;
  }
  return out;
}

// A tiny assembler: jumps name a target (the ENOSYS return, the start of libseccomp's
// program, an arch section, or a relative skip) and are resolved once the layout is known.
struct Target {
  enum Kind { kSkip, kEnosys, kFilter, kSection } kind = kSkip;
  size_t value = 0;
};
struct Insn {
  uint16_t code;
  uint32_t k;
  Target jt{}, jf{};
};

Target skip(size_t n) { return {Target::kSkip, n}; }
constexpr Target kToEnosys{Target::kEnosys, 0};
constexpr Target kToFilter{Target::kFilter, 0};

void emit_section(std::vector<Insn>& out, const ArchLimits& l) {
  out.push_back({BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)});
  if (l.s390) out.push_back({BPF_JMP | BPF_JEQ | BPF_K, kS390Multiplex, kToEnosys, skip(0)});
  if (l.audit != AUDIT_ARCH_X86_64) {
    out.push_back({BPF_JMP | BPF_JGT | BPF_K, *l.max, kToEnosys, kToFilter});
    return;
  }
  if (l.max && l.max_x32) {
    out.push_back({BPF_JMP | BPF_JSET | BPF_K, kX32Bit, skip(1), skip(0)});
    out.push_back({BPF_JMP | BPF_JGT | BPF_K, *l.max, kToEnosys, kToFilter});
    out.push_back({BPF_JMP | BPF_JGT | BPF_K, *l.max_x32, kToEnosys, kToFilter});
  } else if (l.max) {
    // Only x86_64 in the profile: x32 numbers (bit 30) go to libseccomp's bad-arch action.
    out.push_back({BPF_JMP | BPF_JSET | BPF_K, kX32Bit, kToFilter, skip(0)});
    out.push_back({BPF_JMP | BPF_JGT | BPF_K, *l.max, kToEnosys, kToFilter});
  } else {
    out.push_back({BPF_JMP | BPF_JSET | BPF_K, kX32Bit, skip(0), kToFilter});
    out.push_back({BPF_JMP | BPF_JGT | BPF_K, *l.max_x32, kToEnosys, kToFilter});
  }
}

Result<std::vector<sock_filter>> assemble(const std::vector<Insn>& code, const std::vector<size_t>& sections) {
  size_t enosys = code.size();  // the ret follows the code; libseccomp's program follows it
  auto resolve = [&](size_t at, Target t) -> size_t {
    switch (t.kind) {
      case Target::kSkip: return t.value;
      case Target::kEnosys: return enosys - at - 1;
      case Target::kFilter: return enosys + 1 - at - 1;
      case Target::kSection: return sections[t.value] - at - 1;
    }
    return 0;
  };
  std::vector<sock_filter> out;
  for (size_t i = 0; i < code.size(); ++i) {
    const Insn& in = code[i];
    sock_filter f{in.code, 0, 0, in.k};
    if (BPF_CLASS(in.code) == BPF_JMP && BPF_OP(in.code) == BPF_JA) {
      f.k = static_cast<uint32_t>(resolve(i, in.jt));
    } else if (BPF_CLASS(in.code) == BPF_JMP) {
      size_t jt = resolve(i, in.jt), jf = resolve(i, in.jf);
      // Conditional jumps reach 255 instructions; with one short section per arch the
      // prologue stays far below that.
      if (jt > 255 || jf > 255) return Error::generic("seccomp ENOSYS prologue: jump out of range");
      f.jt = static_cast<uint8_t>(jt);
      f.jf = static_cast<uint8_t>(jf);
    }
    out.push_back(f);
  }
  out.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
  return out;
}

}  // namespace

Result<std::vector<sock_filter>> enosys_prologue(const spec::Seccomp& profile) {
  if (permissive_default(profile)) return std::vector<sock_filter>{};
  BERTH_ASSIGN(auto limits, collect_limits(profile));
  if (limits.empty()) return std::vector<sock_filter>{};
  std::vector<Insn> code;
  code.push_back({BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)});
  for (size_t i = 0; i < limits.size(); ++i)
    code.push_back({BPF_JMP | BPF_JEQ | BPF_K, limits[i].audit, Target{Target::kSection, i}, skip(0)});
  code.push_back({BPF_JMP | BPF_JA, 0, kToFilter});  // another arch: libseccomp decides
  std::vector<size_t> sections;
  for (const auto& l : limits) {
    sections.push_back(code.size());
    emit_section(code, l);
  }
  return assemble(code, sections);
}

}  // namespace berth::seccomp
