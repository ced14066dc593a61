// The driver's user-space files on the host, per capability: libraries found through the
// driver root's ld.so.cache (only files whose name ends in the exact driver version:
// leftovers of older installs are rejected), binaries in the driver root's bin dirs, GSP
// firmware, graphics config JSONs, IPC sockets and the MPS pipe directory. Every path is
// resolved inside the driver root. Expensive enough to be cached per driver version.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/result.h"
#include "devices/config.h"
#include "devices/nvidia/rootdir.h"

namespace berth::devices::nvidia {

struct DriverFile {
  std::string path;    // where the container sees it (libraries: the soname)
  std::string source;  // the resolved in-root path in the driver root
  uint32_t caps = 0;   // Capability bits that want it
};

struct DriverFiles {
  std::string version;       // 550.54.15
  std::string cuda_version;  // 12.4; "" when it could not be read (cuDriverGetVersion)
  std::string cuda_error;    // why, then
  std::vector<DriverFile> libs, libs32, bins, firmware, configs, ipc;
};

// Capabilities that want a library, by its soname ("libcuda.so.1" → compute); 0 = not a
// driver library berth knows.
uint32_t library_caps(const std::string& soname);
// Symlinks the toolkit adds beside the sonames: {link name, target} for a soname.
std::vector<std::pair<std::string, std::string>> extra_library_links(const std::string& soname);

// The files alone (no probe), then find_libcuda/probe_cuda; discover_driver_files does both.
Result<DriverFiles> find_driver_files(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version);
const DriverFile* find_libcuda(const DriverFiles& f);  // libcuda.so.1, nullptr when missing
// Sets cuda_version from cuDriverGetVersion in a child, or cuda_error.
void probe_cuda(const RootDir& driver, DriverFiles& f);
Result<DriverFiles> discover_driver_files(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version);

}  // namespace berth::devices::nvidia
