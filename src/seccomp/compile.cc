// linux.seccomp → BPF through libseccomp: defaultAction, defaultErrnoRet, architectures,
// syscalls[] (names, action, errnoRet, args[] index/value/valueTwo/op), then the -ENOSYS
// prologue (enosys.cc). flags, listenerPath and listenerMetadata are load-time matters.
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "seccomp/enosys.h"
#include "seccomp/seccomp.h"
#include "seccomp/vocabulary.h"
#include "util/file.h"
#include "util/log.h"
#include "util/strings.h"
#include "util/unique_fd.h"

namespace berth::seccomp {
namespace {

struct CtxRelease {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxRelease>;

// Linux syscalls take at most six arguments.
constexpr uint32_t kMaxArgs = 6;
// libseccomp <= 2.5.4 builds a broken binary tree for a filter without rules; runc turns
// the tree on above this many rules only, and so does berth.
constexpr size_t kBinaryTreeMinRules = 32;

std::string rule_path(size_t i) { return "linux.seccomp.syscalls[" + std::to_string(i) + "]"; }

Status check_notify(const spec::Seccomp& p) {
  // Same limits as runc: the init still has to pass the listener on after loading the
  // filter, which a notifying default action (or write) would block forever.
  if (p.default_action == "SCMP_ACT_NOTIFY")
    return Error::invalid_spec("linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be used as default action");
  for (size_t i = 0; i < p.syscalls.size(); ++i) {
    if (p.syscalls[i].action != "SCMP_ACT_NOTIFY") continue;
    for (const auto& name : p.syscalls[i].names)
      if (name == "write")
        return Error::invalid_spec(rule_path(i) + ": SCMP_ACT_NOTIFY cannot be used for the write syscall");
  }
  return ok();
}

Status add_architectures(scmp_filter_ctx ctx, const spec::Seccomp& p) {
  for (size_t i = 0; i < p.architectures.size(); ++i) {
    std::string where = "linux.seccomp.architectures[" + std::to_string(i) + "]";
    uint32_t token = vocab::arch_token(p.architectures[i]);
    if (token == 0) return Error::invalid_spec(where + ": unknown architecture " + str::go_quote(p.architectures[i]));
    int rc = seccomp_arch_add(ctx, token);
    if (rc < 0 && rc != -EEXIST) return Error::sys(-rc, "seccomp: add architecture " + p.architectures[i]);
  }
  return ok();
}

Result<std::vector<scmp_arg_cmp>> conditions(const spec::Syscall& rule, const std::string& where) {
  std::vector<scmp_arg_cmp> out;
  for (size_t j = 0; j < rule.args.size(); ++j) {
    const auto& a = rule.args[j];
    std::string ap = where + ".args[" + std::to_string(j) + "]";
    auto op = vocab::compare(a.op);
    if (!op) return Error::invalid_spec(ap + ".op: unknown operator " + str::go_quote(a.op));
    if (a.index >= kMaxArgs) return Error::invalid_spec(ap + ".index: must be between 0 and 5");
    // For SCMP_CMP_MASKED_EQ, value is the mask and valueTwo the expected result.
    out.push_back(scmp_arg_cmp{a.index, *op, a.value, a.value_two});
  }
  return out;
}

// Several conditions on one argument index cannot be ANDed in one libseccomp rule; like
// runc, berth then adds one rule per condition (so they are ORed).
bool repeats_an_index(const std::vector<scmp_arg_cmp>& conds) {
  bool seen[kMaxArgs] = {};
  for (const auto& c : conds) {
    if (seen[c.arg]) return true;
    seen[c.arg] = true;
  }
  return false;
}

Status add_rule_for(scmp_filter_ctx ctx, uint32_t action, int nr, const std::vector<scmp_arg_cmp>& conds,
                    const std::string& name) {
  auto add = [&](unsigned count, const scmp_arg_cmp* first) -> Status {
    int rc = seccomp_rule_add_array(ctx, action, nr, count, first);
    if (rc < 0) return Error::sys(-rc, "seccomp: add rule for syscall " + name);
    return ok();
  };
  if (!repeats_an_index(conds)) return add(static_cast<unsigned>(conds.size()), conds.data());
  for (const auto& c : conds) BERTH_TRY(add(1, &c));
  return ok();
}

Result<size_t> add_rules(scmp_filter_ctx ctx, const spec::Seccomp& p, uint32_t default_action) {
  size_t added = 0;
  for (size_t i = 0; i < p.syscalls.size(); ++i) {
    const auto& rule = p.syscalls[i];
    BERTH_ASSIGN(uint32_t action, vocab::action(rule.action, rule.errno_ret, rule_path(i) + ".action",
                                                rule_path(i) + ".errnoRet"));
    // libseccomp refuses a rule that repeats the default action; it would change nothing.
    if (action == default_action) continue;
    BERTH_ASSIGN(auto conds, conditions(rule, rule_path(i)));
    for (const auto& name : rule.names) {
      int nr = seccomp_syscall_resolve_name(name.c_str());
      if (nr == __NR_SCMP_ERROR) {
        log::debug("unknown seccomp syscall " + str::go_quote(name) + " ignored");
        continue;
      }
      BERTH_TRY(add_rule_for(ctx, action, nr, conds, name).context(rule_path(i)));
      ++added;
    }
  }
  return added;
}

// libseccomp 2.5.4 has no seccomp_export_bpf_mem: export into a memfd and read it back.
Result<Program> export_program(scmp_filter_ctx ctx) {
  UniqueFd fd(::memfd_create("berth-seccomp-bpf", MFD_CLOEXEC));
  if (!fd) return Error::sys(errno, "seccomp: memfd_create");
  int rc = seccomp_export_bpf(ctx, fd.get());
  if (rc < 0) return Error::sys(-rc, "seccomp: export BPF");
  if (::lseek(fd.get(), 0, SEEK_SET) < 0) return Error::sys(errno, "seccomp: rewind exported BPF");
  // Generous cap: an oversized filter is reported below with its instruction count.
  BERTH_ASSIGN(std::string raw, file::read_fd(fd.get(), 64 * BPF_MAXINSNS * sizeof(sock_filter)));
  if (raw.empty() || raw.size() % sizeof(sock_filter) != 0)
    return Error::generic("seccomp: libseccomp exported " + std::to_string(raw.size()) +
                          " bytes, not whole instructions");
  Program prog;
  prog.insns.resize(raw.size() / sizeof(sock_filter));
  std::memcpy(prog.insns.data(), raw.data(), raw.size());
  return prog;
}

}  // namespace

Result<Program> compile(const spec::Seccomp& profile) {
  BERTH_TRY(check_notify(profile));
  BERTH_ASSIGN(uint32_t default_action, vocab::action(profile.default_action, profile.default_errno_ret,
                                                      "linux.seccomp.defaultAction", "linux.seccomp.defaultErrnoRet"));
  Ctx ctx(seccomp_init(default_action));
  if (!ctx) return Error::generic("seccomp: libseccomp refused the default action " + profile.default_action);
  BERTH_TRY(add_architectures(ctx.get(), profile));
  BERTH_ASSIGN(size_t rules, add_rules(ctx.get(), profile, default_action));
  if (rules > kBinaryTreeMinRules) {
    // Not fatal: an older libseccomp without the attribute builds the linear filter.
    if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0)
      log::debug("seccomp: binary tree optimization not available: " + std::to_string(rc));
  }
  BERTH_ASSIGN(Program body, export_program(ctx.get()));
  BERTH_ASSIGN(auto prologue, enosys_prologue(profile));
  if (prologue.size() + body.insns.size() > BPF_MAXINSNS)
    return Error::unsupported("seccomp: the filter needs " + std::to_string(prologue.size() + body.insns.size()) +
                              " instructions, the kernel takes at most " + std::to_string(BPF_MAXINSNS));
  Program out;
  out.insns = std::move(prologue);
  out.insns.insert(out.insns.end(), body.insns.begin(), body.insns.end());
  return out;
}

bool uses_notify(const spec::Seccomp& profile) {
  for (const auto& rule : profile.syscalls)
    if (rule.action == "SCMP_ACT_NOTIFY") return true;
  return false;
}

}  // namespace berth::seccomp
