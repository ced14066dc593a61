// glibc's /etc/ld.so.cache, parsed by berth itself (format "glibc-ld.so.cache" version
// "1.1", alone or after the old "ld.so-1.7.0" table): how host driver libraries are found
// without running anything on the host.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"

namespace berth::devices::nvidia {

// Entry flags: the low byte is the type (3 = ELF glibc), the high byte the architecture.
inline constexpr int32_t kLdFlagTypeMask = 0x00ff;
inline constexpr int32_t kLdFlagElfLibc6 = 0x0003;
inline constexpr int32_t kLdFlagArchMask = 0xff00;
inline constexpr int32_t kLdFlagX8664Lib64 = 0x0300;
inline constexpr int32_t kLdFlagAarch64Lib64 = 0x0a00;

struct LdcacheEntry {
  int32_t flags = 0;
  std::string key;    // the soname (libcuda.so.1)
  std::string value;  // the path (/usr/lib/x86_64-linux-gnu/libcuda.so.1)
  uint64_t hwcap = 0;
};

// Entries in file order (the dynamic loader takes the first match).
Result<std::vector<LdcacheEntry>> parse_ldcache(std::string_view data);

enum class LibArch { kNative, kCompat32, kOther };
// Classifies an entry for this build's architecture (x86-64: 0x0303 native, 0x0003 i386).
LibArch classify(int32_t flags);

// Writes a cache in the "1.1" format (for tests and fixtures).
std::string build_ldcache(const std::vector<LdcacheEntry>& entries);

}  // namespace berth::devices::nvidia
