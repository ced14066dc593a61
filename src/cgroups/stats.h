// Stats: what `events --stats` reports, shaped as runc's types.Stats (cpu, cpuset, memory,
// pids, blkio, hugetlb), filled by each controller's stats reader, and to_json() with
// runc's JSON names and omitempty rules, since containerd's go-runc decodes that document.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::cgroups {

struct PsiData {
  double avg10 = 0, avg60 = 0, avg300 = 0;
  uint64_t total = 0;
};
struct Psi {  // v2 only: <controller>.pressure
  PsiData some, full;
};

struct CpuUsage {  // nanoseconds
  uint64_t total = 0;
  std::vector<uint64_t> percpu, percpu_kernel, percpu_user;
  uint64_t kernel = 0, user = 0;
};
struct Throttling {
  uint64_t periods = 0, throttled_periods = 0, throttled_time = 0;  // throttled_time: ns
};
struct CpuStats {
  CpuUsage usage;
  Throttling throttling;
  std::optional<Psi> psi;
};

struct CpusetStats {
  std::vector<uint16_t> cpus, mems;
  uint64_t cpu_exclusive = 0, mem_hardwall = 0, mem_exclusive = 0, memory_migrate = 0,
           memory_spread_page = 0, memory_spread_slab = 0, memory_pressure = 0,
           sched_load_balance = 0;
  int64_t sched_relax_domain_level = 0;
};

struct MemoryEntry {
  uint64_t limit = 0, usage = 0, max = 0, failcnt = 0;
};
struct MemoryStats {
  uint64_t cache = 0;
  MemoryEntry usage, swap, kernel, kernel_tcp;  // swap is memory+swap, as v1 reports it
  std::map<std::string, uint64_t> raw;          // memory.stat
  std::optional<Psi> psi;
};

struct PidsStats {
  uint64_t current = 0, limit = 0;  // limit 0 = "max"
};

struct BlkioEntry {
  uint64_t major = 0, minor = 0;
  std::string op;
  uint64_t value = 0;
  bool operator==(const BlkioEntry&) const = default;
};
struct BlkioStats {
  std::vector<BlkioEntry> io_service_bytes_recursive, io_serviced_recursive,
      io_queued_recursive, io_service_time_recursive, io_wait_time_recursive,
      io_merged_recursive, io_time_recursive, sectors_recursive;
  std::optional<Psi> psi;
};

struct HugetlbStats {
  uint64_t usage = 0, max = 0, failcnt = 0;
};

struct Stats {
  CpuStats cpu;
  CpusetStats cpuset;
  MemoryStats memory;
  PidsStats pids;
  BlkioStats blkio;
  std::map<std::string, HugetlbStats> hugetlb;  // page size ("2MB") → stats
};

// The "data" object of runc's `events --stats` line. network_interfaces is null and
// intel_rdt empty, as runc prints them for an OCI container without those.
std::string to_json(const Stats& stats);

// A float as Go's encoding/json prints it below 2^53 (shortest fixed digits that read back
// as the same double: "0", "1.5", "0.07"); the PSI averages. Exposed for tests.
std::string go_float(double v);

// Parsers shared by v1 and v2 readers (exposed for tests).
// "0-3,8" → {0,1,2,3,8}
std::vector<uint16_t> parse_cpu_list(std::string_view list);
// "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull ..." → Psi
std::optional<Psi> parse_psi(std::string_view content);
// blkio "8:0 Read 1234" / "8:0 1234" lines; "Total" lines skipped.
std::vector<BlkioEntry> parse_blkio(std::string_view content);

}  // namespace berth::cgroups
