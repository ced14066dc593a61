// libFuzzer target: `update --resources` JSON.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "berth/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = berth::spec::parse_resources(std::string(reinterpret_cast<const char*>(data), size));
  if (!r) return 0;
  auto again = berth::spec::parse_resources(berth::spec::to_json(*r));
  if (!again || !(*again == *r)) std::abort();
  return 0;
}
