// Per-process attributes (see process_attrs.h).
#include "linux/process_attrs.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "util/file.h"
#include "util/strings.h"

namespace berth::linux {
namespace {

struct SchedAttr {  // struct sched_attr (not in glibc 2.36 headers)
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime, sched_deadline, sched_period;
  uint32_t sched_util_min, sched_util_max;
};

int policy_of(const std::string& p) {
  if (p == "SCHED_FIFO") return SCHED_FIFO;
  if (p == "SCHED_RR") return SCHED_RR;
  if (p == "SCHED_BATCH") return SCHED_BATCH;
  if (p == "SCHED_IDLE") return SCHED_IDLE;
  if (p == "SCHED_DEADLINE") return 6;
  if (p == "SCHED_ISO") return 4;
  return SCHED_OTHER;
}

uint64_t sched_flag_of(const std::string& f) {
  if (f == "SCHED_FLAG_RESET_ON_FORK") return 0x01;
  if (f == "SCHED_FLAG_RECLAIM") return 0x02;
  if (f == "SCHED_FLAG_DL_OVERRUN") return 0x04;
  if (f == "SCHED_FLAG_KEEP_POLICY") return 0x08;
  if (f == "SCHED_FLAG_KEEP_PARAMS") return 0x10;
  if (f == "SCHED_FLAG_UTIL_CLAMP_MIN") return 0x20;
  if (f == "SCHED_FLAG_UTIL_CLAMP_MAX") return 0x40;
  return 0;
}

int mpol_mode(const std::string& m) {
  static const char* kModes[] = {"MPOL_DEFAULT", "MPOL_PREFERRED", "MPOL_BIND", "MPOL_INTERLEAVE",
                                 "MPOL_LOCAL", "MPOL_PREFERRED_MANY", "MPOL_WEIGHTED_INTERLEAVE"};
  for (int i = 0; i < 7; ++i)
    if (m == kModes[i]) return i;
  return -1;
}

}  // namespace

Status set_oom_score_adj(int64_t value) {
  return file::write_existing(AT_FDCWD, "/proc/self/oom_score_adj", std::to_string(value))
      .context("set oomScoreAdj to " + std::to_string(value));
}

Status set_scheduler(const spec::Scheduler& s) {
  SchedAttr a{};
  a.size = sizeof a;
  a.sched_policy = static_cast<uint32_t>(policy_of(s.policy));
  for (const auto& f : s.flags) a.sched_flags |= sched_flag_of(f);
  a.sched_nice = s.nice;
  a.sched_priority = static_cast<uint32_t>(s.priority);
  a.sched_runtime = s.runtime;
  a.sched_deadline = s.deadline;
  a.sched_period = s.period;
  if (::syscall(SYS_sched_setattr, 0, &a, 0) < 0) return Error::sys(errno, "set scheduler " + s.policy);
  return ok();
}

Status set_io_priority(const spec::IoPriority& p) {
  int klass = p.klass == "IOPRIO_CLASS_RT" ? 1 : p.klass == "IOPRIO_CLASS_BE" ? 2 : 3;
  int prio = (klass << 13) | (p.priority & 0x7);
  if (::syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, prio) < 0)
    return Error::sys(errno, "set ioPriority " + p.klass);
  return ok();
}

Status set_personality(const spec::Personality& p) {
  unsigned long domain = p.domain == "LINUX32" ? PER_LINUX32 : PER_LINUX;
  if (::personality(domain) < 0) return Error::sys(errno, "set personality " + p.domain);
  return ok();
}

Status set_memory_policy(const spec::MemoryPolicy& m) {
  int mode = mpol_mode(m.mode);
  if (mode < 0) return Error::invalid_spec("linux.memoryPolicy.mode: unknown mode " + m.mode);
  for (const auto& f : m.flags) {
    if (f == "MPOL_F_STATIC_NODES") mode |= 1 << 15;
    else if (f == "MPOL_F_RELATIVE_NODES") mode |= 1 << 14;
    else if (f == "MPOL_F_NUMA_BALANCING") mode |= 1 << 13;
  }
  // nodes: a list like "0-3,5" → bitmask.
  unsigned long mask[16] = {};
  cpu_set_t set;
  if (!m.nodes.empty() && !parse_cpu_list(m.nodes, &set))
    return Error::invalid_spec("linux.memoryPolicy.nodes: invalid node list " + str::go_quote(m.nodes));
  unsigned long maxnode = 0;
  for (int i = 0; !m.nodes.empty() && i < 1024; ++i) {
    if (CPU_ISSET(i, &set)) {
      mask[i / (8 * sizeof(unsigned long))] |= 1UL << (i % (8 * sizeof(unsigned long)));
      maxnode = static_cast<unsigned long>(i) + 2;
    }
  }
  if (::syscall(SYS_set_mempolicy, mode, m.nodes.empty() ? nullptr : mask, maxnode) < 0)
    return Error::sys(errno, "set memoryPolicy " + m.mode);
  return ok();
}

Status join_session_keyring(const std::string& id) {
  std::string name = "_ses." + id;
  long key = ::syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, name.c_str());
  if (key < 0) {
    if (errno == ENOSYS || errno == EACCES || errno == EPERM) return ok();
    return Error::sys(errno, "join session keyring");
  }
  // Let the owning user search it (KEY_USR_SEARCH), keeping the kernel's other bits.
  // "type;uid;gid;perm;_ses.<id>": with a long id (runc accepts 255 characters) it exceeds
  // any fixed buffer, and KEYCTL_DESCRIBE then copies nothing at all, so ask for the size.
  long n = ::syscall(SYS_keyctl, 6 /* KEYCTL_DESCRIBE */, key, nullptr, 0);
  if (n < 0) return Error::sys(errno, "describe session keyring");
  std::string desc(static_cast<size_t>(n), '\0');
  n = ::syscall(SYS_keyctl, 6 /* KEYCTL_DESCRIBE */, key, desc.data(), desc.size());
  if (n < 0) return Error::sys(errno, "describe session keyring");
  if (static_cast<size_t>(n) > desc.size()) return Error::generic("describe session keyring: unexpected answer");
  desc.resize(desc.find('\0') == std::string::npos ? desc.size() : desc.find('\0'));
  auto fields = str::split(desc, ';');
  auto perm = fields.size() >= 4 ? str::parse_u64(fields[3], 16) : std::nullopt;
  if (!perm) return Error::generic("describe session keyring: unexpected answer");
  if (::syscall(SYS_keyctl, 5 /* KEYCTL_SETPERM */, key, static_cast<uint32_t>(*perm) | 0x080000u) < 0)
    return Error::sys(errno, "set session keyring permissions");
  return ok();
}

bool parse_cpu_list(const std::string& list, cpu_set_t* set) {
  CPU_ZERO(set);
  for (const auto& part : str::split(list, ',')) {
    auto range = str::split(std::string(str::trim(part)), '-');
    if (range.empty() || range.size() > 2) return false;
    auto lo = str::parse_u64(range[0]);
    auto hi = range.size() == 2 ? str::parse_u64(range[1]) : lo;
    if (!lo || !hi || *hi < *lo || *hi >= CPU_SETSIZE) return false;
    for (uint64_t c = *lo; c <= *hi; ++c) CPU_SET(static_cast<int>(c), set);
  }
  return true;
}

}  // namespace berth::linux
