// RootfsPlan as text (see plan.h): one line per step, every field that changes what is
// done, for golden tests and --debug logs.
#include <sys/mount.h>

#include "linux/rootfs/plan.h"
#include "util/strings.h"

namespace berth::linux::rootfs {
namespace {

std::string maps_text(const std::vector<spec::IdMapping>& maps) {
  std::vector<std::string> parts;
  for (const auto& m : maps)
    parts.push_back(std::to_string(m.container_id) + ":" + std::to_string(m.host_id) + ":" + std::to_string(m.size));
  return str::join(parts, ",");
}

std::string mode_text(mode_t m) {
  char buf[8];
  snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m));
  return buf;
}

std::string mount_line(const MountStep& m) {
  const char* kind = m.kind == MountKind::kBind ? "bind" : m.kind == MountKind::kCgroup ? "cgroup" : "mount";
  std::string out = std::string(kind) + " " + m.destination + " type=" + (m.type.empty() ? "-" : m.type) +
                    " source=" + (m.source.empty() ? "-" : m.source) + " flags=" + flags_text(m.opts.flags);
  if (m.opts.clear) out += " clear=" + flags_text(m.opts.clear);
  if (!m.opts.data.empty()) out += " data=" + m.opts.data_string();
  for (auto pr : m.opts.propagation) out += " propagation=" + flags_text(pr);
  if (m.opts.has_recursive)
    out += " rattr=+" + attr_text(m.opts.recursive.attr_set) + "/-" + attr_text(m.opts.recursive.attr_clr);
  if (m.file) out += " file";
  if (m.defer_ro) out += " defer-ro";
  if (m.opts.tmpcopyup) out += " tmpcopyup";
  if (m.idmap)
    out += std::string(m.opts.idmap_recursive ? " ridmap" : " idmap") + " uids=" + maps_text(m.uid_mappings) +
           " gids=" + maps_text(m.gid_mappings);
  return out + "\n";
}

}  // namespace

std::string flags_text(unsigned long f) {
  static const std::pair<unsigned long, const char*> kNames[] = {
      {MS_RDONLY, "ro"},          {MS_NOSUID, "nosuid"},     {MS_NODEV, "nodev"},
      {MS_NOEXEC, "noexec"},      {MS_SYNCHRONOUS, "sync"},  {MS_REMOUNT, "remount"},
      {MS_MANDLOCK, "mand"},      {MS_DIRSYNC, "dirsync"},   {256, "nosymfollow"},
      {MS_NOATIME, "noatime"},    {MS_NODIRATIME, "nodiratime"}, {MS_BIND, "bind"},
      {MS_MOVE, "move"},          {MS_REC, "rec"},           {MS_SILENT, "silent"},
      {MS_UNBINDABLE, "unbindable"}, {MS_PRIVATE, "private"}, {MS_SLAVE, "slave"},
      {MS_SHARED, "shared"},      {MS_RELATIME, "relatime"}, {MS_I_VERSION, "iversion"},
      {MS_STRICTATIME, "strictatime"}, {MS_LAZYTIME, "lazytime"}};
  std::vector<std::string> parts;
  for (const auto& [bit, name] : kNames)
    if (f & bit) parts.push_back(name);
  return parts.empty() ? "0" : str::join(parts, "|");
}

std::string attr_text(uint64_t a) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {MOUNT_ATTR_RDONLY, "rdonly"},     {MOUNT_ATTR_NOSUID, "nosuid"},         {MOUNT_ATTR_NODEV, "nodev"},
      {MOUNT_ATTR_NOEXEC, "noexec"},     {MOUNT_ATTR_NOATIME, "noatime"},       {MOUNT_ATTR_STRICTATIME, "strictatime"},
      {MOUNT_ATTR_NODIRATIME, "nodiratime"}, {MOUNT_ATTR_IDMAP, "idmap"},       {MOUNT_ATTR_NOSYMFOLLOW, "nosymfollow"}};
  std::vector<std::string> parts;
  for (const auto& [bit, name] : kNames)
    if (a & bit) parts.push_back(name);
  // MOUNT_ATTR_RELATIME is 0: a cleared atime field with nothing set is relatime.
  return parts.empty() ? "0" : str::join(parts, "|");
}

std::string to_text(const RootfsPlan& p) {
  std::string out = "root " + p.rootfs + " propagation=" + flags_text(p.root_propagation) +
                    (p.readonly ? " readonly" : "") + (p.no_pivot ? " no-pivot" : "") + (p.user_ns ? " userns" : "") + "\n";
  if (!p.private_parent.empty()) out += "private-parent " + p.private_parent + "\n";
  if (!p.mount_label.empty()) out += "mount-label " + p.mount_label + "\n";
  for (const auto& m : p.mounts) out += mount_line(m);
  for (const auto& c : p.cgroups)
    out += "cgroup-dir " + (c.name.empty() ? std::string("-") : c.name) + " " + c.fstype + " " + c.host_dir +
           (c.options.empty() ? "" : " options=" + c.options) + (p.new_cgroup_ns ? " cgroupns" : "") + "\n";
  for (const auto& l : p.cgroup_links) out += "cgroup-link " + l.path + " -> " + l.target + "\n";
  for (const auto& o : p.overlays) {
    out += "overlay " + o.path + "\n";
    for (const auto& f : o.files) out += "  file " + f.path + " mode=" + mode_text(f.mode) + "\n";
    for (const auto& [host, rel] : o.binds) out += "  bind " + rel + " <- " + host + "\n";
  }
  if (!p.setup_dev) out += "dev from-bind\n";
  for (const auto& d : p.devices)
    out += std::string(d.existing ? "existing-dev " : d.bind ? "bind-dev " : "mknod ") + d.path + " " + d.type + " " + std::to_string(d.major) +
           ":" + std::to_string(d.minor) + " mode=" + mode_text(d.mode) + " owner=" + std::to_string(d.uid) + ":" +
           std::to_string(d.gid) + (d.bind ? " host=" + d.host_path : "") + "\n";
  for (const auto& l : p.links) out += "symlink " + l.path + " -> " + l.target + (l.replace ? " replace" : "") + "\n";
  for (const auto& f : p.files) out += "file " + f.path + " mode=" + mode_text(f.mode) + (f.replace ? " replace" : "") + "\n";
  if (p.console) out += "console /dev/console\n";
  if (!p.cwd.empty()) out += "cwd " + p.cwd + "\n";
  for (const auto& r : p.readonly_paths) out += "readonly " + r + "\n";
  for (const auto& m : p.masked_paths) out += "mask " + m + "\n";
  for (const auto& e : p.exec_after_pivot) out += "exec " + e.host_binary + " " + str::join(e.args, " ") + "\n";
  return out;
}

}  // namespace berth::linux::rootfs
