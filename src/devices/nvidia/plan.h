// From a request, the host's facts and the container's facts to Edits — a pure function,
// golden-tested: device nodes (control, per GPU, uvm, modeset, MIG caps, IMEX channels, DRI),
// driver files per capability bound read-only nodev nosuid (libraries, binaries, firmware,
// graphics configs) and IPC sockets, SONAME and toolkit symlinks, the procfs mask
// (ModifyDeviceFiles: 0, only the selected GPUs' directories), the graphics application
// profile, ld.so.conf drop-ins (CUDA compat first) and the in-container ldconfig run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "devices/edits.h"
#include "devices/nvidia/container_fs.h"
#include "devices/nvidia/discover.h"
#include "devices/nvidia/driver_files.h"
#include "devices/nvidia/request.h"
#include "devices/nvidia/select.h"

namespace berth::devices::nvidia {

struct PlanInput {
  const Request* req = nullptr;
  const HostDevices* dev = nullptr;
  const DriverFiles* files = nullptr;
  const Selection* sel = nullptr;
  const ContainerFacts* ct = nullptr;
  HostView host;                 // host paths of nodes (bound in user namespaces) and procfs
  std::string driver_root = "/"; // host path of the driver root (realpath)
  bool proc_mounted = true;      // the spec mounts procfs at /proc: mask /proc/driver/nvidia
  bool has_modeset = false;      // <dev>/nvidia-modeset exists (nvidia-modeset is loaded)
  std::string ldconfig;          // host ldconfig to run inside; "" = none
  bool use_compat = false;       // the compat rule chose ct->compat
  std::map<std::string, std::vector<DriNode>> dri;  // bus id → DRI nodes, for graphics
  std::vector<uint32_t> imex;    // IMEX channels to inject
  std::vector<unsigned> mig_config_gpus, mig_monitor_gpus;  // GPU indexes (privileged requests)
};

Edits plan_edits(const PlanInput& in);

// Parts, in their own file (plan_files.cc).
void plan_driver_files(const PlanInput& in, Edits& e);
void plan_ld_config(const PlanInput& in, Edits& e);
// Where the libraries of lib_dir (or of lib32_dir) go, and whether that is a tmpfs of the
// module's own: lib_dir itself when the image has nothing there; else a directory of berth's
// inside it when the image's loader is told of it (glibc with ldconfig, musl); else lib_dir.
struct LibraryDir {
  std::string path;
  bool tmpfs = false;
};
LibraryDir library_dir(const PlanInput& in, bool lib32);
// ld.so.conf drop-ins and the ldconfig run for library dirs (compat_dir "" = none), by the
// image's libc: glibc → drop-ins + ldconfig, musl → its .path file, none → nothing.
void ld_config_edits(const ContainerFacts& ct, const std::vector<std::string>& dirs, const std::string& compat_dir,
                     const std::string& ldconfig, const std::string& dropin, Edits& e);

}  // namespace berth::devices::nvidia
