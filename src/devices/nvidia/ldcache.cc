// ld.so.cache parsing and writing (see ldcache.h). Layout of the "1.1" format: a 48-byte
// header (magic "glibc-ld.so.cache", version "1.1", u32 nlibs, u32 string-table length, u8
// flags, 3 pad, u32 extension offset, 3×u32 unused), then nlibs 24-byte entries (i32 flags,
// u32 key, u32 value, u32 osversion, u64 hwcap); string offsets count from the header.
#include "devices/nvidia/ldcache.h"

#include <cstring>

namespace berth::devices::nvidia {
namespace {

constexpr std::string_view kOldMagic = "ld.so-1.7.0";
constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";
constexpr size_t kNewHeader = 48;
constexpr size_t kNewEntry = 24;
constexpr size_t kOldEntry = 12;

template <class T>
T load(std::string_view d, size_t off) {
  T v;
  std::memcpy(&v, d.data() + off, sizeof v);
  return v;
}

bool string_at(std::string_view d, uint32_t off, std::string* out) {
  if (off >= d.size()) return false;
  size_t end = d.find('\0', off);
  if (end == std::string_view::npos) return false;
  *out = std::string(d.substr(off, end - off));
  return true;
}

// Where the "1.1" header starts: 0, or after the old table in the combined format.
Result<size_t> new_header_offset(std::string_view d) {
  if (d.substr(0, kNewMagic.size()) == kNewMagic) return size_t{0};
  if (d.substr(0, kOldMagic.size()) != kOldMagic) return Error::generic("ld.so.cache: unknown format");
  if (d.size() < 16) return Error::generic("ld.so.cache: truncated");
  uint64_t n = load<uint32_t>(d, 12);
  uint64_t off = 16 + n * kOldEntry;
  off = (off + 7) & ~uint64_t{7};  // aligned to the new header's alignment (8)
  if (off + kNewMagic.size() > d.size() || d.substr(off, kNewMagic.size()) != kNewMagic)
    return Error::generic("ld.so.cache: old format without a \"glibc-ld.so.cache1.1\" table");
  return static_cast<size_t>(off);
}

}  // namespace

Result<std::vector<LdcacheEntry>> parse_ldcache(std::string_view data) {
  BERTH_ASSIGN(size_t base, new_header_offset(data));
  std::string_view d = data.substr(base);
  if (d.size() < kNewHeader) return Error::generic("ld.so.cache: truncated header");
  uint64_t nlibs = load<uint32_t>(d, 20);
  if (kNewHeader + nlibs * kNewEntry > d.size()) return Error::generic("ld.so.cache: entry table past the end");
  std::vector<LdcacheEntry> out;
  out.reserve(nlibs);
  for (uint64_t i = 0; i < nlibs; ++i) {
    size_t at = kNewHeader + i * kNewEntry;
    LdcacheEntry e;
    e.flags = load<int32_t>(d, at);
    if (!string_at(d, load<uint32_t>(d, at + 4), &e.key) || !string_at(d, load<uint32_t>(d, at + 8), &e.value))
      return Error::generic("ld.so.cache: entry " + std::to_string(i) + " has a string offset past the end");
    e.hwcap = load<uint64_t>(d, at + 16);
    out.push_back(std::move(e));
  }
  return out;
}

LibArch classify(int32_t flags) {
  if ((flags & kLdFlagTypeMask) != kLdFlagElfLibc6) return LibArch::kOther;
  int32_t arch = flags & kLdFlagArchMask;
#if defined(__x86_64__)
  if (arch == kLdFlagX8664Lib64) return LibArch::kNative;
  if (arch == 0) return LibArch::kCompat32;
#elif defined(__aarch64__)
  if (arch == kLdFlagAarch64Lib64) return LibArch::kNative;
#endif
  return LibArch::kOther;
}

std::string build_ldcache(const std::vector<LdcacheEntry>& entries) {
  std::string strings;
  std::vector<std::pair<uint32_t, uint32_t>> offs;
  size_t table_end = kNewHeader + entries.size() * kNewEntry;
  for (const auto& e : entries) {
    uint32_t k = static_cast<uint32_t>(table_end + strings.size());
    strings += e.key + '\0';
    uint32_t v = static_cast<uint32_t>(table_end + strings.size());
    strings += e.value + '\0';
    offs.emplace_back(k, v);
  }
  std::string out(table_end, '\0');
  std::memcpy(out.data(), kNewMagic.data(), kNewMagic.size());
  auto put32 = [&out](size_t at, uint32_t v) { std::memcpy(out.data() + at, &v, 4); };
  put32(20, static_cast<uint32_t>(entries.size()));
  put32(24, static_cast<uint32_t>(strings.size()));
  out[28] = 2;  // little endian
  for (size_t i = 0; i < entries.size(); ++i) {
    size_t at = kNewHeader + i * kNewEntry;
    put32(at, static_cast<uint32_t>(entries[i].flags));
    put32(at + 4, offs[i].first);
    put32(at + 8, offs[i].second);
    std::memcpy(out.data() + at + 16, &entries[i].hwcap, 8);
  }
  return out + strings;
}

}  // namespace berth::devices::nvidia
