// What the host's NVIDIA kernel driver shows, read through a HostView (separate proc, sys and
// dev roots, so tests point it at a fixture tree) on every create — a handful of small
// procfs files, no NVML: the driver version, the GPUs from
// /proc/driver/nvidia/gpus/*/information in PCI order, majors from /proc/devices, MIG
// capability minors, device-file params, IMEX channels and DRI nodes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "devices/config.h"

namespace berth::devices::nvidia {

struct HostView {
  std::string driver_root = "/";
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  std::string dev_root = "/dev";
  static HostView from(const NvidiaConfig& c) { return {c.driver_root, c.proc_root, c.sys_root, c.dev_root}; }
  std::string proc(std::string_view rel) const;  // proc("/driver/nvidia/version")
  std::string sys(std::string_view rel) const;
  std::string dev(std::string_view rel) const;
};

struct Gpu {
  unsigned index = 0;   // position in PCI bus order: what NVML and CUDA call the index
  uint32_t minor = 0;   // /dev/nvidia<minor>
  std::string bus_id;   // the procfs directory name (0000:06:00.0)
  std::string uuid;     // GPU-...
  std::string model;
};

struct Majors {
  std::optional<uint32_t> nvidia;  // "nvidia" (driver >= 550) or "nvidia-frontend"
  std::optional<uint32_t> uvm;     // "nvidia-uvm"
  std::optional<uint32_t> caps;    // "nvidia-caps"
  std::optional<uint32_t> imex;    // "nvidia-caps-imex-channels"
  std::optional<uint32_t> drm;     // "drm"
};

// /proc/driver/nvidia-caps/mig-minors: "config 1", "monitor 2", "gpu0/gi1/access 12".
struct MigMinors {
  std::optional<uint32_t> config, monitor;
  std::map<std::string, uint32_t> by_path;
};

// /proc/driver/nvidia/params: what the driver uses when it creates /dev/nvidia* itself.
struct DeviceParams {
  uint32_t uid = 0, gid = 0, mode = 0666;
};

struct DriNode {
  std::string name;  // card1, renderD128
  uint32_t major = 0, minor = 0;
  // The host node's (<dev>/dri/<name>) permissions and owner, mirrored in the container:
  // udev makes card* 0660 root:video, not world-accessible. 0660 root:root when the host
  // has no such node.
  uint32_t mode = 0660, uid = 0, gid = 0;
};

struct HostDevices {
  std::string driver_version;
  std::vector<Gpu> gpus;  // PCI order
  Majors majors;
  MigMinors mig;  // filled by the module only for MIG requests (read_mig_minors)
  DeviceParams params;
  // Copies for the procfs mask (/proc/driver/nvidia/{params,version,registry}).
  std::string params_text, version_text, registry_text;
  std::vector<uint32_t> imex_channels;  // present under <dev>/nvidia-caps-imex-channels
};

// Pure parsers (exposed for tests).
std::optional<std::string> parse_version_file(std::string_view text);
Result<Gpu> parse_information(std::string_view text, const std::string& bus_id);
Majors parse_proc_devices(std::string_view text);
// Only the entries of the given GPU minors (and config/monitor) when gpu_minors is set.
MigMinors parse_mig_minors(std::string_view text, const std::optional<std::set<uint32_t>>& gpu_minors = std::nullopt);
DeviceParams parse_params(std::string_view text);
// DeviceFileMinor of a MIG access file ("DeviceFileMinor: 12").
std::optional<uint32_t> parse_access_minor(std::string_view text);
// "ModifyDeviceFiles: 1" → 0: the container's driver must never create or chmod nodes.
std::string mask_params(std::string_view params);
// Numeric PCI bus id (domain, bus, device, function) from 0000:06:00.0, 00000000:06:00.0 or 06:00.0.
std::optional<uint64_t> pci_key(std::string_view bus_id);

// nullopt when no NVIDIA driver is loaded (<proc>/driver/nvidia/version missing).
Result<std::optional<std::string>> read_driver_version(const HostView& host);
// Everything but `mig`, which only MIG requests need: read_mig_minors then.
Result<HostDevices> discover_devices(const HostView& host, const std::string& version);
MigMinors read_mig_minors(const HostView& host, const std::set<uint32_t>& gpu_minors);
// What changes when MIG instances are created or destroyed, cheaply: every entry of
// <proc>/driver/nvidia/capabilities (gpuN/mig/giX/ciY/access: name, type, inode, mtime in
// ns) and the identity of <dev>/nvidia-caps (inode, mtime: nodes made or removed). A
// recreated GI/CI with the same numbers is a new procfs entry, with a new mtime. Cached MIG
// layouts (NVML's answer) are keyed by it.
std::string mig_state(const HostView& host);
// Whether the driver exposes the GI and CI of a MIG device on the GPU with this minor
// (capabilities/gpu<minor>/mig/gi<gi>[/ci<ci>]/access): a layout that names one it lacks
// is stale.
bool mig_instance_exists(const HostView& host, uint32_t gpu_minor, unsigned gi, unsigned ci);
// DRI nodes of one GPU from <sys>/bus/pci/devices/<bus>/drm/*/dev, mode and owner from <dev>/dri.
std::vector<DriNode> dri_nodes(const HostView& host, const std::string& bus_id);

}  // namespace berth::devices::nvidia
