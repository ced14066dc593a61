// `create`: from a bundle to an init blocked on exec.fifo (or, for `run`, already running
// its payload). Order matters for recovery: the state directory and record exist before
// anything they describe, the init's pid is recorded as soon as it exists
// (container/launch.cc), and a Rollback undoes every step of a failed create.
#include "berth/container.h"
#include "container/bundle.h"
#include "container/conversation.h"
#include "container/device_modules.h"
#include "container/init_builder.h"
#include "container/launch.h"
#include "container/rootless.h"
#include "container/state_store.h"
#include "container/status.h"
#include "linux/netdev.h"
#include "linux/sys.h"
#include "linux/userns.h"
#include "util/caller_fds.h"
#include "util/phases.h"
#include "util/rollback.h"

namespace berth {
namespace {

struct Creation {
  const CreateOptions& o;
  container::Staged s;
  container::Launcher l;
  // Declared last, so destroyed first: its steps still find the init, its pidfd and the
  // cgroups they undo (create_container also runs it explicitly on failure).
  Rollback undo;

  explicit Creation(const CreateOptions& opts)
      : o(opts), l{s, opts, undo, linux::real_sys(), {}, {}, {}, 0, {}, {}, false} {}
};

// linux.netDevices, and the devices of org.berth.rdma.devices (which move only in exclusive
// rdma netns mode), go into the container's network namespace.
Result<linux::NetnsMoves> network_moves(const spec::Spec& spec) {
  linux::NetnsMoves m;
  if (spec.linux) m.net_devices = spec.linux->net_devices;
  BERTH_ASSIGN(auto rdma, container::rdma_netns_moves(spec));
  for (auto& r : rdma) m.rdma.push_back({r.device, r.netdevs});
  return m;
}

// The whole plan first: device modules add cgroup rules before the cgroup exists.
Result<std::unique_ptr<container::BuiltInit>> plan_init(Creation& c) {
  auto& s = c.s;
  OciState state = container::to_oci_state(s.record, ContainerStatus::kCreating);
  BERTH_ASSIGN(auto built, container::build_init(s.spec, c.o, s.record.rootfs, state));
  // start and delete run poststart/poststop hooks from the config copy: those added by
  // device modules (CDI) must be in it.
  if (built->spec_changed) BERTH_TRY(s.dir->write_config(s.spec));
  BERTH_ASSIGN(c.l.moves, network_moves(s.spec));
  if (!c.l.moves.empty()) built->cfg.wants_runtime_hooks = true;  // the init pauses at kHooks
  return built;
}

Status create_steps(Creation& c) {
  Phases t("create");
  container::StageRequest req = container::stage_request(c.o, !c.o.foreground, "create");
  // Rootless decisions before anything exists: a refused config leaves nothing behind.
  BERTH_TRY(container::load_staged(req, c.s));
  BERTH_ASSIGN(c.l.userns, container::plan_user_ns(c.s.spec, linux::MapCaller::current()));
  t.mark("config");
  BERTH_TRY(container::prepare_state(req, c.s, c.undo));
  t.mark("state");
  BERTH_ASSIGN(auto built, plan_init(c));
  t.mark("plan");
  BERTH_TRY(container::make_cgroups(req, c.s, built->device_rules, c.undo));
  t.mark("cgroups");
  if (built->cfg.rootfs)
    container::cgroup_mount_view(c.s.cg, &built->cfg.rootfs->cgroups, &built->cfg.rootfs->cgroup_links);
  BERTH_TRY(container::launch_init(c.l, *built));
  t.mark("init ready");
  if (built->ldconfig_fill) {
    devices::nvidia::fill_ldconfig_cache(*built->ldconfig_fill);
    t.mark("ldconfig cache filled");
  }
  BERTH_TRY(c.s.dir->write_record(c.s.record));
  BERTH_TRY(c.s.dir->clear_setting_up());
  BERTH_TRY(container::publish_process(c.o.pid_file, c.o.pidfd_socket, c.l.init_pid, c.l.init_pidfd.get()));
  t.mark("finish");
  return ok();
}

}  // namespace

Result<Created> create_container(const CreateOptions& o) {
  // Before anything exists: a preserved fd that is not the caller's would be one of ours
  // (the state root, this container's locked directory) in the container.
  BERTH_TRY(caller_fds::check(o.listen_fds, o.preserve_fds - o.listen_fds));
  Creation c(o);
  auto st = create_steps(c);
  if (!st) {
    c.undo.run();  // init, cgroups, state directory: in that order, while all still exist
    return std::move(st).error();
  }
  c.undo.commit();
  Created out;
  out.started = c.l.started;
  out.pid = c.l.init_pid;
  if (o.foreground) {
    out.pidfd = c.l.init_pidfd.release();
    out.console_master = c.l.console.release();
    if (c.l.init.pid() == c.l.init_pid) c.l.init.release();
  } else {
    c.l.init.release();
  }
  return out;
}

}  // namespace berth
