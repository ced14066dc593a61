// libFuzzer target: /etc/ld.so.cache ("glibc-ld.so.cache1.1", alone or after the old
// "ld.so-1.7.0" table). What parses must be written back by build_ldcache() to a cache that
// parses to the same entries, alone and behind an (empty) old-format table.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "devices/nvidia/ldcache.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

bool same(const std::vector<berth::devices::nvidia::LdcacheEntry>& a,
          const std::vector<berth::devices::nvidia::LdcacheEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].flags != b[i].flags || a[i].key != b[i].key || a[i].value != b[i].value || a[i].hwcap != b[i].hwcap)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth::devices::nvidia;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto entries = parse_ldcache(bytes);
  if (!entries) return 0;
  check(48 + entries->size() * 24 <= size);
  for (const auto& e : *entries) {
    check(e.key.find('\0') == std::string::npos && e.value.find('\0') == std::string::npos);
    (void)classify(e.flags);
  }
  std::string fresh = build_ldcache(*entries);
  auto again = parse_ldcache(fresh);
  check(again.ok() && same(*again, *entries));
  std::string old(16, '\0');  // "ld.so-1.7.0", no old entries: the new table follows at 16
  std::memcpy(old.data(), "ld.so-1.7.0", 11);
  auto combined = parse_ldcache(old + fresh);
  check(combined.ok() && same(*combined, *entries));
  return 0;
}
