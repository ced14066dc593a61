// Stats → runc's `events --stats` JSON (types.Stats field names and omitempty), and the
// parsers shared by the v1 and v2 stats readers. See stats.h.
#include "cgroups/stats.h"

#include <cstdio>
#include <cstdlib>

#include "util/strings.h"

namespace berth::cgroups {
namespace {

// A small writer: runc's document needs keys in struct order, Go's omitempty, and floats
// (PSI) printed as Go prints them, which the shared json::Writer does not offer.
class Out {
 public:
  void open(char c) { sep(); s_ += c; first_ = true; }
  void close(char c) { s_ += c; first_ = false; }
  void key(std::string_view k) { sep(); quote(k); s_ += ':'; first_ = true; }
  void u(std::string_view k, uint64_t v) { key(k); raw(std::to_string(v)); }
  void i(std::string_view k, int64_t v) { key(k); raw(std::to_string(v)); }
  void u_nz(std::string_view k, uint64_t v) { if (v) u(k, v); }  // omitempty
  void str(std::string_view k, std::string_view v) { key(k); sep(); quote(v); first_ = false; }
  void f(std::string_view k, double v) {
    key(k);
    raw(go_float(v));
  }
  template <class T>
  void list_nz(std::string_view k, const std::vector<T>& v) {
    if (v.empty()) return;
    key(k);
    open('[');
    for (auto x : v) raw(std::to_string(x));
    close(']');
  }
  void raw(std::string_view v) { sep(); s_ += v; first_ = false; }
  std::string take() { return std::move(s_); }

 private:
  void sep() {
    if (!first_) s_ += ',';
    first_ = false;
  }
  void quote(std::string_view v) {
    s_ += '"';
    for (char c : v) {
      if (c == '"' || c == '\\') {
        s_ += '\\';
        s_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        s_ += b;
      } else {
        s_ += c;
      }
    }
    s_ += '"';
  }
  std::string s_;
  bool first_ = true;
};

void psi_data(Out& o, std::string_view k, const PsiData& d) {
  o.key(k);
  o.open('{');
  o.f("avg10", d.avg10);
  o.f("avg60", d.avg60);
  o.f("avg300", d.avg300);
  o.u("total", d.total);
  o.close('}');
}

void psi(Out& o, const std::optional<Psi>& p) {
  if (!p) return;
  o.key("psi");
  o.open('{');
  psi_data(o, "some", p->some);
  psi_data(o, "full", p->full);
  o.close('}');
}

void cpu(Out& o, const CpuStats& c) {
  o.key("cpu");
  o.open('{');
  o.key("usage");
  o.open('{');
  o.u_nz("total", c.usage.total);
  o.list_nz("percpu", c.usage.percpu);
  o.list_nz("percpu_kernel", c.usage.percpu_kernel);
  o.list_nz("percpu_user", c.usage.percpu_user);
  o.u("kernel", c.usage.kernel);
  o.u("user", c.usage.user);
  o.close('}');
  o.key("throttling");
  o.open('{');
  o.u_nz("periods", c.throttling.periods);
  o.u_nz("throttledPeriods", c.throttling.throttled_periods);
  o.u_nz("throttledTime", c.throttling.throttled_time);
  o.close('}');
  psi(o, c.psi);
  o.close('}');
}

void cpuset(Out& o, const CpusetStats& c) {
  o.key("cpuset");
  o.open('{');
  o.list_nz("cpus", c.cpus);
  o.u("cpu_exclusive", c.cpu_exclusive);
  o.list_nz("mems", c.mems);
  o.u("mem_hardwall", c.mem_hardwall);
  o.u("mem_exclusive", c.mem_exclusive);
  o.u("memory_migrate", c.memory_migrate);
  o.u("memory_spread_page", c.memory_spread_page);
  o.u("memory_spread_slab", c.memory_spread_slab);
  o.u("memory_pressure", c.memory_pressure);
  o.u("sched_load_balance", c.sched_load_balance);
  o.i("sched_relax_domain_level", c.sched_relax_domain_level);
  o.close('}');
}

void entry(Out& o, std::string_view k, const MemoryEntry& e) {
  o.key(k);
  o.open('{');
  o.u("limit", e.limit);
  o.u_nz("usage", e.usage);
  o.u_nz("max", e.max);
  o.u("failcnt", e.failcnt);
  o.close('}');
}

void memory(Out& o, const MemoryStats& m) {
  o.key("memory");
  o.open('{');
  o.u_nz("cache", m.cache);
  entry(o, "usage", m.usage);
  entry(o, "swap", m.swap);
  entry(o, "kernel", m.kernel);
  entry(o, "kernelTCP", m.kernel_tcp);
  if (!m.raw.empty()) {
    o.key("raw");
    o.open('{');
    for (const auto& [k, v] : m.raw) o.u(k, v);
    o.close('}');
  }
  psi(o, m.psi);
  o.close('}');
}

void blkio_list(Out& o, std::string_view k, const std::vector<BlkioEntry>& v) {
  if (v.empty()) return;
  o.key(k);
  o.open('[');
  for (const auto& e : v) {
    o.open('{');
    o.u_nz("major", e.major);
    o.u_nz("minor", e.minor);
    if (!e.op.empty()) o.str("op", e.op);
    o.u_nz("value", e.value);
    o.close('}');
  }
  o.close(']');
}

void blkio(Out& o, const BlkioStats& b) {
  o.key("blkio");
  o.open('{');
  blkio_list(o, "ioServiceBytesRecursive", b.io_service_bytes_recursive);
  blkio_list(o, "ioServicedRecursive", b.io_serviced_recursive);
  blkio_list(o, "ioQueueRecursive", b.io_queued_recursive);
  blkio_list(o, "ioServiceTimeRecursive", b.io_service_time_recursive);
  blkio_list(o, "ioWaitTimeRecursive", b.io_wait_time_recursive);
  blkio_list(o, "ioMergedRecursive", b.io_merged_recursive);
  blkio_list(o, "ioTimeRecursive", b.io_time_recursive);
  blkio_list(o, "sectorsRecursive", b.sectors_recursive);
  psi(o, b.psi);
  o.close('}');
}

}  // namespace

// Not std::to_chars: its floating-point part links libm (fesetround) into the binary, one
// shared object more to map on every call. The shortest precision whose digits read back as
// v is the shortest round-trip form, and "%.*f" gives its closest digits, as to_chars does.
std::string go_float(double v) {
  char buf[512];
  bool finite = v == v && v - v == 0;  // no NaN or inf: they have no round trip
  bool small = v < 9007199254740992.0 && v > -9007199254740992.0;  // 2^53: "%.0f" prints exact digits
  for (int p = 0; finite && small && p <= 340; ++p) {
    int n = std::snprintf(buf, sizeof buf, "%.*f", p, v);
    if (n > 0 && static_cast<size_t>(n) < sizeof buf && std::strtod(buf, nullptr) == v) return std::string(buf, n);
  }
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string to_json(const Stats& s) {
  Out o;
  o.open('{');
  cpu(o, s.cpu);
  cpuset(o, s.cpuset);
  memory(o, s.memory);
  o.key("pids");
  o.open('{');
  o.u_nz("current", s.pids.current);
  o.u_nz("limit", s.pids.limit);
  o.close('}');
  blkio(o, s.blkio);
  o.key("hugetlb");
  o.open('{');
  for (const auto& [size, h] : s.hugetlb) {
    o.key(size);
    o.open('{');
    o.u_nz("usage", h.usage);
    o.u_nz("max", h.max);
    o.u("failcnt", h.failcnt);
    o.close('}');
  }
  o.close('}');
  o.key("intel_rdt");
  o.open('{');
  o.close('}');
  o.key("network_interfaces");
  o.raw("null");
  o.close('}');
  return o.take();
}

std::vector<uint16_t> parse_cpu_list(std::string_view list) {
  std::vector<uint16_t> out;
  for (const auto& part : str::split_nonempty(str::trim(list), ',')) {
    auto dash = part.find('-');
    auto lo = str::parse_u64(std::string_view(part).substr(0, dash));
    auto hi = dash == std::string::npos ? lo : str::parse_u64(std::string_view(part).substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi > 0xffff) continue;
    for (uint64_t c = *lo; c <= *hi; ++c) out.push_back(static_cast<uint16_t>(c));
  }
  return out;
}

std::optional<Psi> parse_psi(std::string_view content) {
  Psi p;
  bool any = false;
  for (const auto& line : str::split_nonempty(content, '\n')) {
    auto fields = str::split_nonempty(line, ' ');
    if (fields.empty()) continue;
    PsiData* d = fields[0] == "some" ? &p.some : fields[0] == "full" ? &p.full : nullptr;
    if (!d) continue;
    any = true;
    for (size_t i = 1; i < fields.size(); ++i) {
      auto eq = fields[i].find('=');
      if (eq == std::string::npos) continue;
      std::string key = fields[i].substr(0, eq), val = fields[i].substr(eq + 1);
      if (key == "total") d->total = str::parse_u64(val).value_or(0);
      else if (key == "avg10") d->avg10 = std::strtod(val.c_str(), nullptr);
      else if (key == "avg60") d->avg60 = std::strtod(val.c_str(), nullptr);
      else if (key == "avg300") d->avg300 = std::strtod(val.c_str(), nullptr);
    }
  }
  if (!any) return std::nullopt;
  return p;
}

std::vector<BlkioEntry> parse_blkio(std::string_view content) {
  std::vector<BlkioEntry> out;
  for (const auto& line : str::split_nonempty(content, '\n')) {
    auto fields = str::split_nonempty(line, ' ');
    if (fields.size() < 2 || fields[0] == "Total") continue;
    auto colon = fields[0].find(':');
    if (colon == std::string::npos) continue;
    BlkioEntry e;
    e.major = str::parse_u64(fields[0].substr(0, colon)).value_or(0);
    e.minor = str::parse_u64(fields[0].substr(colon + 1)).value_or(0);
    if (fields.size() >= 3) e.op = fields[1];
    e.value = str::parse_u64(fields.back()).value_or(0);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace berth::cgroups
