// v2 devices: the final device rule list (linux.resources.devices + defaults + GPU/RDMA
// rules) compiled into a BPF_PROG_TYPE_CGROUP_DEVICE program, written here instruction by
// instruction. The rules are first folded into a DeviceState (v1 semantics), so the program
// is one default verdict plus exceptions that all share the opposite verdict, and their
// order does not matter:
//
//   r2 = type (access_type & 0xffff)   r3 = access (access_type >> 16)
//   r4 = major                         r5 = minor
//   per exception:  if type/access/major/minor do not match, jump to the next block;
//                   r0 = verdict; exit
//   r0 = default; exit
#include <cstddef>

#include "cgroups/v2/v2.h"

namespace berth::cgroups::v2 {
namespace {

bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}
bpf_insn ldx_w(uint8_t dst, uint8_t src, int16_t off) { return insn(BPF_LDX | BPF_W | BPF_MEM, dst, src, off, 0); }
bpf_insn alu_k(uint8_t op, uint8_t dst, int32_t imm) { return insn(BPF_ALU64 | op | BPF_K, dst, 0, 0, imm); }
bpf_insn mov_x(uint8_t dst, uint8_t src) { return insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0); }
bpf_insn jmp_k(uint8_t op, uint8_t dst, int32_t imm) { return insn(BPF_JMP | op | BPF_K, dst, 0, 0, imm); }
bpf_insn exit_insn() { return insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

constexpr uint8_t R0 = 0, R1 = 1, R2 = 2, R3 = 3, R4 = 4, R5 = 5;
constexpr int32_t kMax = 0x7fffffff;

// One exception's block; empty when it can never match (a number above what dev_t holds).
std::vector<bpf_insn> block(const DeviceRule& e) {
  std::vector<bpf_insn> b;
  if (e.major > kMax || e.minor > kMax) return b;
  b.push_back(jmp_k(BPF_JNE, R2, e.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR));
  if (e.access != kAllAccess) {
    b.push_back(mov_x(R1, R3));
    if (e.allow) {
      // An allow exception must cover every requested bit: (access & ~rule) == 0.
      b.push_back(alu_k(BPF_AND, R1, ~e.access & kAllAccess));
      b.push_back(jmp_k(BPF_JNE, R1, 0));
    } else {
      // A deny exception refuses any request sharing a bit with it, as v1 does.
      b.push_back(alu_k(BPF_AND, R1, e.access));
      b.push_back(jmp_k(BPF_JEQ, R1, 0));
    }
  }
  if (e.major != kWildcard) b.push_back(jmp_k(BPF_JNE, R4, static_cast<int32_t>(e.major)));
  if (e.minor != kWildcard) b.push_back(jmp_k(BPF_JNE, R5, static_cast<int32_t>(e.minor)));
  b.push_back(alu_k(BPF_MOV, R0, e.allow ? 1 : 0));
  b.push_back(exit_insn());
  // Every conditional jump skips to the end of the block.
  for (size_t i = 0; i < b.size(); ++i)
    if (BPF_CLASS(b[i].code) == BPF_JMP && BPF_OP(b[i].code) != BPF_EXIT)
      b[i].off = static_cast<int16_t>(b.size() - i - 1);
  return b;
}

}  // namespace

std::vector<bpf_insn> device_program(const DeviceState& state) {
  constexpr int16_t kType = offsetof(bpf_cgroup_dev_ctx, access_type);
  std::vector<bpf_insn> p = {
      ldx_w(R2, R1, kType),
      alu_k(BPF_AND, R2, 0xffff),
      ldx_w(R3, R1, kType),
      alu_k(BPF_RSH, R3, 16),
      ldx_w(R4, R1, offsetof(bpf_cgroup_dev_ctx, major)),
      ldx_w(R5, R1, offsetof(bpf_cgroup_dev_ctx, minor)),
  };
  for (const auto& e : state.exceptions()) {
    auto b = block(e);
    p.insert(p.end(), b.begin(), b.end());
  }
  p.push_back(alu_k(BPF_MOV, R0, state.default_allow() ? 1 : 0));
  p.push_back(exit_insn());
  return p;
}

std::string disassemble(const std::vector<bpf_insn>& prog) {
  std::string out;
  auto reg = [](int r) { return "r" + std::to_string(r); };
  for (const auto& i : prog) {
    std::string line;
    int dst = i.dst_reg, src = i.src_reg;
    switch (i.code) {
      case BPF_LDX | BPF_W | BPF_MEM:
        line = reg(dst) + " = *(u32 *)(" + reg(src) + " + " + std::to_string(i.off) + ")";
        break;
      case BPF_ALU64 | BPF_AND | BPF_K: line = reg(dst) + " &= " + std::to_string(i.imm); break;
      case BPF_ALU64 | BPF_RSH | BPF_K: line = reg(dst) + " >>= " + std::to_string(i.imm); break;
      case BPF_ALU64 | BPF_MOV | BPF_K: line = reg(dst) + " = " + std::to_string(i.imm); break;
      case BPF_ALU64 | BPF_MOV | BPF_X: line = reg(dst) + " = " + reg(src); break;
      case BPF_JMP | BPF_JNE | BPF_K:
      case BPF_JMP | BPF_JEQ | BPF_K:
        line = "if " + reg(dst) + (BPF_OP(i.code) == BPF_JNE ? " != " : " == ") +
               std::to_string(i.imm) + " goto +" + std::to_string(i.off);
        break;
      case BPF_JMP | BPF_EXIT: line = "exit"; break;
      default: line = "unknown " + std::to_string(i.code);
    }
    out += line + "\n";
  }
  return out;
}

Status set_device_rules(const Dir& d, const std::vector<DeviceRule>& rules) {
  auto prog = device_program(DeviceState::from_rules(rules));
  BERTH_ASSIGN(auto fd, load_device_program(prog));
  return attach_device_program(d.fd(), fd.get()).context("attach the device filter to " + d.path());
}

namespace {
std::string field(const SetContext& ctx) {
  return ctx.devices && !ctx.devices->empty() ? "linux.resources.devices" : "";
}
Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.devices) return ok();
  return set_device_rules(d, *ctx.devices).context("linux.resources.devices");
}
}  // namespace

const Controller kDevices = {"devices", field, set, nullptr};

}  // namespace berth::cgroups::v2
