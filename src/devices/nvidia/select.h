// Which GPUs and MIG devices a request names: "all", indexes (PCI order), GPU-<uuid> and
// MIG-<uuid> (unique prefixes accepted, as nvidia-container-cli does), "<gpu>:<mig>", PCI bus
// ids in any domain width. A MIG device brings its parent GPU node. NVML is consulted only
// for MIG names, through a lazy callback. Anything else fails naming the devices that exist.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "berth/result.h"
#include "devices/nvidia/discover.h"
#include "devices/nvidia/probe.h"

namespace berth::devices::nvidia {

struct SelectedGpu {
  Gpu gpu;
  bool whole = false;            // the GPU itself was named (not only MIG devices on it)
  std::vector<NvmlMig> migs;     // MIG devices named on it
};

struct Selection {
  std::vector<SelectedGpu> gpus;  // PCI order
  const SelectedGpu* find(unsigned index) const;
};

// Called at most once, only when a MIG form is used.
using NvmlLookup = std::function<Result<std::vector<NvmlGpu>>()>;

Result<Selection> select_devices(const std::vector<std::string>& ids, const std::vector<Gpu>& gpus, const NvmlLookup& nvml);

// "0 GPU-edfee158-... 0000:06:00.0, 1 ..." for error messages.
std::string describe_gpus(const std::vector<Gpu>& gpus);

}  // namespace berth::devices::nvidia
