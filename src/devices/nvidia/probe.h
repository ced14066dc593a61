// Driver libraries loaded only in short-lived forked children, never in berth itself, and
// only when procfs cannot answer: libcuda for the CUDA version (only for a decision that
// needs it, then cached, failures too: cache.h) and NVML for MIG devices, brands and
// compute capabilities (only when a request names a MIG device or a brand/arch
// requirement; its answer is cached under the MIG state). A hung driver call is killed
// after a timeout instead of hanging create (toolkit #202: "driver rpc error: timed out").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "berth/result.h"

namespace berth::devices::nvidia {

inline constexpr int kProbeTimeoutMs = 10000;

// Runs `body` in a forked child; what it writes to the fd it is given is returned once it
// exits 0. The child has PR_SET_NO_NEW_PRIVS and dies with the parent. A child still
// running after timeout_ms is killed: the error then has err() == ETIMEDOUT.
Result<std::string> run_in_child(const std::function<int(int out_fd)>& body, int timeout_ms, const std::string& what);

// "10 s", "250 ms": a timeout as messages give it.
std::string describe_timeout(int timeout_ms);

// cuDriverGetVersion from the host libcuda (a host path): "12.4".
Result<std::string> probe_cuda_version(const std::string& libcuda_path, int timeout_ms = kProbeTimeoutMs);

struct NvmlMig {
  unsigned index = 0;  // NVML's MIG device index on its parent (the j of i:j)
  std::string uuid;    // MIG-...
  unsigned gi = 0, ci = 0;
};

struct NvmlGpu {
  std::string bus_id;  // as asked
  std::string brand;   // tesla, geforce, nvidia, ... (nvidia-container-cli's names)
  std::string arch;    // compute capability, "8.0"
  bool mig_enabled = false;
  std::vector<NvmlMig> migs;
};

// NVML facts for the given GPUs (by PCI bus id), from the host libnvidia-ml (a host path).
Result<std::vector<NvmlGpu>> probe_nvml(const std::string& libnvml_path, const std::vector<std::string>& bus_ids,
                                        int timeout_ms = kProbeTimeoutMs);

// The text protocol between the NVML child and berth (exposed for tests).
Result<std::vector<NvmlGpu>> parse_nvml_report(const std::string& text);

}  // namespace berth::devices::nvidia
