// The driver-file discovery cached per driver version in the state root
// (<root>/.nvidia-<version>-<hash>.json, a file, so `list` never sees it): the ld.so.cache
// walk and the path resolution run once per driver install; the entry is rebuilt when the
// driver root's ld.so.cache changes or a cached file vanished. Beside the files it keeps:
// - the CUDA version, only as an answer, with the identity (dev, inode, size, mtime) of the
//   libcuda that gave it; asked only when a decision needs it (need_cuda_version);
// - a failed or timed-out CUDA probe, with that libcuda's identity and a retry time: a
//   wedged driver costs one timeout per library change (or per kCudaRetryAfterTimeoutS),
//   not one per create; a replaced libcuda is asked again at once;
// - NVML's answer (brands, compute capabilities, the MIG layout), keyed by libnvidia-ml's
//   identity, the GPUs asked about and the MIG state (mig_state: the procfs capabilities
//   tree and /dev/nvidia-caps), so that creating or destroying a MIG instance invalidates it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/result.h"
#include "devices/config.h"
#include "devices/nvidia/driver_files.h"
#include "devices/nvidia/probe.h"
#include "devices/nvidia/rootdir.h"

namespace berth::devices::nvidia {

// A libcuda that failed fast is asked again after 5 minutes (a driver still loading, a
// transient error); one that hung, after 30 minutes: each retry of a wedged driver costs a
// whole probe timeout, so it is bounded to about one create in an hour of steady use.
inline constexpr int64_t kCudaRetryAfterFailureS = 5 * 60;
inline constexpr int64_t kCudaRetryAfterTimeoutS = 30 * 60;

struct CacheFile;

class DriverCache {
 public:
  // state_root "" (or cfg.discovery_cache false): nothing is kept, every call asks.
  DriverCache(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version, const std::string& state_root);

  // The driver files; cuda_version is set only when this libcuda's answer is cached: no probe.
  Result<DriverFiles> files();

  // For a decision that needs the CUDA version (a cuda requirement, the forward-compat
  // choice): sets files.cuda_version, or files.cuda_error saying why it is unknown ("libcuda.so.550.54.15
  // timed out after 10 s at <time>; not asked again until the library changes or <time>").
  // Probes at most once per call and only when neither an answer nor a failure still in
  // its retry window is recorded for this libcuda. now_s: wall-clock seconds.
  void need_cuda_version(DriverFiles& files, int64_t now_s);

  // NVML's facts for the GPUs `buses`: the cached answer when its key (libnvidia-ml,
  // buses, mig_state) matches and `reuse`, else a fresh probe, stored. *hit says which.
  Result<std::vector<NvmlGpu>> nvml(const DriverFiles& files, const std::vector<std::string>& buses,
                                    const std::string& mig_state, bool reuse, bool* hit);

 private:
  bool enabled() const { return !path_.empty(); }
  bool load(CacheFile& c) const;
  void store(const CacheFile& c) const;

  const RootDir& driver_;
  const NvidiaConfig& cfg_;
  std::string version_, state_root_, key_, stamp_, name_, path_;
};

// DriverCache(...).files(), for callers that need no CUDA version.
Result<DriverFiles> cached_driver_files(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version,
                                        const std::string& state_root);

// (De)serialization, exposed for tests.
std::string serialize_driver_files(const DriverFiles& f, const std::string& key, const std::string& stamp);
Result<DriverFiles> parse_driver_files(const std::string& text, const std::string& key, const std::string& stamp);

}  // namespace berth::devices::nvidia
