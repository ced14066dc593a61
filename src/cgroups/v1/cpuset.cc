// v1 cpuset controller: linux.resources.cpu.{cpus, mems} → cpuset.cpus/mems, the parent
// copy a new cpuset cgroup needs before a task may join, and cpuset statistics.
#include <fcntl.h>

#include <cerrno>

#include "cgroups/v1/v1.h"
#include "util/strings.h"
#include "util/unique_fd.h"

namespace berth::cgroups::v1 {
namespace {

std::string first_field(const SetContext& ctx) {
  if (!ctx.r.cpu) return {};
  if (!ctx.r.cpu->cpus.empty()) return "linux.resources.cpu.cpus";
  if (!ctx.r.cpu->mems.empty()) return "linux.resources.cpu.mems";
  return {};
}

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.r.cpu) return ok();
  if (!ctx.r.cpu->cpus.empty())
    BERTH_TRY(write_field(d, "cpuset.cpus", ctx.r.cpu->cpus, "linux.resources.cpu.cpus"));
  if (!ctx.r.cpu->mems.empty())
    BERTH_TRY(write_field(d, "cpuset.mems", ctx.r.cpu->mems, "linux.resources.cpu.mems"));
  return ok();
}

uint64_t flag(const Dir& d, const char* file) { return d.read_u64_or(file, 0); }

Status stats(const Dir& d, Stats& s) {
  auto cpus = d.read("cpuset.cpus");
  if (!cpus) return cpus.error().err() == ENOENT ? ok() : Status(std::move(cpus).error());
  auto& c = s.cpuset;
  c.cpus = parse_cpu_list(*cpus);
  if (auto mems = d.read("cpuset.mems")) c.mems = parse_cpu_list(*mems);
  c.cpu_exclusive = flag(d, "cpuset.cpu_exclusive");
  c.mem_hardwall = flag(d, "cpuset.mem_hardwall");
  c.mem_exclusive = flag(d, "cpuset.mem_exclusive");
  c.memory_migrate = flag(d, "cpuset.memory_migrate");
  c.memory_spread_page = flag(d, "cpuset.memory_spread_page");
  c.memory_spread_slab = flag(d, "cpuset.memory_spread_slab");
  c.memory_pressure = flag(d, "cpuset.memory_pressure");
  c.sched_load_balance = flag(d, "cpuset.sched_load_balance");
  if (auto lvl = d.read("cpuset.sched_relax_domain_level"))
    c.sched_relax_domain_level = str::parse_i64(str::trim(*lvl)).value_or(0);
  return ok();
}

// Copies `file` from parent to child when the child's is empty.
Status inherit(const Dir& parent, const Dir& child, const char* file) {
  BERTH_ASSIGN(auto mine, child.read(file));
  if (!str::trim(mine).empty()) return ok();
  BERTH_ASSIGN(auto theirs, parent.read(file));
  auto value = str::trim(theirs);
  if (value.empty()) return ok();
  return child.write(file, value);
}

}  // namespace

Status cpuset_inherit(const std::string& mount, const std::string& rel) {
  UniqueFd parent_fd(::open(mount.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd) return Error::sys(errno, "open " + mount);
  std::string path = mount;
  for (const auto& part : str::split_nonempty(rel, '/')) {
    path += "/" + part;
    UniqueFd fd(::openat(parent_fd.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return Error::sys(errno, "open " + path);
    Dir parent(parent_fd.get(), path.substr(0, path.size() - part.size() - 1)), child(fd.get(), path);
    BERTH_TRY(inherit(parent, child, "cpuset.cpus"));
    BERTH_TRY(inherit(parent, child, "cpuset.mems"));
    parent_fd = std::move(fd);
  }
  return ok();
}

const Controller kCpuset = {"cpuset", first_field, set, stats};

}  // namespace berth::cgroups::v1
