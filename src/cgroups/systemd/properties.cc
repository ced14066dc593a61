// linux.resources (memory, cpu, pids, blockIO.weight, devices, unified) → systemd unit
// properties, runc's conversions: see properties.h.
#include "cgroups/systemd/properties.h"

#include <limits>

#include "cgroups/common/convert.h"
#include "cgroups/common/device_state.h"
#include "util/strings.h"

namespace berth::cgroups::systemd {
namespace {

constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();  // systemd's *_INFINITY
constexpr uint64_t kDefaultPeriod = 100000;  // the kernel's cfs period, v1 and v2
constexpr uint64_t kMaxCpuOrNode = 65535;

Property prop(std::string name, Value v) { return {std::move(name), std::move(v)}; }

Result<uint64_t> parse_bit(std::string_view s) {
  auto n = str::parse_u64(str::trim(s));
  if (!n) return Error::invalid_spec("invalid number " + str::go_quote(s));
  if (*n > kMaxCpuOrNode) return Error::invalid_spec("number " + std::to_string(*n) + " out of range");
  return *n;
}

Status add_cpuset(std::vector<Property>& out, const std::string& cpus, const std::string& mems,
                  const PropertyOptions& o, std::string_view cpus_field, std::string_view mems_field) {
  // systemd has AllowedCPUs/AllowedMemoryNodes since v244; older ones get the files only.
  if (o.systemd_version < 244) return ok();
  for (auto [value, name, field] : {std::tuple{&cpus, "AllowedCPUs", cpus_field},
                                    std::tuple{&mems, "AllowedMemoryNodes", mems_field}}) {
    if (value->empty()) continue;
    auto bits = range_to_bits(*value);
    if (!bits)
      return Error::invalid_spec(std::string(field) + "=" + str::go_quote(*value) + " conversion error: " +
                                 bits.error().root());
    out.push_back(prop(name, Value::byte_array(std::move(*bits))));
  }
  return ok();
}

// linux.resources.unified → properties for the keys systemd knows (runc's
// unifiedResToSystemdProps); the rest are only written to the files.
Status add_unified(std::vector<Property>& out, const std::map<std::string, std::string>& unified,
                   const PropertyOptions& o) {
  auto conv_error = [](const std::string& k, const std::string& why) {
    return Error::invalid_spec("unified resource " + str::go_quote(k) + " value conversion error: " + why);
  };
  bool idle = o.systemd_version >= 252 && unified.count("cpu.idle") && str::trim(unified.at("cpu.idle")) == "1";
  for (const auto& [k, raw] : unified) {
    if (k.find('/') != std::string::npos)
      return Error::invalid_spec("unified resource " + str::go_quote(k) + " must be a file name (no slashes)");
    if (k.find('.') == std::string::npos || k.front() == '.')
      return Error::invalid_spec("unified resource " + str::go_quote(k) + " must be in the form CONTROLLER.PARAMETER");
    std::string v(str::trim(raw));
    if (k == "cpu.idle") {
      // CPUWeight=0 is systemd's spelling of cpu.idle=1 (v252+); 0 cannot be asked for.
      if (idle) out.push_back(prop("CPUWeight", Value::u64(0)));
    } else if (k == "cpu.max") {
      auto f = str::split_nonempty(v, ' ');
      if (f.empty() || f.size() > 2)
        return Error::invalid_spec("unified resource " + str::go_quote(k) + " value invalid: " + str::go_quote(v));
      int64_t quota = 0;  // "max": no quota
      uint64_t period = kDefaultPeriod;
      if (f[0] != "max") {
        auto q = str::parse_i64(f[0]);
        if (!q) return conv_error(k, "invalid quota " + str::go_quote(f[0]));
        quota = *q;
      }
      if (f.size() == 2) {
        auto p = str::parse_u64(f[1]);
        if (!p || *p == 0) return conv_error(k, "invalid period " + str::go_quote(f[1]));
        period = *p;
      }
      add_cpu_quota(out, quota, period, o);
    } else if (k == "cpu.weight") {
      if (idle) continue;  // one CPUWeight only; cpu.idle wins, as in runc
      auto n = str::parse_u64(v);
      if (!n) return conv_error(k, "invalid number " + str::go_quote(v));
      out.push_back(prop("CPUWeight", Value::u64(*n)));
    } else if (k == "cpuset.cpus" || k == "cpuset.mems") {
      bool cpus = k == "cpuset.cpus";
      BERTH_TRY(add_cpuset(out, cpus ? v : "", cpus ? "" : v, o, "unified resource \"cpuset.cpus\"",
                           "unified resource \"cpuset.mems\""));
    } else if (k == "memory.high" || k == "memory.low" || k == "memory.min" || k == "memory.max" ||
               k == "memory.swap.max" || k == "pids.max") {
      uint64_t n = kInfinity;
      if (v != "max") {
        auto p = str::parse_u64(v);
        if (!p) return conv_error(k, "invalid number " + str::go_quote(v));
        n = *p;
      }
      static const std::map<std::string, const char*> kNames = {
          {"memory.high", "MemoryHigh"}, {"memory.low", "MemoryLow"},         {"memory.min", "MemoryMin"},
          {"memory.max", "MemoryMax"},   {"memory.swap.max", "MemorySwapMax"}, {"pids.max", "TasksMax"}};
      out.push_back(prop(kNames.at(k), Value::u64(n)));
    }
  }
  return ok();
}

Status add_memory(std::vector<Property>& out, const spec::Memory& m, const PropertyOptions& o) {
  int64_t limit = m.limit.value_or(0);
  if (!o.v2) {
    if (limit != 0) out.push_back(prop("MemoryLimit", Value::u64(static_cast<uint64_t>(limit))));
    return ok();
  }
  if (limit != 0) out.push_back(prop("MemoryMax", Value::u64(static_cast<uint64_t>(limit))));
  if (m.reservation.value_or(0) != 0)
    out.push_back(prop("MemoryLow", Value::u64(static_cast<uint64_t>(*m.reservation))));
  auto swap = memory_swap_to_v2(m.swap.value_or(0), limit);
  if (!swap) return Error::invalid_spec("linux.resources.memory.swap: " + swap.error().root());
  if (*swap != 0) out.push_back(prop("MemorySwapMax", Value::u64(static_cast<uint64_t>(*swap))));
  return ok();
}

}  // namespace

Result<std::vector<uint8_t>> range_to_bits(std::string_view ranges) {
  std::vector<uint8_t> bytes;
  auto set = [&](uint64_t bit) {
    if (bytes.size() <= bit / 8) bytes.resize(bit / 8 + 1, 0);
    bytes[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
  };
  for (const auto& part : str::split(ranges, ',')) {
    std::string_view r = str::trim(part);
    if (r.empty()) continue;  // runc allows extra commas
    auto dash = r.find('-');
    if (dash == std::string_view::npos) {
      BERTH_ASSIGN(uint64_t bit, parse_bit(r));
      set(bit);
      continue;
    }
    BERTH_ASSIGN(uint64_t start, parse_bit(r.substr(0, dash)));
    BERTH_ASSIGN(uint64_t end, parse_bit(r.substr(dash + 1)));
    if (start > end) return Error::invalid_spec("invalid range: " + std::string(r));
    for (uint64_t b = start; b <= end; ++b) set(b);
  }
  // Trailing zero bytes cannot occur (the highest set bit makes the last byte); an all-empty
  // list has no bytes at all.
  if (bytes.empty()) return Error::invalid_spec("empty value");
  return bytes;
}

void add_cpu_quota(std::vector<Property>& out, int64_t quota, uint64_t period, const PropertyOptions& o) {
  if (period != 0 && o.systemd_version >= 242) out.push_back(prop("CPUQuotaPeriodUSec", Value::u64(period)));
  if (quota == 0 && period == 0) return;
  uint64_t per_sec = kInfinity;
  if (quota > 0) {
    if (period == 0) period = kDefaultPeriod;
    // systemd stores whole percents of a CPU (10 ms per second): round *up*, so that a child
    // cgroup may still set the exact cpu.cfs_quota_us the spec asks for (runc). 128-bit, so
    // a hostile quota cannot wrap around to a small limit.
    unsigned __int128 v = static_cast<unsigned __int128>(quota) * 1000000u / period;
    if (v % 10000 != 0) v = (v / 10000 + 1) * 10000;
    per_sec = v >= kInfinity ? kInfinity - 1 : static_cast<uint64_t>(v);
  }
  out.push_back(prop("CPUQuotaPerSecUSec", Value::u64(per_sec)));
}

std::vector<Property> device_properties(const std::vector<DeviceRule>& rules) {
  DeviceState state = DeviceState::from_rules(rules);
  std::vector<Property> out;
  if (state.default_allow()) {
    // systemd cannot deny single devices: allow-all is "auto" with no list; any other
    // deny-list becomes deny-all here and the cgroup's own rules (written next) decide.
    out.push_back(prop("DevicePolicy", Value::str(state.exceptions().empty() ? "auto" : "strict")));
    out.push_back(prop("DeviceAllow", Value::string_pairs({})));
    return out;
  }
  std::vector<std::pair<std::string, std::string>> allow;
  for (const auto& r : state.exceptions()) {
    if (r.type != 'c' && r.type != 'b') continue;
    std::string group = r.type == 'c' ? "char-" : "block-";
    std::string path;
    if (r.major == kWildcard) {
      if (r.minor != kWildcard) continue;  // "*:n": systemd has no form for it
      path = group + "*";
    } else if (r.minor == kWildcard) {
      path = group + std::to_string(r.major);  // systemd >= 240 reads "char-MAJOR"
    } else {
      path = std::string(r.type == 'c' ? "/dev/char/" : "/dev/block/") + std::to_string(r.major) + ":" +
             std::to_string(r.minor);
    }
    allow.emplace_back(std::move(path), access_string(r.access));
  }
  out.push_back(prop("DevicePolicy", Value::str("strict")));
  out.push_back(prop("DeviceAllow", Value::string_pairs(std::move(allow))));
  return out;
}

Result<std::vector<Property>> resource_properties(const spec::Resources& r, const std::vector<DeviceRule>* devices,
                                                  const PropertyOptions& o) {
  std::vector<Property> out;
  if (devices) out = device_properties(*devices);
  if (r.memory) BERTH_TRY(add_memory(out, *r.memory, o));
  if (r.cpu) {
    const auto& c = *r.cpu;
    uint64_t shares = c.shares.value_or(0);
    bool idle = o.v2 && c.idle.value_or(0) == 1 && o.systemd_version >= 252;
    if (idle) out.push_back(prop("CPUWeight", Value::u64(0)));
    if (shares != 0 && !idle) {
      if (o.v2) out.push_back(prop("CPUWeight", Value::u64(cpu_shares_to_weight(shares))));
      else out.push_back(prop("CPUShares", Value::u64(shares)));
    }
    add_cpu_quota(out, c.quota.value_or(0), c.period.value_or(0), o);
  }
  if (r.block_io && r.block_io->weight.value_or(0) != 0) {
    uint16_t w = *r.block_io->weight;
    if (o.v2) out.push_back(prop("IOWeight", Value::u64(blkio_weight_to_io_weight(w))));
    else out.push_back(prop("BlockIOWeight", Value::u64(w)));
  }
  if (r.pids && (r.pids->limit > 0 || r.pids->limit == -1))
    out.push_back(prop("TasksMax", Value::u64(static_cast<uint64_t>(r.pids->limit))));
  if (r.cpu)
    BERTH_TRY(add_cpuset(out, r.cpu->cpus, r.cpu->mems, o, "linux.resources.cpu.cpus", "linux.resources.cpu.mems"));
  if (o.v2) BERTH_TRY(add_unified(out, r.unified, o));
  return out;
}

}  // namespace berth::cgroups::systemd
