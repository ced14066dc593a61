// The compiled-filter cache behind compile_cached() (see seccomp.h, docs/seccomp.md):
// key derivation, the entry format, and the directory policy, exposed for tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "berth/result.h"
#include "berth/spec.h"
#include "seccomp/seccomp.h"

namespace berth::seccomp::cache {

// Bump whenever compile() would produce a different program for the same profile and
// libseccomp (e.g. a change to the ENOSYS prologue): old entries then simply miss.
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kMaxEntries = 64;
// Entry header (host byte order): magic, format version, instruction count, the key's 32
// bytes (an entry renamed to another key is refused), CRC-32C of the body, 4 zero bytes.
inline constexpr std::string_view kMagic = "BERTHBPF";
inline constexpr size_t kHeaderSize = 8 + 4 + 4 + 32 + 4 + 4;

// Hex SHA-256 of the profile as it matters to the filter (flags and listener fields do not:
// they only act at load), the libseccomp version, the native arch and kFormatVersion.
std::string key(const spec::Seccomp& profile);

// CRC-32C (Castagnoli): catches truncation and corruption. It is no defence against a
// forger, and needs not be: whoever can write the cache directory already runs as the
// user who owns it (see open_dir in cache.cc).
uint32_t crc32c(std::string_view bytes);

std::string encode(const std::string& key, const Program& program);
// The program, or an error saying why bytes are not a valid entry for key.
Result<Program> decode(const std::string& key, std::string_view bytes);

// compile_cached() with a chosen bound on the number of entries.
Result<Program> compile_cached(const spec::Seccomp& profile, const std::string& dir, size_t max_entries);

}  // namespace berth::seccomp::cache
