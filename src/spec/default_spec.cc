// The config.json written by `berth spec`: the same container runc's `spec` describes (sh
// in ./rootfs, a read-only root, the usual mounts and masks), at spec version 1.3.0.
#include <unistd.h>

#include "berth/spec.h"

namespace berth::spec {
namespace {

Mount mount(std::string dest, std::string type, std::string source, std::vector<std::string> opts) {
  Mount m;
  m.destination = std::move(dest);
  m.type = std::move(type);
  m.source = std::move(source);
  m.options = std::move(opts);
  return m;
}

}  // namespace

Spec default_spec(bool rootless) {
  Spec s;
  s.oci_version = "1.3.0";
  Process p;
  p.terminal = true;
  p.args = {"sh"};
  p.env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"};
  p.cwd = "/";
  Capabilities caps;
  std::vector<std::string> kept = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
  caps.bounding = caps.effective = caps.permitted = caps.ambient = kept;
  p.capabilities = caps;
  p.rlimits = {Rlimit{"RLIMIT_NOFILE", 1024, 1024}};
  p.no_new_privileges = true;
  s.process = p;
  s.root = Root{"rootfs", true};
  s.hostname = "berth";
  s.mounts = {
      mount("/proc", "proc", "proc", {}),
      mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      mount("/dev/pts", "devpts", "devpts",
            rootless ? std::vector<std::string>{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}
                     : std::vector<std::string>{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}),
      mount("/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}),
      mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      rootless ? mount("/sys", "none", "/sys", {"rbind", "nosuid", "noexec", "nodev", "ro"})
               : mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}),
      mount("/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro"}),
  };
  Linux l;
  if (rootless) {
    l.uid_mappings = {IdMapping{0, static_cast<uint32_t>(::geteuid()), 1}};
    l.gid_mappings = {IdMapping{0, static_cast<uint32_t>(::getegid()), 1}};
    l.namespaces = {{"pid", ""}, {"ipc", ""}, {"uts", ""}, {"mount", ""}, {"user", ""}};
  } else {
    Resources r;
    DeviceRule deny_all;
    deny_all.allow = false;
    deny_all.access = "rwm";
    r.devices = {deny_all};
    l.resources = r;
    l.namespaces = {{"pid", ""}, {"network", ""}, {"ipc", ""}, {"uts", ""}, {"mount", ""}};
  }
  l.masked_paths = {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                    "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
                    "/proc/scsi"};
  l.readonly_paths = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"};
  s.linux = l;
  return s;
}

}  // namespace berth::spec
