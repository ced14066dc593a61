// Applying a RootfsPlan in the container's mount namespace, in phases: prepare (identity in
// a user namespace, root propagation, the rootfs bind), mounts, devices, cwd, pivot,
// after-pivot (readonly and masked paths, deferred read-only mounts, root.readonly), and
// the console. Every destination is resolved inside the rootfs from a root fd and mounted
// onto the resolved fd (move_mount or /proc/thread-self/fd/N), never onto a re-resolved
// path string of the host.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "berth/result.h"
#include "linux/rootfs/plan.h"
#include "linux/sys.h"

namespace berth::linux::rootfs {

class Applier {
 public:
  Applier(Sys& sys, const RootfsPlan& plan) : sys_(sys), plan_(plan) {}

  Status prepare();
  Status mounts();
  Status devices();
  // After pivot: binds the pty's terminal side (from TIOCGPTPEER) onto /dev/console.
  Status console(int peer_fd);
  Status create_cwd();
  Status pivot();
  Status after_pivot();

  int root_fd() const { return root_.get(); }
  // procfs instances for the pid namespace at pidns_fd (fsconfig "pidns", Linux 6.18+)
  // instead of the caller's: a joined pid namespace's /proc mounted from outside it.
  void set_proc_pidns(int pidns_fd) { proc_pidns_ = pidns_fd; }
  // Run before the first cgroup mount: the init's wait for its cgroup when systemd places
  // it while the rootfs is made (the mount shows that cgroup; a fresh one, its namespace).
  void set_before_cgroup_mount(std::function<Status()> f) { before_cgroup_mount_ = std::move(f); }

 private:
  // mounts.cc
  Status mount_filesystem(const MountStep& m);
  Status mount_bind(const MountStep& m);
  Status remount_bind(const MountStep& m);
  Status check_destination(const MountStep& m, int dest_fd);
  Status finish_mount(const MountStep& m, int mnt_fd);
  Status mount_proc_for_pidns(const MountStep& m, unsigned long flags, int dest_fd);
  Result<UniqueFd> reopen_mount(const MountStep& m, bool no_symlinks);
  Status tmpfs_fixups(const MountStep& m, int covered_fd, bool created, int mnt_fd);
  // cgroup_mount.cc
  Status mount_cgroup(const MountStep& m);
  Status mount_cgroup_hierarchy(const MountStep& m, const CgroupDir& c, int top_fd);
  // devices.cc
  Result<int> dir_fd(const std::string& dir);
  Status make_device(const DeviceStep& d);
  Status bind_device(const DeviceStep& d, int parent, const std::string& name);
  Status check_existing_device(const DeviceStep& d);
  Status make_link(const LinkStep& l, int parent, const std::string& name);
  Result<UniqueFd> console_destination();
  // apply.cc
  // Clones the mount at (src_dirfd, src_path) — a path, or an fd with an empty path — with
  // the given attributes and moves it onto dest_fd.
  Status attach_clone(int src_dirfd, const std::string& src_path, int dest_fd, uint64_t attr_set, bool recursive);
  Status hide_host_proc_sys();
  // masks.cc
  Status open_dev_null();
  Status mask(const std::string& path);
  Status make_readonly(const std::string& path);
  Status finalize();
  // extension.cc
  Status write_file(int base_fd, const FileStep& f);
  Status replace_file(int dirfd, const std::string& name, const FileStep& f);
  Status mount_overlay(const OverlayStep& o);
  Result<std::optional<UniqueFd>> overlay_target(const std::string& path);

  Sys& sys_;
  const RootfsPlan& plan_;
  UniqueFd root_;      // the rootfs; "/" after the pivot (the same mount)
  int proc_pidns_ = -1;
  std::function<Status()> before_cgroup_mount_;
  UniqueFd dev_null_;  // the container's /dev/null, verified 1:3, for masking (CVE-2025-31133)
  std::vector<UniqueFd> programs_;     // exec_after_pivot binaries, opened on the host
  std::vector<UniqueFd> deferred_ro_;  // mounts made read-only last (MountStep::defer_ro)
  std::map<std::string, UniqueFd> dirs_;  // directories of the devices phase, resolved once
};

// Per-mount MS_* flags → MOUNT_ATTR_* (superblock flags such as sync have no per-mount form,
// and runc's bind remount ignores them too).
uint64_t attrs_of(unsigned long flags);

}  // namespace berth::linux::rootfs
