// libFuzzer target: CDI spec files in YAML. The YAML → JSON converter must emit valid JSON
// that converts to itself again (JSON is YAML flow style), and a spec that parses must keep
// the invariants of cdi_check.h.
#include <cstdint>
#include <string>
#include <string_view>

#include "cdi_check.h"
#include "devices/cdi/yaml.h"
#include "util/json.h"

namespace {

// Characters libyaml refuses to read unescaped (DEL, C1 controls but NEL, U+FFFE, U+FFFF):
// a double-quoted YAML scalar can carry them escaped, and the JSON text then has them raw,
// which JSON allows but YAML does not.
bool yaml_printable(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    auto next = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0;
    auto after = i + 2 < s.size() ? static_cast<unsigned char>(s[i + 2]) : 0;
    if (c == 0x7f) return false;
    if (c == 0xc2 && next >= 0x80 && next <= 0x9f && next != 0x85) return false;
    if (c == 0xef && next == 0xbf && (after == 0xbe || after == 0xbf)) return false;
  }
  return true;
}

// YAML limits an implicit key to 1024 characters, JSON does not: a JSON text whose key is
// longer is not YAML, so it cannot be read back. libyaml counts from the key's first quote
// to where it is when it next looks (after the ':'), so keys near the limit are skipped too.
bool has_long_key(const std::string& json) {
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] != '"') continue;
    size_t start = i++;
    while (i < json.size() && json[i] != '"') i += json[i] == '\\' ? 2 : 1;
    if (i + 1 < json.size() && json[i + 1] == ':' && i - start > 1000) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto json = devices::cdi::yaml_to_json(text, "fuzz.yaml");
  if (!json) return 0;
  fuzz::check(!json->empty());
  fuzz::check(json::Document::parse(*json, "converted").ok());
  if (yaml_printable(*json) && !has_long_key(*json)) {
    auto again = devices::cdi::yaml_to_json(*json, "converted.yaml");
    fuzz::check(again.ok() && *again == *json);
  }
  auto s = devices::cdi::parse_spec(text, "/etc/cdi/fuzz.yaml");
  if (s) fuzz::check_spec(*s, "/etc/cdi/fuzz.yaml");
  return 0;
}
