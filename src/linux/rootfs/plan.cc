// Spec → RootfsPlan (see plan.h): mounts[] (types, options, bind file/dir, bind sources
// relative to the bundle, uidMappings, gidMappings, what may cover /proc), root.readonly,
// linux.rootfsPropagation,
// linux.devices, linux.maskedPaths, linux.readonlyPaths, and the runc behaviours that
// depend on namespaces (sysfs/mqueue become binds without their namespace in a user
// namespace; device nodes are bound from the host there).
#include "linux/rootfs/plan.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "util/mountinfo.h"
#include "linux/paths.h"
#include "linux/selinux.h"
#include "util/file.h"
#include "util/strings.h"

namespace berth::linux::rootfs {
namespace {

unsigned long propagation_flag(const std::string& name) {
  if (name == "private") return MS_PRIVATE;
  if (name == "rprivate") return MS_PRIVATE | MS_REC;
  if (name == "shared") return MS_SHARED;
  if (name == "rshared") return MS_SHARED | MS_REC;
  if (name == "slave") return MS_SLAVE;
  if (name == "rslave") return MS_SLAVE | MS_REC;
  if (name == "unbindable") return MS_UNBINDABLE;
  if (name == "runbindable") return MS_UNBINDABLE | MS_REC;
  return MS_SLAVE | MS_REC;  // runc's default: host mounts propagate in, nothing out
}

std::string field_of(size_t index) { return "config.json: mounts[" + std::to_string(index) + "]"; }

// A bind needs the kind of its source to create the right destination.
Result<bool> source_is_file(const std::string& source, size_t index) {
  struct stat st;
  if (::stat(source.c_str(), &st) < 0) return Error::sys(errno, field_of(index) + ": source " + source);
  return !S_ISDIR(st.st_mode);
}

// runtime-spec: a bind's source is absolute or relative to the bundle (runc joins it to
// the bundle directory it runs in), never to berth's own working directory. It is a host
// path chosen by the config's author either way, so ".." may leave the bundle as an
// absolute path may. An empty source is refused: runc would bind the bundle directory
// itself (config.json and all), which no config means to do.
Result<std::string> bind_source(const std::string& source, const std::string& bundle, size_t index) {
  if (source.empty()) return Error::invalid_spec(field_of(index) + ".source: a bind mount needs a source path");
  if (source[0] == '/') return source;
  if (bundle.empty() || bundle[0] != '/')
    return Error::invalid_spec(field_of(index) + ".source: " + str::go_quote(source) +
                               " is relative, and there is no bundle directory to resolve it against");
  return clean_path(bundle + "/" + source);
}

}  // namespace

bool proc_mount_allowed(const std::string& dest) {
  static const char* kAllowed[] = {"/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat",
                                   "/proc/swaps",   "/proc/uptime",    "/proc/loadavg", "/proc/slabinfo",
                                   "/proc/net/dev", "/proc/sys/kernel/ns_last_pid", "/proc/sys/crypto/fips_enabled"};
  for (const char* a : kAllowed)
    if (dest == a) return true;
  return false;
}

bool allowed_inside_proc(const MountStep& s) {
  if (proc_mount_allowed(s.destination)) return true;
  return s.kind == MountKind::kFilesystem && s.type == "tmpfs" && str::starts_with(s.destination, "/proc/");
}

namespace {

// runc's checkProcMount (CVE-2019-16884): nothing but procfs may cover /proc, and nothing
// may be mounted inside it but what lxcfs emulates. proc and sysfs mounts are exempt (they
// are checked to be what they claim after mounting, wherever they go). A fresh tmpfs is
// allowed too (allowed_inside_proc): berth never writes through the container's /proc
// (CVE-2025-52881).
Status check_proc_destination(const MountStep& s, size_t index) {
  const std::string& d = s.destination;
  if (s.type == "proc" || s.type == "sysfs" || (d != "/proc" && !str::starts_with(d, "/proc/"))) return ok();
  if (d == "/proc") {
    struct statfs fs;
    if (s.kind == MountKind::kBind && ::statfs(s.source.c_str(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) return ok();
    return Error::invalid_spec(field_of(index) + ": " + str::go_quote(d) + " cannot be mounted because it is not of type proc");
  }
  if (allowed_inside_proc(s)) return ok();
  return Error::invalid_spec(field_of(index) + ": " + str::go_quote(d) + " cannot be mounted because it is inside /proc");
}

// Idmapped binds: the mount's own maps, or (a bare "idmap") the container's.
Status plan_idmap(MountStep& s, const spec::Mount& m, size_t index, const spec::Linux* l, const PlanContext& ctx) {
  bool has_maps = !m.uid_mappings.empty() || !m.gid_mappings.empty();
  if (!s.opts.idmap && !has_maps) return ok();
  if (s.kind != MountKind::kBind)
    return Error::invalid_spec(field_of(index) + ": idmapped mounts are only supported for bind mounts");
  if (has_maps) {
    if (m.uid_mappings.empty() || m.gid_mappings.empty())
      return Error::invalid_spec(field_of(index) + ": uidMappings and gidMappings must be given together");
    s.uid_mappings = m.uid_mappings;
    s.gid_mappings = m.gid_mappings;
  } else {
    if (!ctx.new_user_ns || !l || l->uid_mappings.empty() || l->gid_mappings.empty())
      return Error::invalid_spec(field_of(index) + ".options: \"idmap\" without uidMappings/gidMappings "
                                 "needs the container's user namespace mappings (linux.uidMappings/gidMappings)");
    s.uid_mappings = l->uid_mappings;
    s.gid_mappings = l->gid_mappings;
  }
  s.idmap = true;
  return ok();
}

Result<MountStep> plan_mount(const spec::Mount& m, size_t index, const PlanContext& ctx, const spec::Linux* l) {
  MountStep step;
  step.destination = clean_path(m.destination.empty() || m.destination[0] == '/' ? m.destination : "/" + m.destination);
  step.source = m.source;
  step.type = m.type;
  step.opts = parse_mount_options(m.options);
  if (m.type == "bind") step.opts.flags |= MS_BIND;
  // Without their namespace, sysfs and mqueue cannot be mounted from a user namespace; runc
  // binds the host's instead.
  bool sysfs_bind = m.type == "sysfs" && ctx.new_user_ns && !ctx.new_net_ns;
  bool mqueue_bind = m.type == "mqueue" && ctx.new_user_ns && !ctx.new_ipc_ns;
  if (sysfs_bind || mqueue_bind) {
    step.source = sysfs_bind ? "/sys" : "/dev/mqueue";
    step.opts.flags |= MS_BIND | MS_REC;
  }
  if (step.opts.bind()) {
    step.kind = MountKind::kBind;
    step.type.clear();
    BERTH_ASSIGN(step.source, bind_source(step.source, ctx.bundle, index));
    // The host's /sys and /dev/mqueue standing in for a mount are directories (or absent,
    // which the bind itself reports).
    if (!sysfs_bind && !mqueue_bind) {
      BERTH_ASSIGN(step.file, source_is_file(step.source, index));
    }
  } else if (m.type == "cgroup" || m.type == "cgroup2") {
    step.kind = MountKind::kCgroup;
  } else if (step.type.empty()) {
    return Error::invalid_spec(field_of(index) + ".type: missing for a non-bind mount");
  }
  BERTH_TRY(check_proc_destination(step, index));
  BERTH_TRY(plan_idmap(step, m, index, l, ctx));
  // runc mounts tmpfs and /dev read-write and remounts them read-only at the very end:
  // later phases write into them (device nodes, tmpcopyup, /dev/console).
  if ((step.opts.flags & MS_RDONLY) && step.kind == MountKind::kFilesystem &&
      (step.type == "tmpfs" || step.destination == "/dev") && !(step.opts.flags & MS_REMOUNT)) {
    step.opts.flags &= ~MS_RDONLY;
    step.defer_ro = true;
  }
  return step;
}

void plan_devices(RootfsPlan& plan, const spec::Linux* l, const PlanContext& ctx) {
  bool bind = ctx.new_user_ns || ctx.runtime_in_user_ns;
  plan.devices = default_devices(bind);
  for (size_t i = 0; l && i < l->devices.size(); ++i) {
    const auto& d = l->devices[i];
    DeviceStep s;
    s.path = clean_path(d.path);
    s.type = d.type.empty() ? 'c' : d.type[0];
    s.major = static_cast<uint32_t>(d.major);
    s.minor = static_cast<uint32_t>(d.minor);
    s.mode = d.file_mode ? (*d.file_mode & 07777) : 0666;
    s.uid = d.uid.value_or(0);
    s.gid = d.gid.value_or(0);
    s.bind = bind;
    s.host_path = d.path;
    // A spec entry replaces a default device at the same path.
    std::erase_if(plan.devices, [&](const DeviceStep& x) { return x.path == s.path; });
    plan.devices.push_back(s);
  }
  // runc's order: ptmx (replacing whatever the image has), then the fd links.
  plan.links = {{"pts/ptmx", "/dev/ptmx", true},
                {"/proc/self/fd", "/dev/fd"},
                {"/proc/self/fd/0", "/dev/stdin"},
                {"/proc/self/fd/1", "/dev/stdout"},
                {"/proc/self/fd/2", "/dev/stderr"}};
  bool kcore = ctx.host_has_kcore ? *ctx.host_has_kcore : ::access("/proc/kcore", F_OK) == 0;
  if (kcore) plan.links.push_back({"/proc/kcore", "/dev/core"});
}

// pivot_root refuses a shared parent mount: when "/" is made shared, the mount holding the
// rootfs is made private in the container's namespace (runc's rootfsParentMountPrivate).
Status plan_private_parent(RootfsPlan& plan, const PlanContext& ctx) {
  if (!(plan.root_propagation & MS_SHARED)) return ok();
  std::string text;
  if (ctx.mountinfo) {
    text = *ctx.mountinfo;
  } else {
    BERTH_ASSIGN(text, file::read("/proc/self/mountinfo"));
  }
  BERTH_ASSIGN(auto mounts, parse_mountinfo(text));
  const MountInfo* parent = mount_containing(mounts, ctx.rootfs);
  if (!parent) return ok();
  bool shared = parent->shared() || (plan.root_propagation & MS_REC) || parent->mountpoint == "/";
  if (shared) plan.private_parent = parent->mountpoint;
  return ok();
}

}  // namespace

std::vector<DeviceStep> default_devices(bool bind_from_host) {
  struct Def {
    const char* path;
    uint32_t major, minor;
  };
  static const Def kDefs[] = {{"/dev/null", 1, 3}, {"/dev/random", 1, 8}, {"/dev/full", 1, 7},
                              {"/dev/tty", 5, 0},  {"/dev/zero", 1, 5},   {"/dev/urandom", 1, 9}};
  std::vector<DeviceStep> out;
  for (const auto& d : kDefs) {
    DeviceStep s;
    s.path = d.path;
    s.major = d.major;
    s.minor = d.minor;
    s.mode = 0666;
    s.bind = bind_from_host;
    s.host_path = d.path;
    out.push_back(s);
  }
  return out;
}

namespace {

// linux.mountLabel as runc applies it: context= on every filesystem the config mounts but
// procfs and sysfs, whose labels SELinux fixes itself (a context= there fails the mount).
// Binds keep their source's labels (the kernel ignores data with MS_BIND). mqueue takes it
// too: runc sets an xattr there afterwards for kernels older than the fs_context API, which
// berth needs anyway (5.2+), where every filesystem parses context= through the LSM.
Status label_mounts(RootfsPlan& plan, const std::string& label) {
  BERTH_TRY(check_label(label, "linux.mountLabel"));
  plan.mount_label = label;
  for (auto& m : plan.mounts)
    if (m.kind == MountKind::kFilesystem && m.type != "proc" && m.type != "sysfs")
      m.opts.data.push_back(context_option(label));
  return ok();
}

}  // namespace

Result<RootfsPlan> plan_rootfs(const spec::Spec& spec, const PlanContext& ctx) {
  RootfsPlan plan;
  plan.rootfs = ctx.rootfs;
  plan.no_pivot = ctx.no_pivot;
  plan.user_ns = ctx.new_user_ns;
  plan.readonly = spec.root && spec.root->readonly;
  const spec::Linux* l = spec.linux ? &*spec.linux : nullptr;
  plan.root_propagation = propagation_flag(l ? l->rootfs_propagation : "");
  if (l && !l->rootfs_propagation.empty()) plan.root_propagation_after = plan.root_propagation;
  // An unbindable "/" could not give the rootfs bind: the host stays behind a slave until the pivot.
  if (plan.root_propagation & MS_UNBINDABLE) plan.root_propagation = MS_SLAVE | MS_REC;
  BERTH_TRY(plan_private_parent(plan, ctx));
  if (spec.process) plan.cwd = clean_path(spec.process->cwd.empty() ? "/" : spec.process->cwd);
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    BERTH_ASSIGN(MountStep step, plan_mount(spec.mounts[i], i, ctx, l));
    if (step.destination == "/dev" && step.kind == MountKind::kBind) plan.setup_dev = false;
    plan.mounts.push_back(std::move(step));
  }
  if (!ctx.mount_label.empty()) BERTH_TRY(label_mounts(plan, ctx.mount_label));
  if (plan.setup_dev) plan_devices(plan, l, ctx);
  if (l) {
    plan.masked_paths = l->masked_paths;
    plan.readonly_paths = l->readonly_paths;
  }
  plan.console = ctx.terminal;
  plan.cgroups = ctx.cgroups;
  plan.cgroup_links = ctx.cgroup_links;
  plan.new_cgroup_ns = ctx.new_cgroup_ns;
  return plan;
}

}  // namespace berth::linux::rootfs
