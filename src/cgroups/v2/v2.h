// cgroup v2: one controller per file in this folder, declared here, plus what the Manager
// needs beyond set/stats: enabling controllers down the tree, the freezer, OOM events,
// linux.resources.unified, and the device eBPF program.
#pragma once

#include <linux/bpf.h>

#include <map>
#include <string>
#include <vector>

#include "berth/result.h"
#include "cgroups/common/device_state.h"
#include "cgroups/controller.h"
#include "util/unique_fd.h"

namespace berth::cgroups::v2 {

extern const Controller kCpu, kCpuset, kMemory, kPids, kIo, kHugetlb, kRdma, kNetwork, kDevices;

// mkdir -p of mount/rel that, in every level above the leaf (the mount included), first
// enables in cgroup.subtree_control each controller of its cgroup.controllers not enabled
// yet, so that the new cgroup gets their files (runc's CreateCgroupPath, minus the writes
// already done). Returns the directories it created, outermost first.
Result<std::vector<std::string>> make_path(const std::string& mount, const std::string& rel);

// cgroup.freeze + wait for "frozen 1" in cgroup.events (poll on the file's notifications).
Status freeze(const Dir& d);
Status thaw(const Dir& d);
Result<bool> frozen(const Dir& d);

// An inotify fd that becomes readable when memory.events changes (OOM kills are counted
// there, in oom_kill).
Result<UniqueFd> oom_watch(const Dir& d);
Result<uint64_t> oom_kill_count(const Dir& d);

// linux.resources.unified: written verbatim, keys checked (a file name "<controller>.<x>",
// not one of the files the runtime itself owns).
Status set_unified(const Dir& d, const std::map<std::string, std::string>& unified);

// The devices eBPF program (BPF_PROG_TYPE_CGROUP_DEVICE), written instruction by
// instruction from a DeviceState (see devices.cc for its shape).
std::vector<bpf_insn> device_program(const DeviceState& state);
// One line per instruction, for tests and debugging ("r2 &= 0xffff", "if r4 != 1 goto +3").
std::string disassemble(const std::vector<bpf_insn>& prog);
// bpf(BPF_PROG_LOAD); the verifier's log is part of the error.
Result<UniqueFd> load_device_program(const std::vector<bpf_insn>& prog);
// Attaches with BPF_F_ALLOW_MULTI, atomically replacing the program already attached to
// this cgroup (BPF_F_REPLACE) so that no moment is left without a filter.
Status attach_device_program(int cgroup_fd, int prog_fd);
// Builds, loads and attaches the program for `rules`.
Status set_device_rules(const Dir& d, const std::vector<DeviceRule>& rules);
// Ids of the device programs attached directly to the cgroup.
Result<std::vector<uint32_t>> attached_device_programs(int cgroup_fd);

}  // namespace berth::cgroups::v2
