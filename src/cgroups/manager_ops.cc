// Manager operations on a placed container: writing limits (create and update, per
// layout), pause/resume, statistics and OOM notification.
#include <signal.h>

#include <cerrno>
#include <string_view>

#include "cgroups/manager.h"
#include "cgroups/v1/v1.h"
#include "cgroups/v2/v2.h"

namespace berth::cgroups {
namespace {

// runc's text (libcontainer's ErrV1NoUnified).
constexpr std::string_view kV1NoUnified = "invalid configuration: cannot use unified on cgroup v1";

}  // namespace

Status Manager::apply(const spec::Resources& r, const std::vector<DeviceRule>* devices, bool update) {
  SetContext ctx{r, devices, update};
  if (layout_ == Layout::kV2) return apply_v2(ctx);
  return apply_v1(ctx);
}

Status Manager::apply_v1(const SetContext& ctx) {
  if (!ctx.r.unified.empty()) {
    // Hybrid hosts have a cgroup2 directory for the container: unified keys go there
    // (runc 1.1 refuses them on any non-v2 host). Where that cannot work, berth says it
    // with runc's words: engines and runc's own tests match "invalid configuration".
    Dir u = dir("");
    if (layout_ != Layout::kHybrid || !u.valid())
      return Error::invalid_spec(std::string(kV1NoUnified));
    auto st = v2::set_unified(u, ctx.r.unified);
    if (!st && st.error().kind() == ErrorKind::kUnsupported)
      return Error::invalid_spec(std::string(kV1NoUnified) + ": " + st.error().message());
    BERTH_TRY(std::move(st));
  }
  for (const auto* c : v1::controllers()) {
    Dir d = dir(c->name);
    // Rootless containers cannot restrict devices (no CAP_SYS_ADMIN for a BPF program, a v1
    // devices hierarchy the user may not write): runc leaves that controller out, and so
    // do we, the runtime's default rules included.
    if (rootless_ && c == &v1::kDevices && !d.valid()) continue;
    if (!d.valid() && c == &v1::kDevices && layout_ == Layout::kHybrid && ctx.devices) {
      // A hybrid host without the v1 devices hierarchy can still filter devices: with the
      // eBPF program on the container's cgroup2 directory.
      if (Dir u = dir(""); u.valid()) {
        BERTH_TRY(v2::kDevices.set(u, ctx));
        continue;
      }
    }
    if (!d.valid()) {
      std::string field = c->first_field(ctx);
      if (field.empty()) continue;
      // runc's text, and the field that asked for it.
      if (rootless_ && !explicit_path_)
        return Error::generic("cannot set " + std::string(c->name) +
                              " limit: container could not join or create cgroup (" + field + ")");
      return missing_controller(field, c->name);
    }
    auto st = c->set(d, ctx);
    // Rootless containers cannot restrict devices; runc ignores that controller's errors.
    if (!st && !(rootless_ && c == &v1::kDevices)) return st;
  }
  return ok();
}

Status Manager::apply_v2(const SetContext& ctx) {
  Dir d = dir("");
  if (!d.valid() && rootless_ && !explicit_path_) return rootless_without_cgroup(ctx);
  if (!d.valid()) return Error::generic("cgroups: the container has no cgroup v2 directory");
  for (const auto* c : v2::controllers()) {
    auto st = c->set(d, ctx);
    if (!st && !(rootless_ && c == &v2::kDevices)) return st;
  }
  // Last, so that an explicit unified value wins over a converted one (runc's order).
  return v2::set_unified(d, ctx.r.unified);
}

// A rootless container whose cgroup could not be made runs without one, unless a limit
// was asked for (runc's text, and the field).
Status Manager::rootless_without_cgroup(const SetContext& ctx) {
  std::string field;
  // The v1 controllers name their fields; the resources are the same spec fields.
  for (const auto* c : v1::controllers())
    if (c != &v1::kDevices && field.empty()) field = c->first_field(ctx);
  if (field.empty() && !ctx.r.unified.empty()) field = "linux.resources.unified." + ctx.r.unified.begin()->first;
  if (field.empty()) return ok();
  return Error::generic("rootless needs no limits + no cgrouppath when no permission is granted for cgroups (" +
                        field + " is set)");
}

Status Manager::update(const spec::Resources& r, const std::vector<DeviceRule>* devices) {
  return apply(r, devices, true).context("update cgroups");
}

Status Manager::kill() {
  // The unified directory has cgroup.kill on pure v2 and on hybrid hosts alike (a core
  // file, no controller needed), and holds every process of the container in both.
  if (Dir u = dir(""); u.valid() && u.exists("cgroup.kill")) return u.write("cgroup.kill", "1").context("kill");
  bool froze = freeze().ok();
  auto pids = this->pids();
  if (pids)
    for (pid_t p : *pids) ::kill(p, SIGKILL);
  if (froze) (void)thaw();
  if (!pids) return std::move(pids).error().context("kill");
  return ok();
}

// v1 freezer when the host has it; otherwise the unified cgroup.freeze (pure v2, or a
// hybrid host without the v1 freezer: cgroup2's freezer works without controllers).
Status Manager::freeze() {
  if (Dir f = dir("freezer"); f.valid()) return v1::freeze(f).context("freeze");
  if (Dir u = dir(""); u.valid()) return v2::freeze(u).context("freeze");
  return Error::generic("cannot toggle freezer: cgroups not configured for container");
}

Status Manager::thaw() {
  if (Dir f = dir("freezer"); f.valid()) return v1::thaw(f).context("thaw");
  if (Dir u = dir(""); u.valid()) return v2::thaw(u).context("thaw");
  return Error::generic("cannot toggle freezer: cgroups not configured for container");
}

Result<bool> Manager::frozen() const {
  if (Dir f = dir("freezer"); f.valid()) return v1::frozen(f);
  if (Dir u = dir(""); u.valid()) return v2::frozen(u);
  return false;
}

Result<Stats> Manager::stats() const {
  Stats s;
  if (layout_ == Layout::kV2) {
    Dir d = dir("");
    if (!d.valid()) return Error::sys(errno, "open cgroup").context("stats");
    for (const auto* c : v2::controllers())
      if (c->stats) BERTH_TRY(c->stats(d, s).context("stats"));
    return s;
  }
  for (const auto* c : v1::controllers()) {
    if (!c->stats) continue;
    Dir d = dir(c->name);
    if (d.valid()) BERTH_TRY(c->stats(d, s).context("stats"));
  }
  return s;
}

Result<UniqueFd> Manager::oom_event_fd() {
  if (layout_ != Layout::kV2) {
    Dir m = dir("memory");
    if (!m.valid()) return Error::generic("cgroups: no memory cgroup for OOM notification");
    return v1::oom_eventfd(m);
  }
  return v2::oom_watch(dir(""));
}

Result<uint64_t> Manager::oom_kill_count() const {
  if (layout_ != Layout::kV2) {
    Dir m = dir("memory");
    if (!m.valid()) return Error::generic("cgroups: no memory cgroup");
    return v1::oom_kill_count(m);
  }
  return v2::oom_kill_count(dir(""));
}

}  // namespace berth::cgroups
