// What a device module (nvidia, rdma, cdi) may add to a container: the extension point of
// the rootfs plan and of the cgroup device list. Modules compute Edits from the spec and
// their view of the host; they never touch the system. merge_edits() (container/extend.cc)
// folds them into the RootfsPlan, the process and the cgroup rules before the init runs, so
// everything happens in the container's mount namespace before pivot_root, where the host
// and <rootfs> are both visible.
// Why these are steps of their own and not the rootfs plan's (devices/ may not include
// linux/rootfs, and an edit also changes the spec, the process and the cgroup rules), and
// which plan step each becomes: docs/architecture.md, "Two step vocabularies".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "berth/spec.h"

namespace berth::devices {

struct DeviceNode {
  std::string container_path;  // /dev/nvidia0
  std::string host_path;       // bound from here in a user namespace (no mknod there)
  char type = 'c';
  uint32_t major = 0, minor = 0;
  uint32_t mode = 0666;
  uint32_t uid = 0, gid = 0;
  std::string access = "rwm";  // for the cgroup allow rule
};

struct BindMount {
  std::string host_path;
  std::string container_path;
  std::vector<std::string> options;  // e.g. ro, nosuid, nodev, bind
};

struct Symlink {
  std::string target;          // link content
  std::string container_path;  // where the link is created
};

struct File {
  std::string container_path;  // created (with parents) before pivot_root
  std::string content;
  uint32_t mode = 0644;
  // Replaced by a rename, as ldconfig replaces its cache: whatever the image has there (a
  // symlink included) is swapped out, never followed or written through.
  bool replace = false;
};

// A read-only tmpfs over a container path, populated with files, then selected host paths
// bound back into it (procfs masking of /proc/driver/nvidia). Left out, with a warning,
// where the path would be a new directory in the container's procfs (nothing to hide).
struct Overlay {
  std::string container_path;
  std::vector<File> files;               // paths relative to container_path
  std::vector<BindMount> binds;          // bound into it after the files are written
};

// ldconfig run inside the container after pivot_root, from a fd of the host's binary opened
// before the pivot, in a forked child with a clean environment.
struct Ldconfig {
  std::string host_binary;
  std::vector<std::string> args;  // argv[1..]
};

// A hook contributed by a CDI spec, with its OCI stage (createRuntime, createContainer,
// startContainer, poststart, poststop, prestart).
struct StagedHook {
  std::string stage;
  spec::Hook hook;
};

struct Edits {
  std::vector<std::string> env;             // NAME=value, replacing NAME in process.env
  std::vector<DeviceNode> nodes;
  // Directories of the module's own (the driver's library directory): each gets a fresh
  // tmpfs (nosuid, nodev, noexec) before `mounts`, made read-only once the init is done
  // with it. The mount points and links under it are made in that tmpfs, not in the image:
  // on a fresh overlayfs rootfs each would be a new entry of the upper layer, where the
  // tmpfs costs one directory (docs/gpu.md has the cost of each).
  std::vector<std::string> tmpfs;
  std::vector<BindMount> mounts;            // after the spec's mounts, in order
  std::vector<Symlink> symlinks;
  std::vector<File> files;
  std::vector<Overlay> overlays;            // after mounts (so /proc exists)
  std::vector<uint32_t> additional_gids;
  std::vector<spec::DeviceRule> extra_rules;  // cgroup rules beyond one per node
  std::vector<Ldconfig> ldconfig;
  // Spec-level edits from CDI, folded into the spec by merge_spec_edits (container/extend.cc):
  // hooks join the spec's hooks at their stage, net_devices join linux.netDevices. (CDI
  // intelRdt is refused when the spec is read: berth has no Intel RDT support.)
  std::vector<StagedHook> hooks;
  std::map<std::string, spec::NetDevice> net_devices;

  bool empty() const {
    return env.empty() && nodes.empty() && tmpfs.empty() && mounts.empty() && symlinks.empty() && files.empty() &&
           overlays.empty() && additional_gids.empty() && extra_rules.empty() && ldconfig.empty() &&
           hooks.empty() && net_devices.empty();
  }
};

// Appends b to a (used when several modules contribute).
void append(Edits& a, const Edits& b);

// One line per edit, in a stable order, for golden tests and --debug.
std::string to_text(const Edits& e);

}  // namespace berth::devices
