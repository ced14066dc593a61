// The ld.so.cache cache's store in the state root: entries read (hit), written after a run
// (fill), bounded (see ldconfig_cache.h).
#include "devices/nvidia/ldconfig_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "devices/nvidia/rootdir.h"
#include "util/file.h"
#include "util/log.h"
#include "util/sha256.h"

namespace berth::devices::nvidia {
namespace {

constexpr std::string_view kMagic = "berth-ldconfig-cache 1\n";
constexpr size_t kMaxPayload = 16u << 20;  // glibc's own cache of a big distribution is < 1 MiB
constexpr size_t kMaxEntries = 64;         // one per image and driver: the oldest go first

// The entries decide which libraries a container loads: trusted only when no one but this
// user can have written the directory or the file.
Result<UniqueFd> open_dir(const std::string& dir, bool create) {
  if (create && ::mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST) return Error::sys(errno, "mkdir " + dir);
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open " + dir);
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) return Error::sys(errno, "stat " + dir);
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    return Error::generic(dir + " is not a 0700 directory of uid " + std::to_string(::geteuid()));
  return fd;
}

Result<std::string> read_entry(int dirfd, const std::string& digest) {
  UniqueFd fd(::openat(dirfd, digest.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "open");
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) return Error::sys(errno, "stat");
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    return Error::generic("not a regular 0600 file of uid " + std::to_string(::geteuid()));
  BERTH_ASSIGN(std::string bytes, file::read_fd(fd.get(), kMaxPayload + 256));
  (void)::futimens(fd.get(), nullptr);  // least recently used goes first
  return decode_ldcache_entry(digest, bytes);
}

// Keeps the directory under kMaxEntries by removing the least recently used entries.
void evict(int dirfd) {
  int dup = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  DIR* d = dup < 0 ? nullptr : ::fdopendir(dup);
  if (!d) {
    if (dup >= 0) ::close(dup);
    return;
  }
  std::vector<std::pair<timespec, std::string>> entries;
  while (struct dirent* e = ::readdir(d)) {
    struct stat st;
    if (e->d_name[0] != '.' && ::fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
      entries.push_back({st.st_mtim, e->d_name});
  }
  ::closedir(d);
  if (entries.size() < kMaxEntries) return;
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.first.tv_sec != b.first.tv_sec ? a.first.tv_sec < b.first.tv_sec : a.first.tv_nsec < b.first.tv_nsec;
  });
  for (size_t i = 0; i + kMaxEntries <= entries.size(); ++i) (void)::unlinkat(dirfd, entries[i].second.c_str(), 0);
}

Result<std::string> read_container_cache(const std::string& rootfs) {
  BERTH_ASSIGN(nvidia::RootDir root, nvidia::RootDir::open(rootfs));
  // Not following a symlink at the end: the cache is what ldconfig wrote (it replaces a
  // symlink by renaming), anything else is not stored.
  BERTH_ASSIGN(UniqueFd fd, root.open_at("/etc/ld.so.cache", O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) return Error::sys(errno, "stat /etc/ld.so.cache");
  if (!S_ISREG(st.st_mode)) return Error::generic("/etc/ld.so.cache is not a regular file");
  return file::read_fd(fd.get(), kMaxPayload);
}

}  // namespace

std::string encode_ldcache_entry(const std::string& digest, std::string_view payload) {
  return std::string(kMagic) + digest + "\n" + Sha256::hex(Sha256::digest(payload)) + "\n" + std::string(payload);
}

Result<std::string> decode_ldcache_entry(const std::string& digest, std::string_view bytes) {
  if (bytes.substr(0, kMagic.size()) != kMagic) return Error::generic("not a berth ldconfig cache entry");
  bytes.remove_prefix(kMagic.size());
  if (bytes.size() < 130 || bytes.substr(0, 64) != digest || bytes[64] != '\n' || bytes[129] != '\n')
    return Error::generic("the entry is for another key");
  std::string_view payload = bytes.substr(130);
  if (Sha256::hex(Sha256::digest(payload)) != bytes.substr(65, 64)) return Error::generic("the payload does not match its hash");
  return std::string(payload);
}

std::optional<LdconfigFill> use_ldconfig_cache(Edits& e, const spec::Spec& spec, const std::string& rootfs,
                                               const std::string& state_root) {
  if (e.ldconfig.empty() || state_root.empty()) return std::nullopt;
  auto key = ldconfig_key(rootfs, e, spec.mounts);
  if (!key) {
    log::debug("ldconfig cache: not used: " + key.error().message());
    return std::nullopt;
  }
  std::string dir = ldconfig_cache_dir(state_root);
  auto fd = open_dir(dir, false);
  auto payload = fd ? read_entry(fd->get(), key->digest) : Result<std::string>(std::move(fd).error());
  Status valid = payload ? check_ldcache_value(*payload, *key) : Status(std::move(payload).error());
  if (valid) {
    log::debug("ldconfig cache: hit " + key->digest + ": /etc/ld.so.cache written without running ldconfig");
    e.ldconfig.clear();
    e.files.push_back({"/etc/ld.so.cache", std::move(*payload), 0644, /*replace=*/true});
    return std::nullopt;
  }
  log::debug("ldconfig cache: miss " + key->digest + " (" + valid.error().message() + ")");
  return LdconfigFill{state_root, rootfs, spec.mounts, e, key->digest};
}

void fill_ldconfig_cache(const LdconfigFill& f) {
  auto fail = [&](const std::string& why) { log::debug("ldconfig cache: not filled: " + why); };
  auto key = ldconfig_key(f.rootfs, f.edits, f.mounts);
  if (!key) return fail(key.error().message());
  // ldconfig made links in the image, or someone changed it meanwhile: the result belongs
  // to neither key.
  if (key->digest != f.digest) return fail("what ldconfig reads changed during create");
  auto payload = read_container_cache(f.rootfs);
  if (!payload) return fail(payload.error().message());
  if (auto st = check_ldcache_value(*payload, *key); !st) return fail(st.error().message());
  auto fd = open_dir(ldconfig_cache_dir(f.state_root), true);
  if (!fd) return fail(fd.error().message());
  evict(fd->get());
  if (auto st = file::write_atomic(fd->get(), f.digest, encode_ldcache_entry(f.digest, *payload), 0600); !st)
    return fail(st.error().message());
  log::debug("ldconfig cache: stored " + f.digest);
}

}  // namespace berth::devices::nvidia
