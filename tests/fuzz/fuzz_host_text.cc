// libFuzzer target: the small texts berth reads from the host or from the image that have
// no target of their own. The first byte picks the parser, the rest is its input:
//   0 /proc/<pid>/stat            5 devices.list rule (+ access letters)
//   1 cgroup cpuset list          6 /etc/passwd, /etc/group, a `--user` spec
//   2 PSI (cpu.pressure ...)      7 berth's own config file (/etc/berth/config.json)
//   3 blkio stats lines           8 NVIDIA_DRIVER_CAPABILITIES
//   4 keyed stats, rdma.max, "max"  9 NVIDIA_* environment (newline-separated), CUDA
//                                      requirements evaluated against fixed facts
// Where a parser has a writer, what it wrote must read back the same.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cgroups/common/device_rule.h"
#include "cgroups/common/rdma.h"
#include "cgroups/fs.h"
#include "cgroups/stats.h"
#include "devices/config.h"
#include "devices/nvidia/request.h"
#include "devices/nvidia/require.h"
#include "linux/proc.h"
#include "linux/users.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

namespace cg = berth::cgroups;

void proc_stat(std::string_view text) {
  auto s = berth::linux::parse_proc_stat(text);
  if (s) check(std::isalpha(static_cast<unsigned char>(s->state)) != 0);
}

void cpu_list(std::string_view text) {
  for (uint16_t cpu : cg::parse_cpu_list(text)) (void)cpu;
}

void psi(std::string_view text) { (void)cg::parse_psi(text); }

void blkio(std::string_view text) { (void)cg::parse_blkio(text); }

void keyed(std::string_view text) {
  (void)cg::parse_keyed(text);
  (void)cg::parse_rdma(text);
  if (auto n = cg::parse_u64_or_max(text); n && *n != UINT64_MAX) {
    auto again = cg::parse_u64_or_max(std::to_string(*n));
    check(again && *again == *n);
  }
}

void device_rule(std::string_view text) {
  if (auto rule = cg::parse_rule(text, true)) {
    check(rule->access != 0);
    auto again = cg::parse_rule(cg::to_string(*rule), true);
    check(again && *again == *rule);
  }
  if (auto bits = cg::parse_access(text)) {
    auto again = cg::parse_access(cg::access_string(*bits));
    check(again && *again == *bits);
  }
}

void users(std::string_view text) {
  auto entries = berth::linux::parse_passwd(text);
  for (const auto& e : entries) (void)berth::linux::groups_of(text, e.name);
  // The spec is the first line, the passwd text the rest.
  size_t nl = text.find('\n');
  std::string spec(text.substr(0, nl));
  (void)berth::linux::parse_user_spec(spec, nl == std::string_view::npos ? "" : text.substr(nl + 1));
}

void config(std::string_view text) { (void)berth::devices::parse_config(text, "fuzz"); }

void capabilities(std::string_view text) {
  namespace nv = berth::devices::nvidia;
  if (auto caps = nv::parse_capabilities(text, "fuzz")) {
    check((*caps & ~nv::kAllCapabilities) == 0);
    auto again = nv::parse_capabilities(nv::capabilities_text(*caps), "fuzz");
    check(again && *again == *caps);
  }
}

void nvidia_env(std::string_view text) {
  namespace nv = berth::devices::nvidia;
  std::vector<std::string> env;
  for (size_t start = 0; start <= text.size();) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    env.emplace_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  (void)nv::parse_device_list(nv::env_value(env, "NVIDIA_VISIBLE_DEVICES"));
  nv::Request r;
  nv::parse_requirements(env, r);
  nv::Facts facts{"12.2", "535.104.05", "9.0", "tesla", "GPU 0 (fuzz)"};
  for (const auto& wanted : r.requirements) {
    auto req = nv::parse_requirement(wanted);
    if (!req) continue;
    auto e = nv::evaluate(*req, facts);
    if (e.verdict != nv::Verdict::kHolds) (void)nv::requirement_error(wanted, e, facts);
  }
  for (const auto& v : env) {
    check(nv::compare_versions(v, v) == 0);
    check(nv::compare_versions(v, "1.0") == -nv::compare_versions("1.0", v));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 10) {
    case 0: proc_stat(text); break;
    case 1: cpu_list(text); break;
    case 2: psi(text); break;
    case 3: blkio(text); break;
    case 4: keyed(text); break;
    case 5: device_rule(text); break;
    case 6: users(text); break;
    case 7: config(text); break;
    case 8: capabilities(text); break;
    case 9: nvidia_env(text); break;
  }
  return 0;
}
