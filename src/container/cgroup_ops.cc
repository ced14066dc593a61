// The commands that act on a container's cgroup: pause/resume (freezer), ps (the cgroup's
// pids), kill --all, events (stats and OOM), update (linux.resources through `update`).
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "berth/container.h"
#include "berth/container_ops.h"
#include "cgroups/manager.h"
#include "cgroups/systemd/driver.h"
#include "container/record.h"
#include "container/state_store.h"
#include "container/status.h"
#include "linux/proc.h"
#include "util/file.h"
#include "util/log.h"

namespace berth {
namespace {

struct Open {
  container::ContainerDir dir;
  ContainerRecord record;
  ContainerStatus status;
  std::optional<cgroups::Manager> cg;
};

Result<Open> open(const std::string& root, const std::string& id, bool lock) {
  BERTH_ASSIGN(auto store, container::StateStore::open_existing(root));
  BERTH_ASSIGN(auto dir, store.open_container(id));
  if (lock) BERTH_TRY(dir.lock());
  BERTH_ASSIGN(auto record, dir.read_record());
  ContainerStatus s = container::derive_status(dir, record);
  std::optional<cgroups::Manager> cg;
  if (!record.cgroup_paths.empty()) {
    BERTH_ASSIGN(auto m, cgroups::Manager::load(record.cgroup_paths));
    cg.emplace(std::move(m));
  }
  return Open{std::move(dir), std::move(record), s, std::move(cg)};
}

// A rootless container runs without cgroups when the user may not write one (no delegated
// cgroup v2 subtree): say so after runc's text, rather than fail on a missing file.
Error no_cgroup(const ContainerRecord& r, const std::string& what) {
  std::string why = r.rootless ? " (created rootless without a cgroup its user may write: delegate a cgroup v2 "
                                 "subtree to the user, see docs/rootless.md)"
                               : "";
  return Error::generic(what + why);
}

const char* const kNoFreezer = "cannot toggle freezer: cgroups not configured for container";

}  // namespace

Status pause_container(const std::string& root, const std::string& id) {
  BERTH_ASSIGN(Open c, open(root, id, true));
  if (c.status != ContainerStatus::kRunning && c.status != ContainerStatus::kCreated)
    return Error(0, ErrorKind::kNotRunning, "container not running");
  if (!c.cg) return no_cgroup(c.record, kNoFreezer);
  return c.cg->freeze().context("pause");
}

Status resume_container(const std::string& root, const std::string& id) {
  BERTH_ASSIGN(Open c, open(root, id, true));
  if (c.status != ContainerStatus::kPaused) return Error(0, ErrorKind::kGeneric, "container not paused");
  if (!c.cg) return no_cgroup(c.record, kNoFreezer);
  return c.cg->thaw().context("resume");
}

Result<std::vector<pid_t>> container_pids(const std::string& root, const std::string& id) {
  BERTH_ASSIGN(Open c, open(root, id, false));
  if (!c.cg) return std::vector<pid_t>{};
  return c.cg->pids();
}

Status kill_all(const std::string& root, const std::string& id, int sig) {
  BERTH_ASSIGN(Open c, open(root, id, false));
  // Without a cgroup the init alone is signalled: in its own pid namespace (which a
  // rootless container has) its death takes every other process with it.
  if (!c.cg && c.record.rootless) return kill_container(root, id, std::to_string(sig), true);
  if (!c.cg) return no_cgroup(c.record, "kill --all: the container has no cgroup");
  // Frozen while signalled, so nothing forks away from the signal (runc does the same).
  bool froze = sig == SIGKILL && c.status != ContainerStatus::kPaused && c.cg->freeze().ok();
  BERTH_ASSIGN(auto pids, c.cg->pids());
  for (pid_t p : pids) ::kill(p, sig);
  if (froze || c.status == ContainerStatus::kPaused) (void)c.cg->thaw();
  return ok();
}

Result<std::string> stats_event(const std::string& root, const std::string& id) {
  BERTH_ASSIGN(Open c, open(root, id, false));
  if (c.status == ContainerStatus::kStopped) return Error(0, ErrorKind::kNotRunning, "container not running");
  if (!c.cg) return no_cgroup(c.record, "events: the container has no cgroup");
  BERTH_ASSIGN(auto stats, c.cg->stats());
  return "{\"type\":\"stats\",\"id\":\"" + id + "\",\"data\":" + cgroups::to_json(stats) + "}";
}

Status stream_events(const std::string& root, const std::string& id, int64_t interval_ns,
                     const std::function<void(const std::string&)>& emit) {
  BERTH_ASSIGN(Open c, open(root, id, false));
  if (c.status == ContainerStatus::kStopped) return Error(0, ErrorKind::kNotRunning, "container not running");
  if (!c.cg) return no_cgroup(c.record, "events: the container has no cgroup");
  auto oom = c.cg->oom_event_fd();
  uint64_t ooms = c.cg->oom_kill_count().ok() ? *c.cg->oom_kill_count() : 0;
  auto next = std::chrono::steady_clock::now();
  // The OOM count is compared on every wake-up and once more at the end: the kill that ends
  // the container arrives together with its exit.
  auto report_oom = [&] {
    auto count = c.cg->oom_kill_count();
    if (count && *count > ooms) {
      ooms = *count;
      emit("{\"type\":\"oom\",\"id\":\"" + id + "\"}");
    }
  };
  // The init's pidfd turns readable when it exits (the moment process_alive turns false),
  // so the loop sleeps until the next stats line, an OOM or the end; without a pidfd
  // (EMFILE) it wakes every 100 ms to look, as it always did.
  UniqueFd init(static_cast<int>(::syscall(SYS_pidfd_open, c.record.pid, 0)));
  while (linux::process_alive(c.record.pid, c.record.pid_start_time)) {
    auto now = std::chrono::steady_clock::now();
    if (now >= next) {
      auto s = c.cg->stats();
      if (s) emit("{\"type\":\"stats\",\"id\":\"" + id + "\",\"data\":" + cgroups::to_json(*s) + "}");
      next = now + std::chrono::nanoseconds(interval_ns > 0 ? interval_ns : 5'000'000'000);
    }
    int wait_ms = std::max(static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count()), 0);
    struct pollfd p[2] = {{oom ? oom->get() : -1, POLLIN, 0}, {init.get(), POLLIN, 0}};
    if (::poll(p, 2, init ? wait_ms + 1 : std::min(wait_ms, 100)) > 0 && (p[0].revents & POLLIN)) {
      uint64_t buf[16];
      (void)!::read(p[0].fd, buf, sizeof buf);
    }
    report_oom();
  }
  report_oom();
  return ok();
}

Status update_container(const std::string& root, const std::string& id, const spec::Resources& r) {
  BERTH_ASSIGN(Open c, open(root, id, true));
  if (c.status == ContainerStatus::kStopped) return Error(0, ErrorKind::kNotRunning, "container not running");
  if (!c.cg) return no_cgroup(c.record, "update: the container has no cgroup");
  if (c.record.systemd_cgroup) {
    std::string unit = cgroups::systemd::unit_of(c.record.cgroup_paths);
    if (unit.empty()) return Error::generic("systemd cgroup driver: no unit named by the container's cgroup paths");
    bool user = cgroups::systemd::in_user_manager(c.record.cgroup_paths.begin()->second);
    BERTH_ASSIGN(auto bus, cgroups::systemd::connect_bus(user));
    BERTH_TRY(cgroups::systemd::update(*bus, unit, *c.cg, r));
  } else {
    BERTH_TRY(c.cg->update(r));
  }
  // Keep the new values with the container (its config copy), as runc keeps them in state.
  auto spec = c.dir.read_config();
  if (spec) {
    if (!spec->linux) spec->linux.emplace();
    spec::Resources& kept = spec->linux->resources ? *spec->linux->resources : spec->linux->resources.emplace();
    spec::merge_resources(kept, r);
    BERTH_TRY(c.dir.write_config(*spec));
  }
  return ok();
}

}  // namespace berth
