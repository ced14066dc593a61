// libFuzzer target: `exec --process` JSON.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "berth/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto p = berth::spec::parse_process(std::string(reinterpret_cast<const char*>(data), size));
  if (!p) return 0;
  (void)berth::spec::validate_process(*p, "process.json");
  auto again = berth::spec::parse_process(berth::spec::to_json(*p));
  if (!again || !(*again == *p)) std::abort();
  return 0;
}
