// v1 cpuacct controller: no spec fields; cpu usage statistics (total, per cpu, user/kernel).
#include <unistd.h>

#include <cerrno>

#include "cgroups/v1/v1.h"
#include "util/strings.h"

namespace berth::cgroups::v1 {
namespace {

std::string no_field(const SetContext&) { return {}; }
Status no_set(const Dir&, const SetContext&) { return ok(); }

std::vector<uint64_t> numbers(std::string_view text) {
  std::vector<uint64_t> out;
  for (const auto& w : str::split_nonempty(str::trim(text), ' '))
    out.push_back(str::parse_u64(w).value_or(0));
  return out;
}

// cpuacct.usage_all: "cpu user system" header, then one line per cpu (ns).
void per_cpu_modes(std::string_view text, CpuUsage& u) {
  auto lines = str::split_nonempty(text, '\n');
  for (size_t i = 1; i < lines.size(); ++i) {
    auto f = numbers(lines[i]);
    if (f.size() < 3) continue;
    u.percpu_user.push_back(f[1]);
    u.percpu_kernel.push_back(f[2]);
  }
}

Status stats(const Dir& d, Stats& s) {
  auto& u = s.cpu.usage;
  auto total = d.read_u64("cpuacct.usage");
  if (!total) return total.error().err() == ENOENT ? ok() : Status(std::move(total).error());
  u.total = *total;
  if (auto per = d.read("cpuacct.usage_percpu")) u.percpu = numbers(*per);
  if (auto all = d.read("cpuacct.usage_all")) per_cpu_modes(*all, u);
  // cpuacct.stat is in clock ticks (USER_HZ); runc reports nanoseconds.
  if (auto kv = d.read_keyed("cpuacct.stat")) {
    uint64_t hz = static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
    if (hz == 0) hz = 100;
    u.user = (*kv)["user"] * (1000000000ull / hz);
    u.kernel = (*kv)["system"] * (1000000000ull / hz);
  }
  return ok();
}

}  // namespace

const Controller kCpuacct = {"cpuacct", no_field, no_set, stats};

}  // namespace berth::cgroups::v1
