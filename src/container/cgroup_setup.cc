// Container-level cgroup glue (see cgroup_setup.h).
#include "container/cgroup_setup.h"

#include <set>
#include <utility>

#include "cgroups/common/device_rule.h"
#include "cgroups/detect.h"
#include "cgroups/fs.h"
#include "cgroups/paths.h"
#include "util/log.h"
#include "util/strings.h"

namespace berth::container {

namespace {

cgroups::Config placement(const spec::Spec& spec, const std::string& id, bool systemd) {
  cgroups::Config cfg;
  cfg.id = id;
  cfg.systemd = systemd;
  if (spec.linux) cfg.cgroups_path = spec.linux->cgroups_path;
  return cfg;
}

// A cgroupsPath naming a cgroup that already exists: runc 1.1 refuses a frozen one (our
// init would block in it and create would hang) and warns, then goes on, when it still has
// processes. Checked before anything is created, so a refusal leaves that cgroup alone.
Status check_existing(const cgroups::Config& cfg) {
  BERTH_ASSIGN(auto planned, cgroups::Manager::planned_paths(cfg));
  if (planned.empty()) return ok();
  // Every hierarchy that exists (runc reads only the v1 devices one); a missing directory,
  // the usual case, has no processes.
  std::set<pid_t> pids;
  for (const auto& [ctrl, dir] : planned)
    if (auto in = cgroups::list_pids(dir)) pids.insert(in->begin(), in->end());
  if (!pids.empty())
    log::warn("container's cgroup is not empty: " + std::to_string(pids.size()) + " process(es) found");
  BERTH_ASSIGN(auto m, cgroups::Manager::load(planned));
  auto frozen = m.frozen();
  if (!frozen && frozen.error().err() != ENOENT && frozen.error().err() != ENODEV)
    return std::move(frozen).error().context("unable to get cgroup freezer state");
  if (frozen && *frozen) return Error::generic("container's cgroup unexpectedly frozen");
  return ok();
}

}  // namespace

Result<std::map<std::string, std::string>> planned_cgroup_paths(const spec::Spec& spec, const std::string& id,
                                                                bool systemd) {
  cgroups::Config cfg = placement(spec, id, systemd);
  if (!systemd) return cgroups::Manager::planned_paths(cfg);
  BERTH_ASSIGN(auto plan, cgroups::systemd::plan(cfg));
  return cgroups::Manager::planned_paths(plan.files);
}

Result<CgroupSetup> setup_cgroups(const spec::Spec& spec, const std::string& id, bool systemd, bool rootless,
                                  const std::vector<spec::DeviceRule>& extra_rules) {
  cgroups::Config cfg = placement(spec, id, systemd);
  cfg.rootless = rootless;
  const spec::Linux* l = spec.linux ? &*spec.linux : nullptr;
  if (l && l->resources) cfg.resources = &*l->resources;
  // runc's order: the spec's rules, then the default allow-list, then device modules'.
  if (l && l->resources) {
    BERTH_ASSIGN(cfg.device_rules, cgroups::from_spec(l->resources->devices));
  }
  for (const auto& r : cgroups::default_allowed_devices()) cfg.device_rules.push_back(r);
  BERTH_ASSIGN(auto extra, cgroups::from_spec(extra_rules));
  for (const auto& r : extra) cfg.device_rules.push_back(r);
  if (systemd) {
    CgroupSetup out;
    // Rootless: the caller's own systemd (its user bus), whose subtree holds the unit.
    std::string manager_cgroup;
    if (rootless) {
      BERTH_ASSIGN(out.bus, cgroups::systemd::connect_user_bus());
      BERTH_ASSIGN(manager_cgroup, out.bus->control_group());
    }
    BERTH_ASSIGN(auto plan, cgroups::systemd::plan(cfg, manager_cgroup));
    BERTH_TRY(check_existing(plan.files));
    // Connected now: without a bus, create fails before the init exists.
    if (!out.bus) {
      BERTH_ASSIGN(out.bus, cgroups::systemd::connect_system_bus());
    }
    BERTH_ASSIGN(out.paths, cgroups::Manager::planned_paths(plan.files));
    out.systemd.emplace(std::move(plan));
    out.annotations = spec.annotations;
    return out;
  }
  BERTH_TRY(check_existing(cfg));
  BERTH_ASSIGN(cgroups::Manager m, cgroups::Manager::create(cfg));
  CgroupSetup out;
  out.paths = m.paths();
  out.v2_fd = m.v2_dir_fd();
  out.unified_fd = m.unified_dir_fd();
  out.manager.emplace(std::move(m));
  return out;
}

Status self_placement(const CgroupSetup& cg, std::vector<cgroups::TasksFile>* files,
                      std::vector<process::CgroupTasks>* out) {
  if (!cg.manager || cg.systemd) return ok();
  BERTH_ASSIGN(*files, cg.manager->open_v1_tasks());
  for (const auto& f : *files) out->push_back({f.fd.get(), f.path});
  return ok();
}

Status join_cgroups(CgroupSetup& cg, pid_t pid, bool v1_joined, bool unified_joined) {
  if (cg.systemd && !cg.manager) {
    BERTH_ASSIGN(auto m, cgroups::systemd::start(*cg.bus, *cg.systemd, pid, cg.annotations));
    cg.paths = m.paths();
    cg.manager.emplace(std::move(m));
    return ok();
  }
  if (!cg.manager) return ok();
  return cg.manager->add_process(pid, !v1_joined, !unified_joined).context("join cgroups");
}

Status begin_unit(CgroupSetup& cg, pid_t pid) {
  if (!cg.systemd || cg.manager || !cg.job.empty()) return Error::generic("systemd cgroup driver: no unit to start");
  BERTH_ASSIGN(cg.job, cgroups::systemd::begin_start(*cg.bus, *cg.systemd, pid, cg.annotations));
  return ok();
}

Status finish_unit(CgroupSetup& cg, pid_t pid) {
  if (cg.job.empty()) return ok();
  std::string job = std::exchange(cg.job, {});  // finish_start undoes the unit itself
  BERTH_ASSIGN(auto m, cgroups::systemd::finish_start(*cg.bus, *cg.systemd, pid, job));
  cg.paths = m.paths();
  cg.manager.emplace(std::move(m));
  return ok();
}

void abandon_unit(CgroupSetup& cg) {
  if (cg.job.empty()) return;
  cg.job.clear();
  (void)cgroups::systemd::kill_and_stop(*cg.bus, cg.systemd->unit.name, cg.paths);
}

Status remove_cgroups(const std::map<std::string, std::string>& paths, bool systemd) {
  if (paths.empty()) return ok();
  if (systemd) {
    std::string unit = cgroups::systemd::unit_of(paths);
    if (unit.empty()) return Error::generic("systemd cgroup driver: no unit named by the container's cgroup paths");
    // A rootless container's unit is its user's manager's (see in_user_manager).
    bool user = cgroups::systemd::in_user_manager(paths.begin()->second);
    // A unit systemd stopped and freed already (the container's processes ended) leaves
    // nothing to ask: no connection (the dearest part of such a delete).
    if (user || !cgroups::systemd::unit_gone(unit, paths)) {
      BERTH_ASSIGN(auto bus, cgroups::systemd::connect_bus(user));
      BERTH_TRY(cgroups::systemd::remove_unit(*bus, unit, paths));
    } else {
      log::debug("systemd: " + unit + " already stopped and freed: nothing to ask");
    }
  }
  BERTH_ASSIGN(auto m, cgroups::Manager::load(paths));
  return m.destroy();
}

bool remove_empty_cgroups(const std::map<std::string, std::string>& paths) {
  if (paths.empty()) return true;
  auto m = cgroups::Manager::load(paths);
  return m && m->remove_empty();
}

bool cgroups_frozen(const std::map<std::string, std::string>& paths) {
  if (paths.empty()) return false;
  auto m = cgroups::Manager::load(paths);
  if (!m) return false;
  auto f = m->frozen();
  return f && *f;
}

void cgroup_mount_view(const cgroups::Host& host, const std::map<std::string, std::string>& paths,
                       std::vector<linux::rootfs::CgroupDir>* dirs, std::vector<linux::rootfs::LinkStep>* links) {
  auto name_of = [](const std::string& mountpoint) { return mountpoint.substr(mountpoint.rfind('/') + 1); };
  if (host.layout == cgroups::Layout::kV2) {
    if (auto it = paths.find(""); it != paths.end()) dirs->push_back({"", it->second, "cgroup2", ""});
    return;
  }
  for (const auto& h : host.v1) {
    if (h.controllers.empty()) continue;
    std::string name = name_of(h.mountpoint);
    auto it = paths.find(h.controllers[0]);
    if (it != paths.end()) {
      dirs->push_back({name, it->second, "cgroup", str::join(h.controllers, ",")});
    } else {
      // A hierarchy the container has no cgroup in (rootless without a writable one, or one
      // berth does not manage) still holds the init, in berth's own cgroup there: runc binds
      // that one (its init's /proc/self/cgroup), so programs that read their limits find them.
      // In a cgroup namespace (unshared while the init is still there) a fresh mount shows
      // that same cgroup as its root.
      dirs->push_back({name, host.dir(h, cgroups::hierarchy_path(host, h, "", false)), "cgroup",
                       str::join(h.controllers, ",")});
    }
    // Co-mounted controllers ("cpu,cpuacct") also get a link per controller, as hosts have.
    if (h.controllers.size() > 1)
      for (const auto& c : h.controllers)
        if (c != name && c.find('=') == std::string::npos) links->push_back({name, "/" + c});
  }
  if (host.unified)
    if (auto it = paths.find(""); it != paths.end())
      dirs->push_back({name_of(host.unified->mountpoint), it->second, "cgroup2", ""});
}

void cgroup_mount_view(const CgroupSetup& cg, std::vector<linux::rootfs::CgroupDir>* dirs,
                       std::vector<linux::rootfs::LinkStep>* links) {
  if (const auto& host = cgroups::host()) cgroup_mount_view(*host, cg.paths, dirs, links);
}

}  // namespace berth::container
