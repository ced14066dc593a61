// Spec → RootfsPlan (see plan.h): mounts[] (types, options, bind file/dir), root.readonly,
// linux.rootfsPropagation, linux.devices, linux.maskedPaths, linux.readonlyPaths, and the
// runc behaviours that depend on namespaces (sysfs/mqueue become binds without their
// namespace in a user namespace).
#include "linux/rootfs/plan.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "linux/paths.h"
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

// A bind needs the kind of its source to create the right destination.
Result<bool> source_is_file(const std::string& source, size_t index) {
  struct stat st;
  if (::stat(source.c_str(), &st) < 0)
    return Error::sys(errno, "mounts[" + std::to_string(index) + "]: source " + source);
  return !S_ISDIR(st.st_mode);
}

Result<MountStep> plan_mount(const spec::Mount& m, size_t index, const PlanContext& ctx) {
  MountStep step;
  step.destination = clean_path(m.destination.empty() || m.destination[0] == '/' ? m.destination
                                                                                  : "/" + m.destination);
  step.source = m.source;
  step.type = m.type;
  step.opts = parse_mount_options(m.options);
  step.uid_mappings = m.uid_mappings;
  step.gid_mappings = m.gid_mappings;
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
    if (step.source.empty() || step.source[0] != '/')
      return Error::invalid_spec("config.json: mounts[" + std::to_string(index) + "].source: a bind mount needs an absolute source path, got " + str::go_quote(step.source));
    BERTH_ASSIGN(step.file, source_is_file(step.source, index));
  } else if (m.type == "cgroup" || m.type == "cgroup2") {
    step.kind = MountKind::kCgroup;
  } else if (!step.uid_mappings.empty() || !step.gid_mappings.empty() || step.opts.idmap) {
    return Error::invalid_spec("config.json: mounts[" + std::to_string(index) + "]: idmapped mounts need a bind mount");
  }
  if (step.type.empty() && step.kind == MountKind::kFilesystem)
    return Error::invalid_spec("config.json: mounts[" + std::to_string(index) + "].type: missing for a non-bind mount");
  return step;
}

}  // namespace

std::vector<DeviceStep> default_devices(bool bind_from_host) {
  struct Def {
    const char* path;
    uint32_t major, minor;
  };
  static const Def kDefs[] = {{"/dev/null", 1, 3},    {"/dev/zero", 1, 5},    {"/dev/full", 1, 7},
                              {"/dev/random", 1, 8},  {"/dev/urandom", 1, 9}, {"/dev/tty", 5, 0}};
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

Result<RootfsPlan> plan_rootfs(const spec::Spec& spec, const PlanContext& ctx) {
  RootfsPlan plan;
  plan.rootfs = ctx.rootfs;
  plan.no_pivot = ctx.no_pivot;
  plan.readonly = spec.root && spec.root->readonly;
  const spec::Linux* l = spec.linux ? &*spec.linux : nullptr;
  plan.root_propagation = propagation_flag(l ? l->rootfs_propagation : "");
  if (spec.process) plan.cwd = clean_path(spec.process->cwd.empty() ? "/" : spec.process->cwd);
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    BERTH_ASSIGN(MountStep step, plan_mount(spec.mounts[i], i, ctx));
    if (step.destination == "/dev" && step.kind == MountKind::kBind) plan.setup_dev = false;
    plan.mounts.push_back(std::move(step));
  }
  if (plan.setup_dev) plan.devices = default_devices(ctx.new_user_ns);
  if (l) {
    for (size_t i = 0; plan.setup_dev && i < l->devices.size(); ++i) {
      const auto& d = l->devices[i];
      DeviceStep s;
      s.path = clean_path(d.path);
      s.type = d.type.empty() ? 'c' : d.type[0];
      s.major = static_cast<uint32_t>(d.major);
      s.minor = static_cast<uint32_t>(d.minor);
      s.mode = d.file_mode ? (*d.file_mode & 07777) : 0666;
      s.uid = d.uid.value_or(0);
      s.gid = d.gid.value_or(0);
      s.bind = ctx.new_user_ns;
      s.host_path = d.path;
      // A spec entry replaces a default device at the same path.
      std::erase_if(plan.devices, [&](const DeviceStep& x) { return x.path == s.path; });
      plan.devices.push_back(s);
    }
    plan.masked_paths = l->masked_paths;
    plan.readonly_paths = l->readonly_paths;
  }
  if (plan.setup_dev)
    plan.links = {{"/proc/self/fd", "/dev/fd"},      {"/proc/self/fd/0", "/dev/stdin"},
                  {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"},
                  {"pts/ptmx", "/dev/ptmx"}};
  plan.console = ctx.terminal;
  plan.cgroups = ctx.cgroups;
  plan.cgroup_links = ctx.cgroup_links;
  plan.new_cgroup_ns = ctx.new_cgroup_ns;
  return plan;
}

namespace {

std::string flags_text(unsigned long f) {
  static const std::pair<unsigned long, const char*> kNames[] = {
      {MS_RDONLY, "ro"},          {MS_NOSUID, "nosuid"},     {MS_NODEV, "nodev"},
      {MS_NOEXEC, "noexec"},      {MS_SYNCHRONOUS, "sync"},  {MS_REMOUNT, "remount"},
      {MS_MANDLOCK, "mand"},      {MS_DIRSYNC, "dirsync"},   {MS_NOATIME, "noatime"},
      {MS_NODIRATIME, "nodiratime"}, {MS_BIND, "bind"},      {MS_REC, "rec"},
      {MS_SILENT, "silent"},      {MS_RELATIME, "relatime"}, {MS_STRICTATIME, "strictatime"},
      {MS_LAZYTIME, "lazytime"},  {MS_I_VERSION, "iversion"}, {256, "nosymfollow"},
      {MS_PRIVATE, "private"},    {MS_SHARED, "shared"},     {MS_SLAVE, "slave"},
      {MS_UNBINDABLE, "unbindable"}};
  std::vector<std::string> parts;
  for (const auto& [bit, name] : kNames)
    if (f & bit) parts.push_back(name);
  return parts.empty() ? "0" : str::join(parts, "|");
}

}  // namespace

std::string to_text(const RootfsPlan& p) {
  std::string out = "root " + p.rootfs + " propagation=" + flags_text(p.root_propagation) +
                    (p.readonly ? " readonly" : "") + (p.no_pivot ? " no-pivot" : "") + "\n";
  for (const auto& m : p.mounts) {
    const char* kind = m.kind == MountKind::kBind ? "bind" : m.kind == MountKind::kCgroup ? "cgroup" : "mount";
    out += std::string(kind) + " " + m.destination + " type=" + (m.type.empty() ? "-" : m.type) +
           " source=" + (m.source.empty() ? "-" : m.source) + " flags=" + flags_text(m.opts.flags);
    if (!m.opts.data.empty()) out += " data=" + m.opts.data_string();
    for (auto pr : m.opts.propagation) out += " propagation=" + flags_text(pr);
    if (m.opts.has_recursive)
      out += " rattr=+" + std::to_string(m.opts.recursive.attr_set) + "/-" + std::to_string(m.opts.recursive.attr_clr);
    if (m.file) out += " file";
    if (m.opts.idmap || !m.uid_mappings.empty()) out += " idmap";
    out += "\n";
  }
  if (!p.setup_dev) out += "dev from-bind\n";
  for (const auto& d : p.devices)
    out += std::string(d.bind ? "bind-dev " : "mknod ") + d.path + " " + d.type + " " + std::to_string(d.major) +
           ":" + std::to_string(d.minor) + " mode=" + std::to_string(d.mode) + "\n";
  for (const auto& l : p.links) out += "symlink " + l.path + " -> " + l.target + "\n";
  if (p.console) out += "console /dev/console\n";
  for (const auto& r : p.readonly_paths) out += "readonly " + r + "\n";
  for (const auto& m : p.masked_paths) out += "mask " + m + "\n";
  if (!p.cwd.empty()) out += "cwd " + p.cwd + "\n";
  return out;
}

}  // namespace berth::linux::rootfs
