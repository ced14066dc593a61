// The rootfs plan: a function turns the spec (mounts, root, linux.devices,
// linux.maskedPaths, linux.readonlyPaths, linux.rootfsPropagation, root.readonly, per-mount
// uidMappings/gidMappings) plus a few host facts into ordered steps in named phases. apply.cc
// executes them in the container's mount namespace. Device modules (nvidia, rdma, cdi)
// extend a plan only by appending steps (see container/extend.cc) before it is applied —
// never by touching the system themselves.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "linux/rootfs/options.h"
#include "util/unique_fd.h"

namespace berth::linux::rootfs {

enum class MountKind { kFilesystem, kBind, kCgroup };

struct MountStep {
  std::string destination;  // cleaned container path
  std::string source;       // host path (bind) or fs source name
  std::string type;         // filesystem type ("" for binds)
  MountKind kind = MountKind::kFilesystem;
  MountOptions opts;
  bool file = false;        // bind of a non-directory: the destination is a file
  // Mounted read-write and made read-only at the end (runc: tmpfs and /dev, which later
  // phases still write into; the superblock stays rw, as with runc).
  bool defer_ro = false;
  // Idmapped bind: the maps of the user namespace given to MOUNT_ATTR_IDMAP (the mount's
  // own uidMappings/gidMappings, or the container's for a bare "idmap").
  bool idmap = false;
  std::vector<spec::IdMapping> uid_mappings, gid_mappings;
  // The detached, already idmapped tree: prepared by the runtime before the container's
  // user namespace exists (see idmap.h), inherited by the init and moved into place there.
  std::shared_ptr<UniqueFd> prepared;
};

struct DeviceStep {
  std::string path;   // container path
  char type = 'c';    // c b u p
  uint32_t major = 0, minor = 0;
  mode_t mode = 0666;  // permission bits
  uid_t uid = 0;
  gid_t gid = 0;
  bool bind = false;   // bind-mount host_path instead of mknod (user namespaces)
  std::string host_path;
  // /dev is a bind mount: nothing may be made in it (that would be the bind's source, the
  // host's /dev mostly); the node must already be there, as this device.
  bool existing = false;
};

struct LinkStep {
  std::string target;  // link content
  std::string path;    // container path
  bool replace = false;  // remove what the image has there first (runc's /dev/ptmx)
};

struct FileStep {
  std::string path;  // container path; parents are created
  std::string content;
  mode_t mode = 0644;
  bool replace = false;  // a new file renamed over the path (a symlink there is replaced)
};

// A read-only tmpfs at `path` holding `files` (relative names), with `binds` (host path →
// path inside it) attached after: how a device module hides part of procfs. Never made
// inside procfs: where the container's procfs lacks `path`, it is left out (extension.cc).
struct OverlayStep {
  std::string path;
  std::vector<FileStep> files;
  std::vector<std::pair<std::string, std::string>> binds;
};

// A host program run inside the container after pivot_root (ldconfig): opened before the
// pivot, executed with fexecve in a forked child with an empty environment.
struct ExecStep {
  std::string host_binary;
  std::vector<std::string> args;  // argv[1..]
};

// One directory the container should see under a "cgroup" mount: its name under the mount
// point ("cpu,cpuacct", "unified", or "" for a v2-only host) and the host directory of the
// container's cgroup in that hierarchy (berth's own where the container has none there).
struct CgroupDir {
  std::string name;
  std::string host_dir;
  std::string fstype;   // cgroup | cgroup2
  std::string options;  // controller list for a fresh v1 mount in a cgroup namespace
};

// Host facts the plan depends on (found by the caller, not by the plan). Device modules
// extend a finished plan through container/extend.cc: binds are appended to `mounts`,
// nodes to `devices`, and `files`, `overlays`, `exec_after_pivot` take the rest.
struct PlanContext {
  std::string rootfs;          // absolute host path of root.path
  std::string bundle;          // absolute bundle directory: base of relative bind sources
  bool new_user_ns = false;    // created or joined: the init is not the host's root
  // berth itself runs in a user namespace that does not own the host (rootless podman runs
  // the runtime in its own): device nodes are bound from the host there too, as runc does
  // (userns.RunningInUserNS), even when the config creates no user namespace.
  bool runtime_in_user_ns = false;
  bool new_net_ns = false;
  bool new_ipc_ns = false;
  bool new_cgroup_ns = false;
  bool terminal = false;       // /dev/console from the pty
  bool no_pivot = false;
  std::vector<CgroupDir> cgroups;
  std::vector<LinkStep> cgroup_links;  // "cpu" -> "cpu,cpuacct" inside the cgroup mount
  // linux.mountLabel where SELinux is on (linux/selinux.h); "" elsewhere, where the caller
  // drops it with a warning.
  std::string mount_label;
  // Read from the host when unset; tests set them.
  std::optional<bool> host_has_kcore;      // /proc/kcore exists: runc links /dev/core to it
  std::optional<std::string> mountinfo;    // /proc/self/mountinfo (for a shared rootfs parent)
};

struct RootfsPlan {
  std::string rootfs;
  unsigned long root_propagation = 0;  // applied to "/" before anything
  unsigned long root_propagation_after = 0;  // linux.rootfsPropagation as given: for "/" after the pivot
  // The mount holding the rootfs when "/" becomes shared: made private, because pivot_root
  // refuses a shared parent (as runc).
  std::string private_parent;
  bool user_ns = false;                // become root of the user namespace first
  // linux.mountLabel (SELinux on): the init's fscreate attribute from the start, and
  // context= on the tmpfs of the cgroup mount and of masked directories; the spec's own
  // mounts carry it in their data already.
  std::string mount_label;
  bool readonly = false;
  bool no_pivot = false;
  std::string cwd;                     // created if missing (runc does)
  // Phase "mounts": spec mounts in order, plus extension mounts.
  std::vector<MountStep> mounts;
  std::vector<CgroupDir> cgroups;       // what a "cgroup" mount shows
  std::vector<LinkStep> cgroup_links;
  bool new_cgroup_ns = false;
  // Phase "devices": default nodes, linux.devices, extension nodes; then links. As runc,
  // nothing is created when /dev is a bind mount (the host's /dev is used as it is).
  bool setup_dev = true;
  std::vector<DeviceStep> devices;
  std::vector<LinkStep> links;
  std::vector<FileStep> files;         // extension files, written before pivot
  std::vector<OverlayStep> overlays;   // extension overlays, after mounts
  bool console = false;
  // Phase "after pivot".
  std::vector<std::string> readonly_paths;
  std::vector<std::string> masked_paths;
  std::vector<ExecStep> exec_after_pivot;  // extension programs (ldconfig)
};

Result<RootfsPlan> plan_rootfs(const spec::Spec& spec, const PlanContext& ctx);

// One line per step, for golden tests and --debug.
std::string to_text(const RootfsPlan& plan);
// MS_* flags as option words ("nosuid|nodev"), "0" for none.
std::string flags_text(unsigned long flags);
// MOUNT_ATTR_* bits as words ("rdonly|nosuid"), "0" for none.
std::string attr_text(uint64_t attrs);

// The files under /proc that lxcfs emulates: the only mounts runc allows inside /proc.
bool proc_mount_allowed(const std::string& destination);
// What may be mounted inside /proc as written in the config: those files, and a fresh tmpfs
// (as in runc 1.1: empty and host-free, what linux.maskedPaths puts over a directory).
bool allowed_inside_proc(const MountStep& s);

// The devices every container gets (runtime-spec "Default Devices"), in runc's order.
std::vector<DeviceStep> default_devices(bool bind_from_host);

}  // namespace berth::linux::rootfs
