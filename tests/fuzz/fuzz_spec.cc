// libFuzzer target: config.json parsing, validation and the serialize round trip.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "berth/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto s = berth::spec::parse_spec(text);
  if (!s) return 0;
  (void)berth::spec::validate(*s);
  // What we write we must read back identically.
  auto again = berth::spec::parse_spec(berth::spec::to_json(*s));
  if (!again || !(*again == *s)) std::abort();
  return 0;
}
