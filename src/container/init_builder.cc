// Spec → InitConfig (see init_builder.h): linux.namespaces, linux.timeOffsets, hostname,
// domainname, linux.sysctl, process.capabilities, linux.personality, linux.memoryPolicy,
// process.apparmorProfile / selinuxLabel (refused: no LSM on this host), hooks split
// between the parent and the init.
#include "container/init_builder.h"

#include <sched.h>
#include <sys/stat.h>

#include "container/device_modules.h"
#include "container/extend.h"
#include "linux/rootfs/idmap.h"
#include "linux/rootfs/plan.h"
#include "linux/sysctl.h"
#include "util/log.h"
#include "util/strings.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

namespace berth::container {
namespace {

bool file_exists(const char* p) {
  struct stat st;
  return ::stat(p, &st) == 0;
}

void decide_namespaces(BuiltInit& b, const spec::Linux& l) {
  process::InitConfig& c = b.cfg;
  c.ns = &b.ns;
  c.time_offsets = l.time_offsets;
  bool offsets = !l.time_offsets.empty() && b.ns.creates(CLONE_NEWTIME);
  if (!b.ns.joins_any() && !offsets) {
    c.clone_flags = b.ns.new_flags;  // the common case: everything in one clone3
    c.time_offsets.clear();
    return;
  }
  // Joins first (a new namespace must be owned by the joined user namespace), then
  // unshares; pid and time namespaces only apply to children: fork a second stage.
  c.unshare_flags = b.ns.new_flags;
  bool joined_pid = false;
  for (const auto& j : b.ns.joins) joined_pid = joined_pid || j.flag == CLONE_NEWPID || j.flag == CLONE_NEWTIME;
  c.second_stage = joined_pid || (b.ns.new_flags & (CLONE_NEWPID | CLONE_NEWTIME));
  if (!offsets) c.time_offsets.clear();
}

}  // namespace

Status refuse_unsupported(const spec::Spec& spec) {
  const spec::Process* p = spec.process ? &*spec.process : nullptr;
  if (p && !p->apparmor_profile.empty() && !file_exists("/sys/kernel/security/apparmor"))
    return Error::unsupported("process.apparmorProfile: AppArmor is not enabled on this host");
  if (p && !p->selinux_label.empty() && !file_exists("/sys/fs/selinux/enforce"))
    return Error::unsupported("process.selinuxLabel: SELinux is not enabled on this host");
  if (!spec.linux) return ok();
  const spec::Linux& l = *spec.linux;
  if (!l.mount_label.empty() && !file_exists("/sys/fs/selinux/enforce"))
    return Error::unsupported("linux.mountLabel: SELinux is not enabled on this host");
  if (l.seccomp) return Error::unsupported("linux.seccomp: not supported by this build yet");
  if (l.intel_rdt && !file_exists("/sys/fs/resctrl/schemata"))
    return Error::unsupported("linux.intelRdt: Intel RDT (resctrl) is not mounted on this host");
  if (!l.net_devices.empty()) return Error::unsupported("linux.netDevices: not supported by this build yet");
  return ok();
}

Result<std::unique_ptr<BuiltInit>> build_init(const spec::Spec& spec, const CreateOptions& o, const std::string& rootfs,
                                              const OciState& state) {
  auto b = std::make_unique<BuiltInit>();
  static const spec::Linux kEmpty;
  const spec::Linux& l = spec.linux ? *spec.linux : kEmpty;
  BERTH_ASSIGN(b->ns, linux::plan_namespaces(l.namespaces));
  decide_namespaces(*b, l);
  process::InitConfig& c = b->cfg;
  c.process = *spec.process;
  c.container_id = o.id;
  c.new_keyring = !o.no_new_keyring;
  c.preserve_fds = o.preserve_fds;
  c.state = state;
  bool uts = b->ns.has(CLONE_NEWUTS);
  if (!spec.hostname.empty() && !uts) return Error::invalid_spec("config.json: hostname: requires a uts namespace");
  if (!spec.domainname.empty() && !uts) return Error::invalid_spec("config.json: domainname: requires a uts namespace");
  c.hostname = spec.hostname;
  c.set_hostname = !spec.hostname.empty();
  c.domainname = spec.domainname;
  c.set_domainname = !spec.domainname.empty();
  BERTH_TRY(linux::validate_sysctls(l.sysctl, b->ns.has(CLONE_NEWIPC), uts, b->ns.has(CLONE_NEWNET)));
  c.sysctl = l.sysctl;
  c.personality = l.personality;
  c.memory_policy = l.memory_policy;
  if (spec.process->capabilities) {
    std::vector<std::string> ignored;
    c.caps = linux::resolve_caps(*spec.process->capabilities, &ignored);
    c.has_caps = true;
    if (!ignored.empty()) log::warn("ignoring unknown or unavailable capabilities: [" + str::join(ignored, " ") + "]");
  }
  if (spec.hooks) {
    c.create_container_hooks = spec.hooks->create_container;
    c.start_container_hooks = spec.hooks->start_container;
    c.wants_runtime_hooks = !spec.hooks->prestart.empty() || !spec.hooks->create_runtime.empty();
  }
  if (!b->ns.has(CLONE_NEWNS)) return Error::invalid_spec("config.json: linux.namespaces: berth needs a mount namespace");
  linux::rootfs::PlanContext ctx;
  ctx.rootfs = rootfs;
  ctx.new_user_ns = b->ns.has(CLONE_NEWUSER);
  ctx.new_net_ns = b->ns.creates(CLONE_NEWNET);
  ctx.new_ipc_ns = b->ns.creates(CLONE_NEWIPC);
  ctx.new_cgroup_ns = b->ns.creates(CLONE_NEWCGROUP);
  ctx.terminal = spec.process->terminal;
  ctx.no_pivot = o.no_pivot;
  BERTH_ASSIGN(auto plan, linux::rootfs::plan_rootfs(spec, ctx));
  // Device modules (GPUs, RDMA, CDI) extend the plan, the process and the device rules.
  BERTH_ASSIGN(devices::Edits edits, collect_device_edits(spec, ctx.new_user_ns));
  merge_edits(edits, plan, c.process, b->device_rules, ctx.new_user_ns);
  // Idmapped binds are cut here, while the runtime still holds CAP_SYS_ADMIN over their
  // filesystems; the init inherits them (see linux/rootfs/idmap.h).
  BERTH_TRY(linux::rootfs::prepare_idmapped_mounts(linux::real_sys(), plan));
  c.rootfs = std::move(plan);
  return b;
}

}  // namespace berth::container
