// libFuzzer target: device numbers as the host shows them. /proc/devices, read for the
// NVIDIA, UVM, caps, IMEX and DRM majors: only the character section counts (whatever
// follows a "Block devices:" line is ignored), and the majors found, written back as a
// /proc/devices, parse to the same majors. And a sysfs dev file ("231:192\n"), as the RDMA
// module reads it: numbers within the kernel's 12/20 bits that read back the same.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "devices/nvidia/discover.h"
#include "devices/rdma/host.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

using berth::devices::nvidia::Majors;

bool same(const Majors& a, const Majors& b) {
  return a.nvidia == b.nvidia && a.uvm == b.uvm && a.caps == b.caps && a.imex == b.imex && a.drm == b.drm;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using berth::devices::nvidia::parse_proc_devices;
  std::string text(reinterpret_cast<const char*>(data), size);
  Majors m = parse_proc_devices(text);
  std::string out = "Character devices:\n  1 mem\n";
  auto line = [&](const std::optional<uint32_t>& n, const char* name) {
    if (n) out += std::to_string(*n) + " " + name + "\n";
  };
  line(m.nvidia, "nvidia");
  line(m.uvm, "nvidia-uvm");
  line(m.caps, "nvidia-caps");
  line(m.imex, "nvidia-caps-imex-channels");
  line(m.drm, "drm");
  out += "\nBlock devices:\n  8 sd\n";
  check(same(parse_proc_devices(out), m));
  check(same(parse_proc_devices(text + "\nBlock devices:\n195 nvidia\n510 nvidia-uvm\n226 drm\n"), m));

  if (auto dev = berth::devices::rdma::parse_dev(text)) {
    check(dev->first <= 0xfff && dev->second <= 0xfffff);
    auto again = berth::devices::rdma::parse_dev(std::to_string(dev->first) + ":" + std::to_string(dev->second) + "\n");
    check(again && *again == *dev);
  }
  return 0;
}
