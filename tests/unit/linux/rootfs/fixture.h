// Rootfs test fixture: a busybox-like image at /bundle/rootfs in the RecordingSys model, a
// spec to shape, and the run of every phase of the Applier against the fake (stopping at
// the first error, which ends the log as "error: <message>").
#pragma once

#include <functional>
#include <string>

#include "berth/spec.h"
#include "linux/rootfs/apply.h"
#include "linux/rootfs/idmap.h"
#include "linux/rootfs/plan.h"
#include "support/fakes/recording_sys.h"

namespace berth::linux::rootfs::testing {

inline constexpr const char* kRootfs = "/bundle/rootfs";

// /bundle/rootfs with bin, etc (passwd, hosts), proc, sys, dev, tmp (1777), run, var/run ->
// ../run; and the host mountinfo the plan reads for a shared root.
inline void add_image(test::RecordingSys& sys) {
  std::string r = kRootfs;
  for (const char* d : {"/bin", "/proc", "/sys", "/dev", "/run", "/var", "/home"}) sys.add_dir(r + d);
  sys.add_dir(r + "/etc", 0755);
  sys.add_dir(r + "/tmp", 01777);
  sys.add_file(r + "/etc/passwd", "root:x:0:0::/root:/bin/sh\n");
  sys.add_file(r + "/etc/hosts", "127.0.0.1 localhost\n");
  sys.add_file(r + "/bin/sh");
  sys.add_symlink(r + "/var/run", "../run");
}

inline constexpr const char* kHostMountinfo =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n";

// A minimal spec: process cwd "/", no mounts, no masks, a mount namespace only.
inline spec::Spec minimal_spec() {
  spec::Spec s;
  s.oci_version = "1.3.0";
  s.process.emplace();
  s.process->cwd = "/";
  s.process->args = {"sh"};
  s.root = spec::Root{"rootfs", false};
  s.linux.emplace();
  s.linux->namespaces = {{"mount", ""}};
  return s;
}

inline spec::Mount mnt(std::string dest, std::string type, std::string source, std::vector<std::string> opts) {
  spec::Mount m;
  m.destination = std::move(dest);
  m.type = std::move(type);
  m.source = std::move(source);
  m.options = std::move(opts);
  return m;
}

inline PlanContext base_context() {
  PlanContext c;
  c.rootfs = kRootfs;
  c.host_has_kcore = true;
  c.mountinfo = kHostMountinfo;
  return c;
}

// Every phase, in the order the container init runs them (after the runtime prepared the
// idmapped trees); the console gets a fake pty peer. The log, ended by "error: ..." when a
// phase failed.
// proc_pidns >= 0: the Applier mounts /proc for that pid namespace (set_proc_pidns).
inline std::string apply_all(test::RecordingSys& sys, RootfsPlan& plan, int proc_pidns = -1) {
  sys.add_node("/dev/pts/0", 'c', 136, 0, 0620);
  int pty = sys.fake_fd("/dev/pts/0");
  Status st = prepare_idmapped_mounts(sys, plan);
  if (st) {
    Applier a(sys, plan);
    if (proc_pidns >= 0) a.set_proc_pidns(proc_pidns);
    const std::function<Status()> phases[] = {
        [&] { return a.prepare(); },     [&] { return a.mounts(); }, [&] { return a.devices(); },
        [&] { return a.create_cwd(); }, [&] { return a.pivot(); },  [&] { return a.after_pivot(); },
        [&] { return a.console(pty); }};
    for (const auto& phase : phases)
      if (st = phase(); !st) break;
  }
  std::string out = sys.log_text();
  if (!st) out += "error: " + st.error().message() + "\n";
  return out;
}

}  // namespace berth::linux::rootfs::testing
