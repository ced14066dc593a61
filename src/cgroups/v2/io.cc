// v2 io controller: linux.resources.blockIO.{weight → io.bfq.weight (or io.weight,
// converted), weightDevice → io.bfq.weight, throttle*Device → io.max}; leafWeight has no
// v2 file and is refused, as is weightDevice without BFQ; io.stat and io.pressure stats.
#include <cerrno>

#include "cgroups/common/convert.h"
#include "cgroups/v2/v2.h"
#include "util/strings.h"

namespace berth::cgroups::v2 {
namespace {

std::string field(const std::string& name) { return "linux.resources.blockIO." + name; }
std::string no_field(const SetContext&) { return {}; }

std::string dev(int64_t major, int64_t minor) {
  return std::to_string(major) + ":" + std::to_string(minor);
}

Status throttle(const Dir& d, const std::vector<spec::ThrottleDevice>& list, const char* key,
                const char* name) {
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& t = list[i];
    BERTH_TRY(write_field(d, "io.max", dev(t.major, t.minor) + " " + key + "=" + std::to_string(t.rate),
                          field(std::string(name) + "[" + std::to_string(i) + "]")));
  }
  return ok();
}

Status set_weights(const Dir& d, const spec::BlockIo& b) {
  // BFQ takes the v1 range as is; without it io.weight gets the converted value (runc).
  bool bfq = d.exists("io.bfq.weight");
  if (uint16_t w = b.weight.value_or(0)) {
    if (bfq) BERTH_TRY(write_field(d, "io.bfq.weight", std::to_string(w), field("weight")));
    else BERTH_TRY(write_field(d, "io.weight", std::to_string(blkio_weight_to_io_weight(w)), field("weight")));
  }
  if (b.leaf_weight.value_or(0))
    return Error::unsupported(field("leafWeight") + ": not supported on cgroup v2");
  for (size_t i = 0; i < b.weight_device.size(); ++i) {
    const auto& wd = b.weight_device[i];
    std::string f = field("weightDevice[" + std::to_string(i) + "]");
    if (wd.leaf_weight) return Error::unsupported(f + ".leafWeight: not supported on cgroup v2");
    if (!wd.weight) continue;
    if (!bfq)
      return Error::unsupported(f + ": per-device weights need the BFQ I/O scheduler (" + d.path() +
                                "/io.bfq.weight does not exist)");
    BERTH_TRY(write_field(d, "io.bfq.weight", dev(wd.major, wd.minor) + " " + std::to_string(*wd.weight), f));
  }
  return ok();
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.block_io) return ok();
  const auto& b = *ctx.r.block_io;
  BERTH_TRY(set_weights(d, b));
  BERTH_TRY(throttle(d, b.throttle_read_bps_device, "rbps", "throttleReadBpsDevice"));
  BERTH_TRY(throttle(d, b.throttle_write_bps_device, "wbps", "throttleWriteBpsDevice"));
  BERTH_TRY(throttle(d, b.throttle_read_iops_device, "riops", "throttleReadIOPSDevice"));
  BERTH_TRY(throttle(d, b.throttle_write_iops_device, "wiops", "throttleWriteIOPSDevice"));
  return ok();
}

// io.stat: "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0" → runc's v1-shaped entries.
void parse_io_stat(std::string_view text, BlkioStats& b) {
  for (const auto& line : str::split_nonempty(text, '\n')) {
    auto f = str::split_nonempty(line, ' ');
    if (f.empty()) continue;
    auto colon = f[0].find(':');
    if (colon == std::string::npos) continue;
    uint64_t major = str::parse_u64(f[0].substr(0, colon)).value_or(0);
    uint64_t minor = str::parse_u64(f[0].substr(colon + 1)).value_or(0);
    for (size_t i = 1; i < f.size(); ++i) {
      auto eq = f[i].find('=');
      if (eq == std::string::npos) continue;
      std::string key = f[i].substr(0, eq);
      uint64_t v = str::parse_u64(f[i].substr(eq + 1)).value_or(0);
      if (key == "rbytes") b.io_service_bytes_recursive.push_back({major, minor, "Read", v});
      else if (key == "wbytes") b.io_service_bytes_recursive.push_back({major, minor, "Write", v});
      else if (key == "rios") b.io_serviced_recursive.push_back({major, minor, "Read", v});
      else if (key == "wios") b.io_serviced_recursive.push_back({major, minor, "Write", v});
    }
  }
}

Status stats(const Dir& d, Stats& s) {
  if (auto text = d.read("io.stat")) parse_io_stat(*text, s.blkio);
  if (auto p = d.read("io.pressure")) s.blkio.psi = parse_psi(*p);
  return ok();
}

}  // namespace

const Controller kIo = {"io", no_field, set, stats};

}  // namespace berth::cgroups::v2
