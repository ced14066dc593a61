// CUDA forward compatibility: whether an image's /usr/local/cuda/compat/libcuda.so.<ver>
// should be used instead of the host's libcuda. With the ELF note
// `.note.cuda.fwd_compatibility` (owner "NVIDIA Corporation", JSON {"format":1,
// "CUDA version":"12.8","driver":[535,550]}): only when it lists the host driver's branch
// and brings a newer CUDA than the host's. Without a note: only when its driver major is
// above the host's. The choice is made through an /etc/ld.so.conf.d/00-compat-*.conf
// drop-in, never by binding over the host libcuda (CUDA errors 803/804 otherwise).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "berth/result.h"

namespace berth::devices::nvidia {

struct CompatNote {
  std::string cuda_version;   // "12.8"
  std::vector<unsigned> driver_branches;  // 535, 550
};

// Parses the note's JSON payload.
Result<CompatNote> parse_compat_note(const std::string& json);

struct CompatDecision {
  bool use = false;
  std::string reason;  // for the debug log and tests
};

// compat_version: the version in the library's file name (libcuda.so.570.86.10).
CompatDecision decide_compat(const std::string& host_driver, const std::string& host_cuda,
                             const std::string& compat_version, const std::optional<std::string>& note_json);

}  // namespace berth::devices::nvidia
