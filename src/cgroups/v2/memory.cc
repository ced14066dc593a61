// v2 memory controller: linux.resources.memory.{limit → memory.max, swap → memory.swap.max
// (swap only: swap − limit), reservation → memory.low, checkBeforeUpdate}; swappiness,
// disableOOMKiller and useHierarchy=false have no v2 file and are refused; kernel and
// kernelTCP are accepted with a warning (v2 accounts kernel memory in memory.max).
// Statistics, and the memory.events watch for OOM kills.
#include <sys/inotify.h>

#include <cerrno>

#include "cgroups/common/convert.h"
#include "cgroups/v2/v2.h"
#include "util/log.h"

namespace berth::cgroups::v2 {
namespace {

std::string field(const char* name) { return std::string("linux.resources.memory.") + name; }
std::string no_field(const SetContext&) { return {}; }

Status refuse_v1_only(const spec::Memory& m) {
  if (m.swappiness)
    return Error::unsupported(field("swappiness") + ": not supported on cgroup v2");
  if (m.disable_oom_killer.value_or(false))
    return Error::unsupported(field("disableOOMKiller") + ": not supported on cgroup v2");
  if (m.use_hierarchy && !*m.use_hierarchy)
    return Error::unsupported(field("useHierarchy") + ": cgroup v2 is always hierarchical");
  if (m.kernel.value_or(0))
    log::warn(field("kernel") + ": kernel memory limits are not supported on cgroup v2; ignored");
  if (m.kernel_tcp.value_or(0))
    log::warn(field("kernelTCP") + ": kernel TCP memory limits are not supported on cgroup v2; ignored");
  return ok();
}

// runc's CheckMemoryUsage: best effort, an unreadable memory.current does not fail.
Status check_before_update(const Dir& d, int64_t limit, int64_t swap) {
  auto usage = d.read_u64("memory.current");
  if (!usage) return ok();
  if (swap > 0 && static_cast<uint64_t>(swap) <= *usage)
    return Error::invalid_argument(field("swap") + ": rejecting memory+swap limit " + std::to_string(swap) +
                                   " <= usage " + std::to_string(*usage));
  if (limit > 0 && static_cast<uint64_t>(limit) <= *usage)
    return Error::invalid_argument(field("limit") + ": rejecting memory limit " + std::to_string(limit) +
                                   " <= usage " + std::to_string(*usage));
  return ok();
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.memory) return ok();
  const auto& m = *ctx.r.memory;
  BERTH_TRY(refuse_v1_only(m));
  int64_t limit = m.limit.value_or(0), swap = m.swap.value_or(0), low = m.reservation.value_or(0);
  if (limit == 0 && swap == 0 && low == 0) return ok();
  if (ctx.update && m.check_before_update.value_or(false)) BERTH_TRY(check_before_update(d, limit, swap));
  auto v2swap = memory_swap_to_v2(swap, limit);
  if (!v2swap) return Error::invalid_spec(field("swap") + ": " + v2swap.error().root());
  // Equal memory and memory+swap: swap disabled (0), which "unset" must not swallow.
  bool write_swap = *v2swap != 0 || swap > 0;
  if (write_swap) {
    std::string value = limit_string(*v2swap);
    auto st = write_field(d, "memory.swap.max", value, field("swap"));
    // Without swap accounting the file is absent; "max" or "0" then already hold.
    if (!st && !(st.error().kind() == ErrorKind::kUnsupported && (value == "max" || value == "0")))
      return st;
  }
  if (limit != 0) BERTH_TRY(write_field(d, "memory.max", limit_string(limit), field("limit")));
  if (low != 0) BERTH_TRY(write_field(d, "memory.low", limit_string(low), field("reservation")));
  return ok();
}

MemoryEntry entry(const Dir& d, const std::string& prefix) {
  MemoryEntry e;
  e.usage = d.read_u64_or(prefix + ".current", 0);
  e.limit = d.read_u64_or(prefix + ".max", 0);
  e.max = d.read_u64_or(prefix + ".peak", 0);
  return e;
}

Status stats(const Dir& d, Stats& s) {
  auto raw = d.read_keyed("memory.stat");
  if (!raw) return raw.error().err() == ENOENT ? ok() : Status(std::move(raw).error());
  auto& m = s.memory;
  m.raw = std::move(*raw);
  m.cache = m.raw.count("file") ? m.raw["file"] : 0;
  m.usage = entry(d, "memory");
  // v1 reported swap as memory+swap; runc keeps that meaning on v2.
  MemoryEntry swap = entry(d, "memory.swap");
  swap.usage += m.usage.usage;
  if (swap.limit != UINT64_MAX) swap.limit += m.usage.limit;
  swap.max = 0;
  m.swap = swap;
  if (auto p = d.read("memory.pressure")) m.psi = parse_psi(*p);
  return ok();
}

}  // namespace

Result<UniqueFd> oom_watch(const Dir& d) {
  UniqueFd fd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (!fd) return Error::sys(errno, "inotify_init1");
  std::string path = d.path() + "/memory.events";
  if (::inotify_add_watch(fd.get(), path.c_str(), IN_MODIFY) < 0)
    return Error::sys(errno, "inotify_add_watch " + path);
  return fd;
}

Result<uint64_t> oom_kill_count(const Dir& d) {
  BERTH_ASSIGN(auto kv, d.read_keyed("memory.events"));
  return kv["oom_kill"];
}

const Controller kMemory = {"memory", no_field, set, stats};

}  // namespace berth::cgroups::v2
