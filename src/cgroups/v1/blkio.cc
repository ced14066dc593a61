// v1 blkio controller: linux.resources.blockIO.{weight, leafWeight, weightDevice,
// throttle{Read,Write}{Bps,IOPS}Device} → blkio.* (blkio.bfq.* where CFQ is gone);
// recursive I/O statistics.
#include <cerrno>

#include "cgroups/v1/v1.h"

namespace berth::cgroups::v1 {
namespace {

std::string field(const std::string& name) { return "linux.resources.blockIO." + name; }

std::string first_field(const SetContext& ctx) {
  if (!ctx.r.block_io) return {};
  const auto& b = *ctx.r.block_io;
  if (b.weight.value_or(0)) return field("weight");
  if (b.leaf_weight.value_or(0)) return field("leafWeight");
  if (!b.weight_device.empty()) return field("weightDevice[0]");
  if (!b.throttle_read_bps_device.empty()) return field("throttleReadBpsDevice[0]");
  if (!b.throttle_write_bps_device.empty()) return field("throttleWriteBpsDevice[0]");
  if (!b.throttle_read_iops_device.empty()) return field("throttleReadIOPSDevice[0]");
  if (!b.throttle_write_iops_device.empty()) return field("throttleWriteIOPSDevice[0]");
  return {};
}

std::string dev(int64_t major, int64_t minor) {
  return std::to_string(major) + ":" + std::to_string(minor);
}

Status throttle(const Dir& d, const std::vector<spec::ThrottleDevice>& list, const char* file,
                const char* name) {
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& t = list[i];
    BERTH_TRY(write_field(d, file, dev(t.major, t.minor) + " " + std::to_string(t.rate),
                          field(std::string(name) + "[" + std::to_string(i) + "]")));
  }
  return ok();
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.block_io) return ok();
  const auto& b = *ctx.r.block_io;
  // Kernels without CFQ (>= 5.0) only have the BFQ weight files; runc falls back to them.
  bool cfq = d.exists("blkio.weight");
  const char* weight = cfq ? "blkio.weight" : "blkio.bfq.weight";
  const char* weight_device = cfq ? "blkio.weight_device" : "blkio.bfq.weight_device";
  if (uint16_t w = b.weight.value_or(0))
    BERTH_TRY(write_field(d, weight, std::to_string(w), field("weight")));
  if (uint16_t w = b.leaf_weight.value_or(0))
    BERTH_TRY(write_field(d, "blkio.leaf_weight", std::to_string(w), field("leafWeight")));
  for (size_t i = 0; i < b.weight_device.size(); ++i) {
    const auto& wd = b.weight_device[i];
    std::string f = field("weightDevice[" + std::to_string(i) + "]");
    if (wd.weight)
      BERTH_TRY(write_field(d, weight_device, dev(wd.major, wd.minor) + " " + std::to_string(*wd.weight), f + ".weight"));
    if (wd.leaf_weight)
      BERTH_TRY(write_field(d, "blkio.leaf_weight_device",
                            dev(wd.major, wd.minor) + " " + std::to_string(*wd.leaf_weight), f + ".leafWeight"));
  }
  BERTH_TRY(throttle(d, b.throttle_read_bps_device, "blkio.throttle.read_bps_device", "throttleReadBpsDevice"));
  BERTH_TRY(throttle(d, b.throttle_write_bps_device, "blkio.throttle.write_bps_device", "throttleWriteBpsDevice"));
  BERTH_TRY(throttle(d, b.throttle_read_iops_device, "blkio.throttle.read_iops_device", "throttleReadIOPSDevice"));
  BERTH_TRY(throttle(d, b.throttle_write_iops_device, "blkio.throttle.write_iops_device", "throttleWriteIOPSDevice"));
  return ok();
}

// runc's fallback order: the first group whose first file exists supplies the stats
// (BFQ debug, BFQ, CFQ, throttle recursive, throttle).
struct Source {
  const char* file;
  std::vector<BlkioEntry> BlkioStats::*to;
};
using B = BlkioStats;
const std::vector<std::vector<Source>> kGroups = {
    {{"blkio.bfq.sectors_recursive", &B::sectors_recursive},
     {"blkio.bfq.io_service_time_recursive", &B::io_service_time_recursive},
     {"blkio.bfq.io_wait_time_recursive", &B::io_wait_time_recursive},
     {"blkio.bfq.io_merged_recursive", &B::io_merged_recursive},
     {"blkio.bfq.io_queued_recursive", &B::io_queued_recursive},
     {"blkio.bfq.time_recursive", &B::io_time_recursive},
     {"blkio.bfq.io_serviced_recursive", &B::io_serviced_recursive},
     {"blkio.bfq.io_service_bytes_recursive", &B::io_service_bytes_recursive}},
    {{"blkio.bfq.io_serviced_recursive", &B::io_serviced_recursive},
     {"blkio.bfq.io_service_bytes_recursive", &B::io_service_bytes_recursive}},
    {{"blkio.sectors_recursive", &B::sectors_recursive},
     {"blkio.io_service_time_recursive", &B::io_service_time_recursive},
     {"blkio.io_wait_time_recursive", &B::io_wait_time_recursive},
     {"blkio.io_merged_recursive", &B::io_merged_recursive},
     {"blkio.io_queued_recursive", &B::io_queued_recursive},
     {"blkio.time_recursive", &B::io_time_recursive},
     {"blkio.io_serviced_recursive", &B::io_serviced_recursive},
     {"blkio.io_service_bytes_recursive", &B::io_service_bytes_recursive}},
    {{"blkio.throttle.io_serviced_recursive", &B::io_serviced_recursive},
     {"blkio.throttle.io_service_bytes_recursive", &B::io_service_bytes_recursive}},
    {{"blkio.throttle.io_serviced", &B::io_serviced_recursive},
     {"blkio.throttle.io_service_bytes", &B::io_service_bytes_recursive}},
};

Status stats(const Dir& d, Stats& s) {
  for (const auto& group : kGroups) {
    // A missing or empty first file moves on to the next group, as runc does.
    auto first = d.read(group.front().file);
    if (!first || parse_blkio(*first).empty()) continue;
    for (const auto& src : group) {
      auto text = d.read(src.file);
      if (!text) return std::move(text).error();
      s.blkio.*src.to = parse_blkio(*text);
    }
    return ok();
  }
  return ok();
}

}  // namespace

const Controller kBlkio = {"blkio", first_field, set, stats};

}  // namespace berth::cgroups::v1
