// berth's own configuration file for device modules (JSON; /etc/berth/config.json, or the
// file named by $BERTH_CONFIG for tests): where the NVIDIA driver and the host's /proc, /sys
// and /dev are, the ldconfig to run, CDI spec directories, request defaults, and switches.
// A missing default file means defaults; a missing $BERTH_CONFIG file is an error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"

namespace berth::devices {

struct NvidiaConfig {
  bool enabled = true;                     // "enabled": false turns the GPU module off
  std::string driver_root = "/";           // driverRoot: libraries, binaries, firmware, IPC
  std::string proc_root = "/proc";         // procRoot
  std::string sys_root = "/sys";           // sysRoot
  std::string dev_root = "/dev";           // devRoot: host nodes (bound in user namespaces)
  std::string ldcache = "/etc/ld.so.cache";  // ldcache, inside the driver root
  // ldconfig: the host binary run inside the container; "" = /sbin/ldconfig.real if present,
  // else /sbin/ldconfig. Must be statically linked (it runs on the image's files).
  std::string ldconfig;
  std::vector<std::string> bin_dirs = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                       "/usr/bin", "/sbin", "/bin"};  // binDirs, inside the driver root
  std::string default_capabilities = "utility,compute";  // defaultCapabilities
  // envRequestWithoutDriver: what an NVIDIA_VISIBLE_DEVICES request does on a host without a
  // driver: "warn" (run without GPUs, one warning), "error", "ignore". Annotation and CDI
  // requests always fail there.
  std::string env_request_without_driver = "warn";
  bool accept_volume_mounts = true;        // acceptVolumeMounts: /var/run/nvidia-container-devices/<id>
  bool load_kernel_modules = false;        // loadKernelModules: modprobe nvidia* when not loaded
  std::string modprobe = "/sbin/modprobe";  // modprobe
  bool discovery_cache = true;             // discoveryCache: per driver version, in the state root
  std::string mps_pipe_dir = "/tmp/nvidia-mps";  // mpsPipeDirectory, inside the driver root
  // probeTimeoutMs: how long libcuda's cuDriverGetVersion or NVML may take in their forked
  // child before it is killed (a driver whose RPC hangs); tests make it short.
  uint32_t probe_timeout_ms = 10000;
};

struct CdiConfig {
  bool enabled = true;
  // specDirs, lowest priority first (a later directory overrides an earlier one).
  std::vector<std::string> spec_dirs = {"/etc/cdi", "/var/run/cdi"};
};

// The host trees the RDMA module reads (tests point them at a fake host).
struct RdmaConfig {
  std::string sys_root = "/sys";  // sysRoot: class/infiniband*, class/misc/rdma_cm
  std::string dev_root = "/dev";  // devRoot: infiniband/* (bound in user namespaces)
};

struct Config {
  NvidiaConfig nvidia;
  CdiConfig cdi;
  RdmaConfig rdma;
  std::string source;  // the file read, "" for built-in defaults
};

inline constexpr const char* kDefaultConfigPath = "/etc/berth/config.json";

Result<Config> parse_config(std::string_view text, std::string_view source);
// $BERTH_CONFIG if set, else kDefaultConfigPath.
Result<Config> load_config();

}  // namespace berth::devices
