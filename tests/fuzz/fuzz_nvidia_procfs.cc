// libFuzzer target: the NVIDIA driver's procfs files as berth reads them — version,
// gpus/*/information, params (and its masked copy), nvidia-caps/mig-minors, capability
// access files — and PCI bus ids. Every parser sees the whole input; what parses is written
// back in the driver's format and must parse to the same values.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "devices/nvidia/discover.h"
#include "util/strings.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

using namespace berth::devices::nvidia;

void version(std::string_view text) {
  auto v = parse_version_file(text);
  if (!v) return;
  check(!v->empty() && v->find('.') != std::string::npos && v->front() != '.' && v->back() != '.');
  check(v->find_first_not_of("0123456789.") == std::string::npos);
  auto again = parse_version_file("NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + *v + "  Thu Feb 20 2026\n");
  check(again == v);
}

void information(std::string_view text, const std::string& bus) {
  auto g = parse_information(text, bus);
  if (!g) return;
  check(g->bus_id == bus && berth::str::starts_with(g->uuid, "GPU-"));
  std::string out = "Model: \t\t " + g->model + "\nGPU UUID: \t " + g->uuid + "\nBus Location: \t " + bus +
                    "\nDevice Minor: \t " + std::to_string(g->minor) + "\n";
  auto again = parse_information(out, bus);
  check(again && again->model == g->model && again->uuid == g->uuid && again->minor == g->minor);
}

void params(std::string_view text) {
  DeviceParams p = parse_params(text);
  check(p.mode <= 07777);
  std::string masked = mask_params(text);
  check(mask_params(masked) == masked);
  for (const auto& line : berth::str::split(masked, '\n'))
    if (berth::str::starts_with(line, "ModifyDeviceFiles:")) check(line == "ModifyDeviceFiles: 0");
  DeviceParams q = parse_params(masked);  // masking changes nothing else
  check(q.uid == p.uid && q.gid == p.gid && q.mode == p.mode);
}

void mig_minors(std::string_view text) {
  MigMinors m = parse_mig_minors(text);
  std::string out;
  if (m.config) out += "config " + std::to_string(*m.config) + "\n";
  if (m.monitor) out += "monitor " + std::to_string(*m.monitor) + "\n";
  for (const auto& [path, minor] : m.by_path) {
    check(!path.empty() && path != "config" && path != "monitor" && path.find(' ') == std::string::npos);
    out += path + " " + std::to_string(minor) + "\n";
  }
  MigMinors again = parse_mig_minors(out);
  check(again.config == m.config && again.monitor == m.monitor && again.by_path == m.by_path);
}

void access_minor(std::string_view text) {
  auto n = parse_access_minor(text);
  if (n) check(parse_access_minor("DeviceFileMinor: " + std::to_string(*n) + "\nDeviceFileMode: 292\n") == n);
}

void bus_id(std::string_view text) {
  auto key = pci_key(text);
  if (!key) return;
  char canon[32];
  std::snprintf(canon, sizeof canon, "%08x:%02x:%02x.%x", static_cast<unsigned>(*key >> 16),
                static_cast<unsigned>((*key >> 8) & 0xff), static_cast<unsigned>((*key >> 3) & 0x1f),
                static_cast<unsigned>(*key & 7));
  check(pci_key(canon) == key);
  if ((*key >> 16) == 0) check(pci_key(std::string(canon).substr(9)) == key);  // 06:00.0 = domain 0
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string first(text.substr(0, text.find('\n')));
  version(text);
  information(text, first);
  params(text);
  mig_minors(text);
  access_minor(text);
  bus_id(first);
  bus_id(berth::str::trim(first));
  return 0;
}
