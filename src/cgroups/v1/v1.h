// cgroup v1: one controller per file in this folder, each declared here, plus what the
// Manager needs beyond set/stats (cpuset inheritance, freezer, OOM notification).
#pragma once

#include <string>

#include "berth/result.h"
#include "cgroups/controller.h"
#include "util/unique_fd.h"

namespace berth::cgroups::v1 {

extern const Controller kCpuset, kDevices, kMemory, kCpu, kCpuacct, kPids, kBlkio, kHugetlb,
    kNetCls, kNetPrio, kPerfEvent, kFreezer, kRdma, kNameSystemd, kMisc;

// A new cpuset cgroup starts with empty cpuset.cpus/mems and refuses tasks until they are
// set (runc copies them from the parent): fills every level below `mount` down to `rel`
// whose value is empty, from its parent.
Status cpuset_inherit(const std::string& mount, const std::string& rel);

// freezer.state: FROZEN with retries (see freezer.cc), THAWED, and the current state.
Status freeze(const Dir& freezer);
Status thaw(const Dir& freezer);
Result<bool> frozen(const Dir& freezer);

// An eventfd signalled on each OOM of the memory cgroup (cgroup.event_control +
// memory.oom_control), and also when the cgroup is removed.
Result<UniqueFd> oom_eventfd(const Dir& memory);
Result<uint64_t> oom_kill_count(const Dir& memory);

}  // namespace berth::cgroups::v1
