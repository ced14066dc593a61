// libFuzzer target: CDI spec files in JSON (parse, validate, resolve, merge the edits).
#include <cstdint>
#include <string_view>

#include "cdi_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = berth::devices::cdi::parse_spec(text, "/etc/cdi/fuzz.json");
  if (s) berth::fuzz::check_spec(*s, "/etc/cdi/fuzz.json");
  return 0;
}
