// Container rootfs inspection for the NVIDIA plan (see container_fs.h).
#include "devices/nvidia/container_fs.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "devices/nvidia/elf.h"
#include "devices/nvidia/require.h"
#include "devices/nvidia/rootdir.h"
#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

#if defined(__aarch64__)
constexpr const char* kTriplet = "aarch64-linux-gnu";
constexpr const char* kTriplet32 = "";
constexpr const char* kLoader = "ld-linux-aarch64.so.1";
constexpr const char* kMusl = "aarch64";
#else
constexpr const char* kTriplet = "x86_64-linux-gnu";
constexpr const char* kTriplet32 = "i386-linux-gnu";
constexpr const char* kLoader = "ld-linux-x86-64.so.2";
constexpr const char* kMusl = "x86_64";
#endif

bool is_version(const std::string& v) {
  if (v.empty() || v.find('.') == std::string::npos || v.front() == '.' || v.back() == '.') return false;
  for (char c : v)
    if (!(c >= '0' && c <= '9') && c != '.') return false;
  return true;
}

// The highest-versioned regular libcuda.so.<version> (symlinks are not followed: the
// SONAME link points at the real file, which is listed too).
std::optional<CompatLib> find_compat(const RootDir& root) {
  std::optional<CompatLib> best;
  CompatLib c;
  for (const auto& name : root.list(c.dir)) {
    if (!str::starts_with(name, "libcuda.so.")) continue;
    std::string v = name.substr(11);
    if (!is_version(v) || std::count(v.begin(), v.end(), '.') < 1) continue;
    auto fd = root.open_at(c.dir + "/" + name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (!fd || ::fstat(fd->get(), &st) < 0 || !S_ISREG(st.st_mode)) continue;
    if (best && compare_versions(best->version, v) >= 0) continue;
    auto note = read_elf_note(fd->get(), ".note.cuda.fwd_compatibility", "NVIDIA Corporation");
    CompatLib found = c;
    found.version = v;
    if (note) found.note = *note;
    best = found;
  }
  return best;
}

// The path with the image's symlinks followed inside the root: its longest existing
// prefix resolved, the missing rest appended as written.
std::string resolve_prefix(const RootDir& root, const std::string& path) {
  std::string head = path, tail;
  while (head.size() > 1) {
    if (auto r = root.resolve(head)) return (*r == "/" ? "" : *r) + tail;
    auto cut = head.rfind('/');
    tail = head.substr(cut) + tail;
    head = cut == 0 ? "/" : head.substr(0, cut);
  }
  return path;
}

}  // namespace

Result<ContainerFacts> inspect_container(const std::string& rootfs, const std::vector<std::string>& mounts) {
  BERTH_ASSIGN(RootDir root, RootDir::open(rootfs).context("inspect the container rootfs"));
  ContainerFacts f;
  if (root.exists("/etc/debian_version")) {
    f.lib_dir = std::string("/usr/lib/") + kTriplet;
    f.lib32_dir = *kTriplet32 ? std::string("/usr/lib/") + kTriplet32 : "/usr/lib32";
  } else {
    f.lib_dir = "/usr/lib64";
    f.lib32_dir = root.exists("/usr/lib32") ? "/usr/lib32" : "/usr/lib";
  }
  f.lib_dir_empty = root.list(f.lib_dir).empty();
  f.lib32_dir_empty = root.list(f.lib32_dir).empty();
  for (const char* d : {"/usr/bin", "/lib/firmware", "/var/run/nvidia-persistenced", "/var/run/nvidia-fabricmanager"})
    if (root.list(d).empty()) f.empty_own_dirs.insert(d);
  for (const auto& d : f.empty_own_dirs) f.resolved[d] = resolve_prefix(root, d);
  for (const auto& d : {f.lib_dir, f.lib32_dir}) f.resolved[d] = resolve_prefix(root, d);
  for (const auto& m : mounts) {
    f.spec_mounts.push_back(m);
    // The kernel filesystems every spec mounts are not resolved (a few openat2 each, on
    // every create): no library, firmware or socket directory is under them.
    bool kernel = str::starts_with(m, "/proc") || str::starts_with(m, "/dev") || str::starts_with(m, "/sys");
    if (!m.empty() && m[0] == '/' && !kernel) f.spec_mounts.push_back(resolve_prefix(root, m));
  }
  std::string musl = std::string("/lib/ld-musl-") + kMusl + ".so.1";
  const std::vector<std::string> loader_dirs = {"/lib64", "/lib", "/usr/lib64", "/usr/lib", std::string("/lib/") + kTriplet,
                                                std::string("/usr/lib/") + kTriplet};
  for (const auto& dir : loader_dirs)
    if (root.exists(dir + "/" + kLoader)) f.libc = Libc::kGlibc;
  if (f.libc == Libc::kNone && root.exists(musl)) {
    f.libc = Libc::kMusl;
    f.musl_path_file = std::string("/etc/ld-musl-") + kMusl + ".path";
    if (auto text = root.read(f.musl_path_file, 1u << 16)) f.musl_path_content = *text;
  }
  f.has_ld_so_conf = root.exists("/etc/ld.so.conf");
  f.compat = find_compat(root);
  return f;
}

}  // namespace berth::devices::nvidia
