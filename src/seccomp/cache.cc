// The seccomp filter cache (linux.seccomp compiled once per profile): <dir>/<key>.bpf,
// owned by the effective uid, 0600, written atomically, checked on every read, bounded.
#include "seccomp/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "spec/schema.h"
#include "util/file.h"
#include "util/log.h"
#include "util/sha256.h"
#include "util/unique_fd.h"

namespace berth::seccomp {
namespace cache {
namespace {

constexpr std::string_view kSuffix = ".bpf";
// A temp file this old belongs to a writer that died between create and rename.
constexpr time_t kStaleTempSeconds = 600;

// Byte-wise table for the reflected Castagnoli polynomial, built at compile time.
constexpr std::array<uint32_t, 256> crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (c & 1 ? 0x82f63b78u : 0);
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCrcTable = crc_table();

// The key as the 32 raw bytes it is the hex of.
std::string key_bytes(const std::string& hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1]));
  out.resize(32);
  return out;
}

// The cache decides which filter a container runs under, so it is only trusted when no one
// but this user could have written it.
Result<UniqueFd> open_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST) return Error::sys(errno, "mkdir " + dir);
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open " + dir);
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) return Error::sys(errno, "stat " + dir);
  if (st.st_uid != ::geteuid() || (st.st_mode & 022) != 0)
    return Error::generic(dir + " is not owned by uid " + std::to_string(::geteuid()) +
                          " or is writable by group or others");
  return fd;
}

Result<Program> read_entry(int dirfd, const std::string& name, const std::string& key) {
  UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open");
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) return Error::sys(errno, "stat");
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    return Error::generic("not a regular 0600 file of uid " + std::to_string(::geteuid()));
  BERTH_ASSIGN(std::string bytes, file::read_fd(fd.get(), kHeaderSize + BPF_MAXINSNS * sizeof(sock_filter)));
  BERTH_ASSIGN(Program prog, decode(key, bytes));
  // Refresh the mtime so that eviction drops the least recently used entries.
  (void)::futimens(fd.get(), nullptr);
  return prog;
}

struct Entry {
  std::string name;
  struct timespec mtime;
};

// Keeps at most max entries (dropping the least recently used, never `keep`) and removes
// temp files of writers that died. Races with other berth processes only cost a recompile.
void evict(int dirfd, size_t max, const std::string& keep) {
  int dup = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return;
  DIR* d = ::fdopendir(dup);
  if (!d) {
    ::close(dup);
    return;
  }
  std::vector<Entry> entries;
  time_t now = ::time(nullptr);
  while (struct dirent* de = ::readdir(d)) {
    std::string_view n = de->d_name;
    struct stat st {};
    if (::fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
    if (n.size() > 1 && n[0] == '.' && n.find(".tmp") != std::string_view::npos) {
      if (now - st.st_mtim.tv_sec > kStaleTempSeconds) ::unlinkat(dirfd, de->d_name, 0);
    } else if (n.size() > kSuffix.size() && n.substr(n.size() - kSuffix.size()) == kSuffix && n != keep) {
      entries.push_back({std::string(n), st.st_mtim});
    }
  }
  ::closedir(d);
  if (entries.size() + 1 <= max) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
    if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec < b.mtime.tv_nsec;
    return a.name < b.name;
  });
  size_t drop = entries.size() + 1 - max;
  for (size_t i = 0; i < drop; ++i) ::unlinkat(dirfd, entries[i].name.c_str(), 0);
}

}  // namespace

std::string key(const spec::Seccomp& profile) {
  spec::Seccomp filter_part = profile;
  filter_part.flags.clear();
  filter_part.listener_path.clear();
  filter_part.listener_metadata.clear();
  const scmp_version* v = seccomp_version();
  std::string lib = v ? std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->micro)
                      : "unknown";
  Sha256 h;
  // NUL-separated fields, so no two different inputs hash the same bytes.
  std::string head = std::string("berth-seccomp-cache") + '\0' + std::to_string(kFormatVersion) + '\0' + lib + '\0' +
                     std::to_string(seccomp_arch_native()) + '\0';
  h.update(head);
  h.update(json::serialize(filter_part));
  return Sha256::hex(h.finish());
}

uint32_t crc32c(std::string_view bytes) {
  uint32_t c = ~0u;
  for (unsigned char b : bytes) c = kCrcTable[(c ^ b) & 0xff] ^ (c >> 8);
  return ~c;
}

std::string encode(const std::string& key, const Program& program) {
  auto u32 = [](uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); };
  std::string out(kMagic);
  out += u32(kFormatVersion);
  out += u32(static_cast<uint32_t>(program.insns.size()));
  out += key_bytes(key);
  out += u32(crc32c(program.bytes()));
  out += u32(0);
  out.append(program.bytes());
  return out;
}

Result<Program> decode(const std::string& key, std::string_view bytes) {
  if (bytes.size() < kHeaderSize) return Error::generic("truncated header");
  if (bytes.substr(0, kMagic.size()) != kMagic) return Error::generic("bad magic");
  uint32_t version = 0, count = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&count, bytes.data() + 12, 4);
  if (version != kFormatVersion) return Error::generic("format version " + std::to_string(version));
  if (count == 0 || count > BPF_MAXINSNS) return Error::generic("bad instruction count " + std::to_string(count));
  std::string_view body = bytes.substr(kHeaderSize);
  if (body.size() != size_t{count} * sizeof(sock_filter))
    return Error::generic("length " + std::to_string(body.size()) + " does not match the header");
  if (bytes.substr(16, 32) != key_bytes(key)) return Error::generic("entry of another key");
  uint32_t crc = 0;
  std::memcpy(&crc, bytes.data() + 48, 4);
  if (crc != crc32c(body)) return Error::generic("checksum mismatch");
  Program prog;
  prog.insns.resize(count);
  std::memcpy(prog.insns.data(), body.data(), body.size());
  return prog;
}

Result<Program> compile_cached(const spec::Seccomp& profile, const std::string& dir, size_t max_entries) {
  std::string k = key(profile);
  auto dirfd = open_dir(dir);
  if (!dirfd) {
    log::debug("seccomp: cache miss " + k + " (cache not used: " + dirfd.error().message() + ")");
    return compile(profile);
  }
  std::string name = k + std::string(kSuffix);
  auto hit = read_entry(dirfd->get(), name, k);
  if (hit) {
    log::debug("seccomp: cache hit " + k);
    return hit;
  }
  log::debug("seccomp: cache miss " + k + " (" + hit.error().message() + ")");
  BERTH_ASSIGN(Program prog, compile(profile));
  // A cache that cannot be written only costs the next container a compile.
  if (auto st = file::write_atomic(dirfd->get(), name, encode(k, prog), 0600); !st)
    log::debug("seccomp: cache entry not stored: " + st.error().message());
  else
    evict(dirfd->get(), max_entries, name);
  return prog;
}

}  // namespace cache

Result<Program> compile_cached(const spec::Seccomp& profile, const std::string& cache_dir) {
  return cache::compile_cached(profile, cache_dir, cache::kMaxEntries);
}

}  // namespace berth::seccomp
