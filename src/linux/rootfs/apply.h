// Applying a RootfsPlan in the container's mount namespace, in phases: prepare (root
// propagation, the rootfs bind), mounts, devices, cwd, pivot, after-pivot (readonly and
// masked paths, root.readonly). Every destination is resolved inside the rootfs from a root
// fd and mounted onto the resolved fd (move_mount or /proc/thread-self/fd/N), never onto a
// re-resolved path string.
#pragma once

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

 private:
  Status mount_filesystem(const MountStep& m);
  Status mount_bind(const MountStep& m);
  Status mount_cgroup(const MountStep& m);
  Status finish_mount(const MountStep& m);
  Status make_device(const DeviceStep& d);
  Status make_link(const LinkStep& l, int base_fd);
  // Clones the mount at (src_dirfd, src_path) — a path, or an fd with an empty path — with
  // the given attributes and moves it onto dest_fd.
  Status attach_clone(int src_dirfd, const std::string& src_path, int dest_fd, uint64_t attr_set,
                      bool recursive);
  Status mask(const std::string& path);
  Status open_dev_null();
  Status make_readonly(const std::string& path);
  Status write_file(int base_fd, const FileStep& f);
  Status mount_overlay(const OverlayStep& o);
  Status run_after_pivot(size_t index);

  Sys& sys_;
  const RootfsPlan& plan_;
  UniqueFd root_;      // the rootfs (before pivot) or "/" (after)
  UniqueFd dev_null_;  // the container's /dev/null, verified 1:3, for masking (CVE-2025-31133)
  std::vector<UniqueFd> programs_;  // exec_after_pivot binaries, opened on the host
};

}  // namespace berth::linux::rootfs
