// Spec → InitConfig (see init_builder.h): linux.namespaces, linux.timeOffsets, hostname,
// domainname, linux.sysctl, process.capabilities, linux.personality, linux.memoryPolicy,
// process.apparmorProfile / selinuxLabel (refused without that LSM, else applied in
// payload.cc), linux.mountLabel (applied where SELinux is on, else dropped with a warning),
// linux.intelRdt (refused), linux.seccomp (compiled here, through the cache, for the init to
// load), hooks split between the parent and the init.
#include "container/init_builder.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "container/device_modules.h"
#include "container/extend.h"
#include "container/hooks.h"
#include "container/record.h"
#include "linux/namespaces.h"
#include "linux/rootfs/idmap.h"
#include "linux/rootfs/plan.h"
#include "linux/rootless.h"
#include "linux/selinux.h"
#include "linux/sysctl.h"
#include "seccomp/seccomp.h"
#include "util/caller_fds.h"
#include "util/log.h"
#include "util/strings.h"
#include "util/unique_fd.h"

namespace berth::container {
namespace {

bool file_exists(const char* p) {
  struct stat st;
  return ::stat(p, &st) == 0;
}

// Linux 6.18 lets procfs show a pid namespace other than its creator's ("pidns"); older
// kernels refuse the key (EINVAL). Probed on a context that is never created.
bool procfs_takes_pidns(int pidns_fd) {
  UniqueFd fs(static_cast<int>(::syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC)));
  return fs && ::syscall(SYS_fsconfig, fs.get(), FSCONFIG_SET_FD, "pidns", nullptr, pidns_fd) == 0;
}

void decide_namespaces(BuiltInit& b, const spec::Linux& l) {
  process::InitConfig& c = b.cfg;
  c.ns = &b.ns;
  c.time_offsets = l.time_offsets;
  bool offsets = !l.time_offsets.empty() && b.ns.creates(CLONE_NEWTIME);
  if (!b.ns.joins_any() && !offsets) {
    // The common case: everything in one clone3, but the cgroup namespace. It takes its
    // creator's cgroup as root, and unless clone3 placed the child (CLONE_INTO_CGROUP, v2
    // only) that is still berth's: unshare it after the parent's cgroup join (kGo).
    c.clone_flags = b.ns.new_flags & ~CLONE_NEWCGROUP;
    c.unshare_flags = b.ns.new_flags & CLONE_NEWCGROUP;
    c.time_offsets.clear();
    return;
  }
  // Joins first (a new namespace must be owned by the joined user namespace), then
  // unshares; pid and time namespaces only apply to children: fork a second stage.
  c.unshare_flags = b.ns.new_flags;
  bool joined_pid = false;
  for (const auto& j : b.ns.joins) joined_pid = joined_pid || j.flag == CLONE_NEWPID || j.flag == CLONE_NEWTIME;
  if (joined_pid || (b.ns.new_flags & (CLONE_NEWPID | CLONE_NEWTIME))) c.launch = process::Launch::kSecondStage;
  if (!offsets) c.time_offsets.clear();
  for (const auto& j : b.ns.joins)
    if (j.flag == CLONE_NEWPID && procfs_takes_pidns(j.fd.get())) {
      c.launch = process::Launch::kForkLast;
      c.proc_pidns_fd = j.fd.get();
    }
}

// Compiled in the parent, before clone3: the init only loads the finished program. Flags
// the kernel lacks are refused now, since a filter loaded after `start` cannot fail
// `create` any more (payload.cc).
Status prepare_seccomp(process::InitConfig& c, const spec::Seccomp& profile, const std::string& root) {
  if (!profile.flags.empty()) {
    seccomp::Support s = seccomp::support();
    auto has = [](const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    for (size_t i = 0; i < profile.flags.size(); ++i) {
      std::string where = "linux.seccomp.flags[" + std::to_string(i) + "]: ";
      if (!has(s.known_flags, profile.flags[i]))
        return Error::invalid_spec(where + "seccomp flag " + profile.flags[i] + " is not known to berth");
      if (!has(s.supported_flags, profile.flags[i]))
        return Error::unsupported(where + profile.flags[i] + " is not supported by this kernel");
    }
  }
  BERTH_ASSIGN(c.seccomp_program, seccomp::compile_cached(profile, process::seccomp_cache_dir(root)));
  c.seccomp = profile;
  return ok();
}

// Hooks the init runs itself; prestart and createRuntime run in the parent at kHooks.
void take_hooks(process::InitConfig& c, const spec::Spec& spec) {
  if (!spec.hooks) return;
  c.create_container_hooks = spec.hooks->create_container;
  c.start_container_hooks = spec.hooks->start_container;
  c.run_hooks = [](const char* kind, const std::vector<spec::Hook>& hooks, const OciState& state,
                   const std::vector<std::string>* inherit, const std::function<Status()>* last_step) {
    return run_hooks(kind, hooks, oci_state_json(state, false), "", inherit, last_step);
  };
  c.wants_runtime_hooks = !spec.hooks->prestart.empty() || !spec.hooks->create_runtime.empty();
}

// Without a mount namespace of its own the container shares the host's mount table: it is
// chrooted into root.path and nothing is mounted, since every mount would land on the host.
// runc mounts them there anyway (and leaves them behind); refusing the config, as berth
// did, broke what runc runs (the runtime-tools suite's linux_ns_itype), so the mounts,
// masks and a read-only root are skipped with a warning that names them.
Result<std::unique_ptr<BuiltInit>> no_mount_namespace(const spec::Spec& spec, const std::string& rootfs,
                                                      std::unique_ptr<BuiltInit> b, const devices::Edits& edits) {
  std::vector<std::string> skipped;
  if (!spec.mounts.empty()) skipped.emplace_back("mounts");
  if (spec.linux && !spec.linux->masked_paths.empty()) skipped.emplace_back("linux.maskedPaths");
  if (spec.linux && !spec.linux->readonly_paths.empty()) skipped.emplace_back("linux.readonlyPaths");
  if (spec.root && spec.root->readonly) skipped.emplace_back("root.readonly");
  if (!skipped.empty())
    log::warn("config.json: " + str::join(skipped, ", ") +
              ": not applied: without a mount namespace in linux.namespaces they would land on the host");
  if (!edits.empty()) return Error::invalid_spec("config.json: linux.namespaces: device requests need a mount namespace");
  b->cfg.chroot = rootfs;
  return b;
}

// linux.mountLabel labels files for SELinux: on a host without it there is nothing to label
// with, and a config written for an SELinux host (podman sets the label there) runs as crun
// runs it, with one warning per create. runc fails the mount instead (EINVAL from context=).
// process.selinuxLabel stays refused there (refuse_unsupported): it is the process's
// confinement, which must not silently go missing.
std::string mount_label_for(const spec::Linux& l) {
  if (l.mount_label.empty()) return "";
  if (linux::selinux_enabled()) return l.mount_label;
  log::warn("config.json: linux.mountLabel: ignored: SELinux is not enabled on this host");
  return "";
}

// hostname, domainname (a UTS namespace needed) and linux.sysctl (checked against the
// namespaces).
Status take_names_and_sysctls(BuiltInit& b, const spec::Spec& spec, const spec::Linux& l) {
  process::InitConfig& c = b.cfg;
  bool uts = b.ns.has(CLONE_NEWUTS);
  if (!spec.hostname.empty() && !uts) return Error::invalid_spec("config.json: hostname: requires a uts namespace");
  if (!spec.domainname.empty() && !uts) return Error::invalid_spec("config.json: domainname: requires a uts namespace");
  c.hostname = spec.hostname;
  c.set_hostname = !spec.hostname.empty();
  c.domainname = spec.domainname;
  c.set_domainname = !spec.domainname.empty();
  if (!l.sysctl.empty()) {
    BERTH_ASSIGN(bool own_net, linux::private_network(b.ns));
    BERTH_TRY(linux::validate_sysctls(l.sysctl, b.ns.has(CLONE_NEWIPC), uts, own_net));
  }
  c.sysctl = l.sysctl;
  return ok();
}

// The rootfs plan of a container with its own mount namespace, the device modules' edits
// folded in, idmapped binds cut.
Status plan_mount_namespace(BuiltInit& b, spec::Spec& spec, const CreateOptions& o, const std::string& rootfs,
                            const OciState& state, devices::Edits& edits) {
  process::InitConfig& c = b.cfg;
  static const spec::Linux kEmpty;
  const spec::Linux& l = spec.linux ? *spec.linux : kEmpty;
  linux::rootfs::PlanContext ctx;
  ctx.rootfs = rootfs;
  ctx.bundle = state.bundle;
  ctx.new_user_ns = b.ns.has(CLONE_NEWUSER);
  ctx.runtime_in_user_ns = linux::running_in_user_ns();
  ctx.new_net_ns = b.ns.creates(CLONE_NEWNET);
  ctx.new_ipc_ns = b.ns.creates(CLONE_NEWIPC);
  ctx.new_cgroup_ns = b.ns.creates(CLONE_NEWCGROUP);
  ctx.terminal = spec.process->terminal;
  ctx.no_pivot = o.no_pivot;
  ctx.mount_label = mount_label_for(l);
  BERTH_ASSIGN(auto plan, linux::rootfs::plan_rootfs(spec, ctx));
  merge_edits(edits, plan, c.process, b.device_rules, ctx.new_user_ns || ctx.runtime_in_user_ns);
  // Idmapped binds are cut here, while the runtime still holds CAP_SYS_ADMIN over their
  // filesystems; the init inherits them (see linux/rootfs/idmap.h).
  BERTH_TRY(linux::rootfs::prepare_idmapped_mounts(linux::real_sys(), plan));
  // Rootless, the runtime reaches no more than the init does (runc passes no sources then).
  c.sources_from_runtime = plan.user_ns && ::geteuid() == 0 && !linux::rootfs::runtime_opened_binds(plan).empty();
  c.rootfs = std::move(plan);
  return ok();
}

}  // namespace

Status refuse_unsupported(const spec::Spec& spec) {
  const spec::Process* p = spec.process ? &*spec.process : nullptr;
  if (p && !p->apparmor_profile.empty() && !file_exists("/sys/kernel/security/apparmor"))
    return Error::unsupported("process.apparmorProfile: AppArmor is not enabled on this host");
  if (p && !p->selinux_label.empty() && !linux::selinux_enabled())
    return Error::unsupported("process.selinuxLabel: SELinux is not enabled on this host");
  if (!spec.linux) return ok();
  const spec::Linux& l = *spec.linux;
  // Not applied by berth: refused by name on every host rather than ignored.
  if (l.intel_rdt) return Error::unsupported("linux.intelRdt: Intel RDT is not supported by berth");
  // linux.netDevices move into the container's own network namespace (launch.cc, at kHooks).
  bool netns = std::any_of(l.namespaces.begin(), l.namespaces.end(), [](const auto& n) { return n.type == "network"; });
  if (!l.net_devices.empty() && !netns)
    return Error::invalid_spec("config.json: linux.netDevices: unable to move network devices without a private NET namespace");
  return ok();
}

Result<std::unique_ptr<BuiltInit>> build_init(spec::Spec& spec, const CreateOptions& o, const std::string& rootfs,
                                              const OciState& state) {
  auto b = std::make_unique<BuiltInit>();
  static const spec::Linux kEmpty;
  const spec::Linux& l = spec.linux ? *spec.linux : kEmpty;
  BERTH_ASSIGN(b->ns, linux::plan_namespaces(l.namespaces));
  decide_namespaces(*b, l);
  // Device modules (GPUs, RDMA, CDI) first: their hooks and netDevices join the spec's
  // before anything below reads them; the rest extends the plan further down.
  BERTH_ASSIGN(devices::Edits edits, collect_device_edits(spec, {rootfs, o.root, b->ns.has(CLONE_NEWUSER)}));
  BERTH_ASSIGN(b->spec_changed, merge_spec_edits(edits, spec));
  b->ldconfig_fill = devices::nvidia::use_ldconfig_cache(edits, spec, rootfs, o.root);
  process::InitConfig& c = b->cfg;
  c.process = *spec.process;
  c.container_id = o.id;
  c.new_keyring = !o.no_new_keyring;
  // Only what the caller really passed is handed on (a create that skipped its own check
  // still gets here): the payload clears close-on-exec on exactly these.
  BERTH_ASSIGN(c.preserve_fds, caller_fds::check(o.listen_fds, o.preserve_fds - o.listen_fds));
  // runc appends them to process.env: the last value of a name wins (env::merge).
  if (o.listen_fds > 0) {
    c.process.env.push_back("LISTEN_FDS=" + std::to_string(o.listen_fds));
    c.process.env.push_back("LISTEN_PID=1");
  }
  c.state = state;
  BERTH_TRY(take_names_and_sysctls(*b, spec, l));
  c.personality = l.personality;
  c.memory_policy = l.memory_policy;
  if (l.seccomp) BERTH_TRY(prepare_seccomp(c, *l.seccomp, o.root));
  if (spec.process->capabilities) {
    BERTH_ASSIGN(c.caps, linux::caps_from_spec(*spec.process->capabilities, "config.json: process.capabilities"));
    c.has_caps = true;
  }
  take_hooks(c, spec);
  if (!b->ns.has(CLONE_NEWNS)) return no_mount_namespace(spec, rootfs, std::move(b), edits);
  BERTH_TRY(plan_mount_namespace(*b, spec, o, rootfs, state, edits));
  return b;
}


}  // namespace berth::container
