// linux.resources → systemd unit properties, converted as runc's systemd drivers convert them
// (v2: MemoryMax/MemoryLow/MemorySwapMax, CPUWeight, CPUQuotaPerSecUSec/CPUQuotaPeriodUSec,
// TasksMax, AllowedCPUs/AllowedMemoryNodes, linux.resources.unified keys; v1/hybrid:
// MemoryLimit, CPUShares, BlockIOWeight, ...; both: DevicePolicy/DeviceAllow). The same
// resources are then also written to the unit's cgroup files, so a property systemd does not
// know (or an old systemd) loses nothing; the properties keep systemd's view in step, so a
// daemon-reload does not undo the limits.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "cgroups/common/device_rule.h"
#include "cgroups/systemd/value.h"

namespace berth::cgroups::systemd {

struct PropertyOptions {
  bool v2 = true;                // pure v2 host; false: v1 or hybrid (runc's legacy manager)
  int systemd_version = 252;     // the Manager's Version; gates properties as runc does
};

// runc's RangeToBits: "0-3,8" → bytes, least significant first (systemd's cpu_set format).
// Refuses junk, reversed ranges, an empty set, and numbers above 65535 (a hostile
// "0-4294967295" must not ask for half a gigabyte).
Result<std::vector<uint8_t>> range_to_bits(std::string_view ranges);

// runc's addCpuQuota: CPUQuotaPeriodUSec=period (systemd >= 242) when a period is set, and
// CPUQuotaPerSecUSec = quota*10^6/period rounded *up* to 10 ms (systemd keeps whole percents),
// or infinity (UINT64_MAX) for no quota.
void add_cpu_quota(std::vector<Property>& out, int64_t quota, uint64_t period, const PropertyOptions& o);

// DevicePolicy/DeviceAllow for the final device rule list (runc's generateDeviceProperties):
// strict with the allow list; a rule list that allows everything → auto with no entries; a
// deny-list systemd cannot express → strict with no entries (the cgroup's own program, which
// berth writes afterwards, then carries the real rules). "*:n" rules are left to that program.
std::vector<Property> device_properties(const std::vector<DeviceRule>& rules);

// Everything set in `r` (devices: the final list, null to leave devices alone), in runc's
// order; the unified map's keys are checked as runc checks them ("a/b" and "x" refused).
Result<std::vector<Property>> resource_properties(const spec::Resources& r, const std::vector<DeviceRule>* devices,
                                                  const PropertyOptions& o);

}  // namespace berth::cgroups::systemd
