// linux.resources merging for `update` (zero or absent = unchanged).
#include "berth/spec.h"

namespace berth::spec {
namespace {

template <class T>
void take(std::optional<T>& base, const std::optional<T>& v) {
  if (v && *v != T{}) base = v;
}
template <class T>
void take_flag(std::optional<T>& base, const std::optional<T>& v) {
  if (v) base = v;
}
void take(std::string& base, const std::string& v) {
  if (!v.empty()) base = v;
}
template <class T>
void take(std::vector<T>& base, const std::vector<T>& v) {
  if (!v.empty()) base = v;
}

void merge(Memory& b, const Memory& u) {
  take(b.limit, u.limit);
  take(b.reservation, u.reservation);
  take(b.swap, u.swap);
  take(b.kernel, u.kernel);
  take(b.kernel_tcp, u.kernel_tcp);
  take(b.swappiness, u.swappiness);
  take_flag(b.disable_oom_killer, u.disable_oom_killer);
  take_flag(b.use_hierarchy, u.use_hierarchy);
  take_flag(b.check_before_update, u.check_before_update);
}

void merge(Cpu& b, const Cpu& u) {
  take(b.shares, u.shares);
  take(b.quota, u.quota);
  take(b.burst, u.burst);
  take(b.period, u.period);
  take(b.realtime_runtime, u.realtime_runtime);
  take(b.realtime_period, u.realtime_period);
  take(b.cpus, u.cpus);
  take(b.mems, u.mems);
  take_flag(b.idle, u.idle);
}

void merge(BlockIo& b, const BlockIo& u) {
  take(b.weight, u.weight);
  take(b.leaf_weight, u.leaf_weight);
  take(b.weight_device, u.weight_device);
  take(b.throttle_read_bps_device, u.throttle_read_bps_device);
  take(b.throttle_write_bps_device, u.throttle_write_bps_device);
  take(b.throttle_read_iops_device, u.throttle_read_iops_device);
  take(b.throttle_write_iops_device, u.throttle_write_iops_device);
}

template <class T>
void merge_optional(std::optional<T>& b, const std::optional<T>& u) {
  if (!u) return;
  if (!b) b.emplace();
  merge(*b, *u);
}

}  // namespace

void merge_resources(Resources& base, const Resources& u) {
  take(base.devices, u.devices);
  merge_optional(base.memory, u.memory);
  merge_optional(base.cpu, u.cpu);
  if (u.pids && u.pids->limit != 0) base.pids = u.pids;
  merge_optional(base.block_io, u.block_io);
  take(base.hugepage_limits, u.hugepage_limits);
  if (u.network) base.network = u.network;
  for (const auto& [dev, r] : u.rdma) base.rdma[dev] = r;
  for (const auto& [k, v] : u.unified) base.unified[k] = v;
}

}  // namespace berth::spec
