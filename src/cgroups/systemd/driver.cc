// The systemd cgroup driver: unit start/stop over the bus, then the unit's cgroup files
// (see driver.h). linux.cgroupsPath, linux.resources, annotations org.systemd.property.*.
#include "cgroups/systemd/driver.h"

#include <sys/stat.h>

#include <cerrno>
#include <limits>

#include "util/rollback.h"
#include "util/strings.h"

namespace berth::cgroups::systemd {

int parse_version(std::string_view v) {
  while (!v.empty() && (v.front() == '"' || v.front() == 'v')) v.remove_prefix(1);
  size_t n = 0;
  while (n < v.size() && n < 9 && v[n] >= '0' && v[n] <= '9') ++n;
  if (n == 0) return -1;
  return static_cast<int>(*str::parse_u64(v.substr(0, n)));
}

Result<Plan> plan(const Config& cfg, const std::string& manager_cgroup) {
  const Host* host = cfg.host;
  if (!host) {
    const auto& probed = cgroups::host();
    if (!probed) return probed.error();
    host = &*probed;
  }
  if (!host->systemd_running)
    return Error::generic("systemd not running on this host, cannot use systemd cgroups manager");
  std::string prefix;
  if (cfg.rootless) {
    // A user's manager runs only on the unified hierarchy, and its subtree is where its
    // units' cgroups are: both from systemd, still checked before they name a path.
    if (host->layout != Layout::kV2)
      return Error::unsupported("systemd cgroup driver: rootless (the user's systemd) needs cgroup v2");
    if (manager_cgroup.empty() || manager_cgroup[0] != '/' || !in_user_manager(manager_cgroup))
      return Error::unsupported("systemd cgroup driver: rootless, but the manager's control group \"" +
                                manager_cgroup + "\" is not a user's manager (user@<uid>.service)");
    prefix = manager_cgroup;
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  }
  BERTH_ASSIGN(Unit unit, unit_for(cfg.cgroups_path, cfg.id, cfg.rootless));
  unit.path = prefix + unit.path;
  if (unit.is_slice)
    return Error::unsupported("systemd cgroup driver: a container in a slice unit (" + unit.name +
                              ") is not supported; name a scope");
  Plan p;
  p.unit = std::move(unit);
  p.files = cfg;
  p.files.systemd = false;
  p.files.cgroups_path = p.unit.path;  // absolute: the same path in every hierarchy
  p.files.host = host;
  p.v2 = host->layout == Layout::kV2;
  return p;
}

Result<std::vector<Property>> start_properties(const Plan& p, pid_t pid,
                                               const std::map<std::string, std::string>& annotations,
                                               const PropertyOptions& o) {
  std::vector<Property> out;
  out.push_back({"Description", Value::str("berth container " + p.files.id)});
  out.push_back({"Slice", Value::str(p.unit.slice)});
  // Delegate=yes: the subtree is the container's; systemd keeps out of it.
  out.push_back({"Delegate", Value::boolean(true)});
  out.push_back({"PIDs", Value::u32_array({static_cast<uint32_t>(pid)})});
  // Accounting on from the start, as runc: the kernel cannot charge memory retroactively.
  for (const char* a : {"MemoryAccounting", "CPUAccounting", o.v2 ? "IOAccounting" : "BlockIOAccounting",
                        "TasksAccounting"})
    out.push_back({a, Value::boolean(true)});
  out.push_back({"DefaultDependencies", Value::boolean(false)});
  if (p.files.resources) {
    const auto* devices = p.files.device_rules.empty() ? nullptr : &p.files.device_rules;
    BERTH_ASSIGN(auto res, resource_properties(*p.files.resources, devices, o));
    for (auto& r : res) out.push_back(std::move(r));
  }
  BERTH_ASSIGN(auto extra, annotation_properties(annotations));
  for (auto& e : extra) out.push_back(std::move(e));
  if (o.v2 && p.files.resources) {
    const auto& u = p.files.resources->unified;
    if (auto it = u.find("memory.oom.group"); it != u.end()) {
      auto v = str::trim(it->second);
      if (v == "0") out.push_back({"OOMPolicy", Value::str("continue")});
      else if (v == "1") out.push_back({"OOMPolicy", Value::str("kill")});
      else return Error::invalid_spec("unified resource \"memory.oom.group\" value conversion error: " + str::go_quote(v));
    }
  }
  return out;
}

namespace {

// `build`'s properties for the running systemd. Only a few depend on its version
// (AllowedCPUs, CPUQuotaPeriodUSec, cpu.idle's CPUWeight=0, each gated as runc gates it),
// and most specs set none of them: when the list built for the oldest and for the newest
// systemd is the same, the version cannot change it and its D-Bus round trip is skipped.
// Nothing is cached across calls, so an upgraded or re-executed systemd is always asked.
template <class Build>
Result<std::vector<Property>> versioned(Bus& bus, PropertyOptions o, const Build& build) {
  o.systemd_version = -1;  // as when the version cannot be read
  auto oldest = build(o);
  o.systemd_version = std::numeric_limits<int>::max();
  auto newest = build(o);
  if (oldest && newest && *oldest == *newest) return newest;
  auto version = bus.version();
  o.systemd_version = version ? parse_version(*version) : -1;
  return build(o);
}

}  // namespace

Result<std::string> start_job(Bus& bus, const std::string& name, const std::vector<Property>& props) {
  auto job = bus.start_transient_unit(name, props);
  if (!job && job.error().err() == EEXIST) {
    // Perhaps a failed unit of an earlier container of this name: reset it, try once more.
    (void)bus.reset_failed_unit(name);
    job = bus.start_transient_unit(name, props);
  }
  if (!job) return std::move(job).error().context("unable to start unit \"" + name + "\"");
  return job;
}

Status await_start(Bus& bus, const std::string& name, const std::string& job) {
  auto result = bus.wait_job(job, kJobTimeoutMs);
  if (!result) {
    (void)stop_unit(bus, name);
    return std::move(result).error().context("timeout waiting for systemd to create " + name);
  }
  if (*result != "done") {
    (void)bus.reset_failed_unit(name);
    return Error::generic("error creating systemd unit `" + name + "`: got `" + *result + "`");
  }
  return ok();
}

Status start_unit(Bus& bus, const std::string& name, const std::vector<Property>& props) {
  BERTH_ASSIGN(auto job, start_job(bus, name, props));
  return await_start(bus, name, job);
}

Status stop_unit(Bus& bus, const std::string& name) {
  auto job = bus.stop_unit(name);
  if (!job) {
    // NoSuchUnit: already gone (stopped by hand, or its last process exited).
    if (job.error().err() == ENOENT) return ok();
    return std::move(job).error();
  }
  auto result = bus.wait_job(*job, kJobTimeoutMs);
  if (!result) return std::move(result).error().context("timed out while waiting for systemd to remove " + name);
  // A unit that ended "failed" stays listed until reset.
  (void)bus.reset_failed_unit(name);
  return ok();
}

namespace {

// Whether systemd has pruned the unit's cgroup: it removes it when the unit stops (dead or
// failed), and keeps it while the unit is active. Asked of the hierarchy systemd tracks
// units in (the unified one, else name=systemd); false when the paths name neither.
bool pruned(const std::map<std::string, std::string>& paths) {
  auto it = paths.find("");
  if (it == paths.end()) it = paths.find("name=systemd");
  if (it == paths.end()) return false;
  struct stat st;
  return ::lstat(it->second.c_str(), &st) != 0 && errno == ENOENT;
}

}  // namespace

Status kill_and_stop(Bus& bus, const std::string& name, const std::map<std::string, std::string>& paths) {
  // systemd stops a scope with SIGTERM and waits (TimeoutStopSec, 90 s) for it to empty;
  // an init that is PID 1 of its pid namespace ignores SIGTERM, so the stop job would
  // outlast our job timeout (30 s). Killed first, the scope is empty and the job ends at
  // once, as runc's order (terminate the init, then destroy the cgroup) has it.
  if (!paths.empty())
    if (auto m = Manager::load(paths)) (void)m->kill();
  return stop_unit(bus, name);
}

Status remove_unit(Bus& bus, const std::string& name, const std::map<std::string, std::string>& paths) {
  if (!pruned(paths)) return kill_and_stop(bus, name, paths);
  // Stopped already (the container's processes ended, so systemd stopped the scope and
  // removed its cgroup): StopUnit would only make systemd load the unit it unloaded,
  // searching every unit directory for a file (the dearest exchange of a delete), to stop
  // nothing. What a stop leaves, a unit neither active nor failed, needs at most the reset.
  (void)bus.reset_failed_unit(name);
  return ok();
}

bool unit_gone(const std::string& name, const std::map<std::string, std::string>& paths,
               const std::string& transient_dir) {
  if (!pruned(paths)) return false;
  // The folder is there on every systemd that writes one (it made the unit's file there):
  // without it, nothing is known and the bus is asked.
  struct stat st;
  if (::lstat(transient_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return ::lstat((transient_dir + "/" + name).c_str(), &st) != 0 && errno == ENOENT;
}

Result<std::string> begin_start(Bus& bus, const Plan& p, pid_t pid,
                                const std::map<std::string, std::string>& annotations) {
  PropertyOptions o;
  o.v2 = p.v2;
  BERTH_ASSIGN(auto props, versioned(bus, o, [&](const PropertyOptions& vo) {
    return start_properties(p, pid, annotations, vo);
  }));
  return start_job(bus, p.unit.name, props);
}

Result<Manager> finish_start(Bus& bus, const Plan& p, pid_t pid, const std::string& job) {
  // Known before the job's end: the undo step below needs them whatever fails.
  auto paths = Manager::planned_paths(p.files);
  if (!paths) {
    (void)stop_unit(bus, p.unit.name);
    return std::move(paths).error();
  }
  BERTH_TRY(await_start(bus, p.unit.name, job));
  Rollback undo;
  undo.push([&bus, &p, &paths] { (void)kill_and_stop(bus, p.unit.name, *paths); });
  BERTH_ASSIGN(Manager m, Manager::create(p.files));
  // v2: systemd put the pid in the unit's cgroup already; v1/hybrid: the hierarchies
  // systemd does not manage still need it (runc's legacy manager joins them the same way).
  if (!p.v2) BERTH_TRY(m.add_process(pid));
  undo.commit();
  return m;
}

Result<Manager> start(Bus& bus, const Plan& p, pid_t pid, const std::map<std::string, std::string>& annotations) {
  BERTH_ASSIGN(auto job, begin_start(bus, p, pid, annotations));
  return finish_start(bus, p, pid, job);
}

Status update(Bus& bus, const std::string& unit, Manager& m, const spec::Resources& r,
              const std::vector<DeviceRule>* devices) {
  PropertyOptions o;
  o.v2 = m.layout() == Layout::kV2;
  BERTH_ASSIGN(auto props, versioned(bus, o, [&](const PropertyOptions& vo) {
    return resource_properties(r, devices, vo);
  }));
  if (!props.empty()) BERTH_TRY(bus.set_unit_properties(unit, props).context("unable to set unit properties"));
  return m.update(r, devices);
}

bool in_user_manager(std::string_view cgroup_path) {
  bool user = false;
  for (const std::string& part : str::split(cgroup_path, '/')) {
    if (part == "." || part == "..") return false;  // names nothing systemd made
    if (part.size() > 13 && part.starts_with("user@") && part.ends_with(".service") &&
        part.find_first_not_of("0123456789", 5) == part.size() - 8)
      user = true;
  }
  return user;
}

std::string unit_of(const std::map<std::string, std::string>& paths) {
  std::string unit;
  for (const auto& [ctrl, path] : paths) {
    std::string base = path.substr(path.rfind('/') + 1);
    if (!valid_unit_name(base) || (!unit.empty() && base != unit)) return {};
    unit = base;
  }
  return unit;
}

}  // namespace berth::cgroups::systemd
