// v1 memory controller: linux.resources.memory.{limit, reservation, swap, swappiness,
// kernel, kernelTCP, disableOOMKiller, useHierarchy, checkBeforeUpdate} → memory.* files;
// memory statistics; the OOM eventfd (cgroup.event_control).
#include <sys/eventfd.h>
#include <fcntl.h>

#include <cerrno>

#include "cgroups/v1/v1.h"
#include "util/log.h"
#include "util/strings.h"

namespace berth::cgroups::v1 {
namespace {

constexpr const char* kLimit = "memory.limit_in_bytes";
constexpr const char* kSwap = "memory.memsw.limit_in_bytes";

std::string field(const char* name) { return std::string("linux.resources.memory.") + name; }

std::string first_field(const SetContext& ctx) {
  if (!ctx.r.memory) return {};
  const auto& m = *ctx.r.memory;
  if (m.limit.value_or(0)) return field("limit");
  if (m.reservation.value_or(0)) return field("reservation");
  if (m.swap.value_or(0)) return field("swap");
  if (m.swappiness) return field("swappiness");
  if (m.kernel_tcp.value_or(0)) return field("kernelTCP");
  if (m.disable_oom_killer.value_or(false)) return field("disableOOMKiller");
  if (m.use_hierarchy) return field("useHierarchy");
  return {};
}

Status write_limit(const Dir& d, int64_t limit) {
  auto st = write_field(d, kLimit, std::to_string(limit), field("limit"));
  if (!st && st.error().err() == EBUSY) {
    // The kernel could not reclaim below the new limit: say why, as runc does.
    uint64_t usage = d.read_u64_or("memory.usage_in_bytes", 0);
    uint64_t peak = d.read_u64_or("memory.max_usage_in_bytes", 0);
    return Error::sys(EBUSY, field("limit") + ": unable to set memory limit to " +
                                 std::to_string(limit) + " (current usage: " + std::to_string(usage) +
                                 ", peak usage: " + std::to_string(peak) + ")");
  }
  return st;
}

// memsw must stay >= the memory limit at every step, so the order of the two writes
// depends on whether the limit grows or shrinks (runc's setMemoryAndSwap).
Status set_limit_and_swap(const Dir& d, int64_t limit, int64_t swap) {
  if (limit == -1 && swap == 0 && d.exists(kSwap)) swap = -1;
  auto write_swap = [&] { return write_field(d, kSwap, std::to_string(swap), field("swap")); };
  if (limit != 0 && swap != 0) {
    BERTH_ASSIGN(uint64_t cur, d.read_u64(kLimit));
    if (swap == -1 || cur < static_cast<uint64_t>(swap)) {
      BERTH_TRY(write_swap());
      return write_limit(d, limit);
    }
  }
  if (limit != 0) BERTH_TRY(write_limit(d, limit));
  if (swap != 0) BERTH_TRY(write_swap());
  return ok();
}

Status check_before_update(const Dir& d, int64_t limit, int64_t swap) {
  if (limit > 0) {
    auto usage = d.read_u64("memory.usage_in_bytes");
    if (usage && static_cast<uint64_t>(limit) <= *usage)
      return Error::invalid_argument(field("limit") + ": rejecting memory limit " + std::to_string(limit) +
                                     " <= usage " + std::to_string(*usage));
  }
  if (swap > 0) {
    auto usage = d.read_u64("memory.memsw.usage_in_bytes");
    if (usage && static_cast<uint64_t>(swap) <= *usage)
      return Error::invalid_argument(field("swap") + ": rejecting memory+swap limit " + std::to_string(swap) +
                                     " <= usage " + std::to_string(*usage));
  }
  return ok();
}

// Kernel memory limits are gone from recent kernels (writes are ignored, or the file is
// absent): accepted with a warning, as runc does, rather than failing the container.
Status set_kernel(const Dir& d, int64_t kernel) {
  auto st = d.write("memory.kmem.limit_in_bytes", std::to_string(kernel));
  bool honoured = st.ok();
  if (honoured && kernel > 0) {
    auto got = d.read_u64("memory.kmem.limit_in_bytes");
    honoured = got && *got <= static_cast<uint64_t>(kernel);
  }
  if (!honoured) log::warn(field("kernel") + ": kernel memory limits are not supported by this kernel; ignored");
  return ok();
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.memory) return ok();
  const auto& m = *ctx.r.memory;
  int64_t limit = m.limit.value_or(0), swap = m.swap.value_or(0);
  if (ctx.update && m.check_before_update.value_or(false))
    BERTH_TRY(check_before_update(d, limit, swap));
  BERTH_TRY(set_limit_and_swap(d, limit, swap));
  if (int64_t k = m.kernel.value_or(0)) BERTH_TRY(set_kernel(d, k));
  if (int64_t t = m.kernel_tcp.value_or(0)) {
    // Kernels without kmem accounting (cgroup.memory=nokmem) have no such file: a warning.
    if (d.exists("memory.kmem.tcp.limit_in_bytes"))
      BERTH_TRY(write_field(d, "memory.kmem.tcp.limit_in_bytes", std::to_string(t), field("kernelTCP")));
    else
      log::warn(field("kernelTCP") + ": kernel TCP memory limits are not supported by this kernel; ignored");
  }
  if (int64_t r = m.reservation.value_or(0))
    BERTH_TRY(write_field(d, "memory.soft_limit_in_bytes", std::to_string(r), field("reservation")));
  if (m.disable_oom_killer.value_or(false))
    BERTH_TRY(write_field(d, "memory.oom_control", "1", field("disableOOMKiller")));
  if (m.swappiness) {
    if (*m.swappiness > 100)
      return Error::invalid_spec(field("swappiness") + ": invalid memory swappiness value: " +
                                 std::to_string(*m.swappiness) + " (valid range is 0-100)");
    BERTH_TRY(write_field(d, "memory.swappiness", std::to_string(*m.swappiness), field("swappiness")));
  }
  if (m.use_hierarchy)
    BERTH_TRY(write_field(d, "memory.use_hierarchy", *m.use_hierarchy ? "1" : "0", field("useHierarchy")));
  return ok();
}

MemoryEntry entry(const Dir& d, const std::string& prefix) {
  MemoryEntry e;
  e.usage = d.read_u64_or(prefix + ".usage_in_bytes", 0);
  e.max = d.read_u64_or(prefix + ".max_usage_in_bytes", 0);
  e.failcnt = d.read_u64_or(prefix + ".failcnt", 0);
  e.limit = d.read_u64_or(prefix + ".limit_in_bytes", 0);
  return e;
}

Status stats(const Dir& d, Stats& s) {
  auto raw = d.read_keyed("memory.stat");
  if (!raw) return raw.error().err() == ENOENT ? ok() : Status(std::move(raw).error());
  auto& m = s.memory;
  m.raw = std::move(*raw);
  m.cache = m.raw.count("cache") ? m.raw["cache"] : 0;
  m.usage = entry(d, "memory");
  if (d.exists("memory.memsw.usage_in_bytes")) m.swap = entry(d, "memory.memsw");
  if (d.exists("memory.kmem.usage_in_bytes")) m.kernel = entry(d, "memory.kmem");
  if (d.exists("memory.kmem.tcp.usage_in_bytes")) m.kernel_tcp = entry(d, "memory.kmem.tcp");
  return ok();
}

}  // namespace

Result<UniqueFd> oom_eventfd(const Dir& d) {
  UniqueFd efd(::eventfd(0, EFD_CLOEXEC));
  if (!efd) return Error::sys(errno, "eventfd");
  UniqueFd ofd(::openat(d.fd(), "memory.oom_control", O_RDONLY | O_CLOEXEC));
  if (!ofd) return Error::sys(errno, "open " + d.path() + "/memory.oom_control");
  // The registration keeps only the eventfd; memory.oom_control may be closed afterwards.
  BERTH_TRY(d.write("cgroup.event_control",
                    std::to_string(efd.get()) + " " + std::to_string(ofd.get())));
  return efd;
}

Result<uint64_t> oom_kill_count(const Dir& d) {
  BERTH_ASSIGN(auto kv, d.read_keyed("memory.oom_control"));
  return kv["oom_kill"];
}

const Controller kMemory = {"memory", first_field, set, stats};

}  // namespace berth::cgroups::v1
