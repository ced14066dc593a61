// The v2 device eBPF program: its exact instructions for a small rule set, and its verdicts
// (run in a tiny interpreter of the instructions berth emits) against the v1 semantics of
// DeviceState for every device class, number and access combination that matters.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "cgroups/v2/v2.h"

namespace berth::cgroups::v2 {
namespace {

DeviceRule rule(const char* line, bool allow) { return parse_rule(line, allow).value(); }

// Runs a program on one bpf_cgroup_dev_ctx; fails the test on an opcode berth never emits.
int run(const std::vector<bpf_insn>& prog, char type, uint32_t major, uint32_t minor, uint8_t access) {
  bpf_cgroup_dev_ctx ctx{};
  ctx.access_type = (static_cast<uint32_t>(access) << 16) |
                    (type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
  ctx.major = major;
  ctx.minor = minor;
  uint64_t r[11] = {};
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const auto& i = prog[pc];
    uint64_t imm = static_cast<uint64_t>(static_cast<int64_t>(i.imm));
    switch (i.code) {
      case BPF_LDX | BPF_W | BPF_MEM: {
        uint32_t v;
        std::memcpy(&v, reinterpret_cast<const char*>(&ctx) + i.off, 4);
        r[i.dst_reg] = v;
        break;
      }
      case BPF_ALU64 | BPF_AND | BPF_K: r[i.dst_reg] &= imm; break;
      case BPF_ALU64 | BPF_RSH | BPF_K: r[i.dst_reg] >>= imm; break;
      case BPF_ALU64 | BPF_MOV | BPF_K: r[i.dst_reg] = imm; break;
      case BPF_ALU64 | BPF_MOV | BPF_X: r[i.dst_reg] = r[i.src_reg]; break;
      case BPF_JMP | BPF_JNE | BPF_K: if (r[i.dst_reg] != imm) pc += i.off; break;
      case BPF_JMP | BPF_JEQ | BPF_K: if (r[i.dst_reg] == imm) pc += i.off; break;
      case BPF_JMP | BPF_EXIT: return static_cast<int>(r[0]);
      default: ADD_FAILURE() << "unexpected opcode " << int(i.code); return -1;
    }
  }
  ADD_FAILURE() << "fell off the end";
  return -1;
}

void expect_same_verdicts(const std::vector<DeviceRule>& rules) {
  auto state = DeviceState::from_rules(rules);
  auto prog = device_program(state);
  for (char type : {'c', 'b'})
    for (uint32_t major : {0u, 1u, 5u, 10u, 136u, 195u, 4095u})
      for (uint32_t minor : {0u, 1u, 2u, 3u, 5u, 7u, 200u, 255u})
        for (uint8_t access = 1; access <= 7; ++access)
          ASSERT_EQ(run(prog, type, major, minor, access) == 1, state.allows(type, major, minor, access))
              << type << " " << major << ":" << minor << " " << access_string(access) << "\n"
              << disassemble(prog);
}

TEST(CgroupsV2Devices, ProgramText) {
  auto state = DeviceState::from_rules({rule("a", false), rule("c 1:3 rwm", true), rule("c *:* m", true),
                                        rule("b 8:* r", true)});
  EXPECT_EQ(disassemble(device_program(state)),
            "r2 = *(u32 *)(r1 + 0)\n"
            "r2 &= 65535\n"
            "r3 = *(u32 *)(r1 + 0)\n"
            "r3 >>= 16\n"
            "r4 = *(u32 *)(r1 + 4)\n"
            "r5 = *(u32 *)(r1 + 8)\n"
            // c 1:3 rwm: every access, so no access test
            "if r2 != 2 goto +4\n"
            "if r4 != 1 goto +3\n"
            "if r5 != 3 goto +2\n"
            "r0 = 1\n"
            "exit\n"
            // c *:* m: requested bits outside "m" skip it
            "if r2 != 2 goto +5\n"
            "r1 = r3\n"
            "r1 &= 6\n"
            "if r1 != 0 goto +2\n"
            "r0 = 1\n"
            "exit\n"
            // b 8:* r
            "if r2 != 1 goto +6\n"
            "r1 = r3\n"
            "r1 &= 5\n"
            "if r1 != 0 goto +3\n"
            "if r4 != 8 goto +2\n"
            "r0 = 1\n"
            "exit\n"
            "r0 = 0\n"
            "exit\n");
}

TEST(CgroupsV2Devices, DockerDefaultsMatchV1Semantics) {
  std::vector<DeviceRule> rules = {rule("a", false)};
  for (const auto& d : default_allowed_devices()) rules.push_back(d);
  rules.push_back(rule("c 195:* rw", true));  // a GPU rule appended by the caller
  expect_same_verdicts(rules);
}

TEST(CgroupsV2Devices, DenyListMatchesV1Semantics) {
  expect_same_verdicts({rule("a", true), rule("c 1:3 w", false), rule("b *:* rwm", false),
                        rule("c 5:* m", false)});
}

TEST(CgroupsV2Devices, EmptyAndAllowAll) {
  expect_same_verdicts({});
  expect_same_verdicts({rule("a", false)});
  auto prog = device_program(DeviceState::from_rules({rule("a", false)}));
  EXPECT_EQ(prog.size(), 8u);  // the loads, then "r0 = 0; exit"
}

TEST(CgroupsV2Devices, RandomRuleListsMatchV1Semantics) {
  std::mt19937 rng(42);
  const char* lines[] = {"a", "c 1:3 rwm", "c 1:3 w", "c *:* m", "b *:* m", "c 1:* r", "b 8:0 rw",
                         "c 5:2 rwm", "b 8:* w", "c 136:* rw", "c 1:5 m", "b 7:* rwm"};
  for (int round = 0; round < 200; ++round) {
    std::vector<DeviceRule> rules;
    int n = static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) rules.push_back(rule(lines[rng() % std::size(lines)], rng() % 2));
    expect_same_verdicts(rules);
  }
}

TEST(CgroupsV2Devices, ImpossibleNumbersNeverMatch) {
  DeviceRule huge = rule("c 1:3 rwm", true);
  huge.major = 0x80000000LL;
  auto prog = device_program(DeviceState::from_rules({rule("a", false), huge}));
  EXPECT_EQ(prog.size(), 8u);
}

}  // namespace
}  // namespace berth::cgroups::v2
