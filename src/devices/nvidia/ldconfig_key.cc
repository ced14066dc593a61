// The key of the ld.so.cache cache: everything the in-container ldconfig run reads, taken
// from the rootfs with RESOLVE_IN_ROOT (see ldconfig_cache.h); and the check of a value
// against that key.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "devices/nvidia/ldconfig_cache.h"
#include "devices/nvidia/ldcache.h"
#include "devices/nvidia/rootdir.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

#if defined(__aarch64__)
constexpr const char* kTriplet = "aarch64-linux-gnu";
const std::set<std::string> kHwcapDirs = {"glibc-hwcaps", "tls", "aarch64", "asimd", "atomics"};
#else
constexpr const char* kTriplet = "x86_64-linux-gnu";
// glibc-hwcaps/<level>, and the legacy hwcap and platform subdirectories the glibc 2.36
// ldconfig still descends into (removed in 2.37); other subdirectories are not scanned.
const std::set<std::string> kHwcapDirs = {"glibc-hwcaps", "tls",  "x86_64", "haswell", "xeon_phi", "avx512_1",
                                          "i386",         "i486", "i586",   "i686",    "sse2"};
#endif
constexpr size_t kMaxConf = 1u << 20;
constexpr size_t kMaxNames = 1u << 16;

std::string normalize(const std::string& p) {
  std::string out;
  for (const auto& part : str::split(p, '/'))
    if (!part.empty() && part != ".") out += "/" + part;
  return out.empty() ? "/" : out;
}

std::string parent_of(const std::string& p) { return p.substr(0, std::max<size_t>(p.rfind('/'), 1)); }
std::string base_of(const std::string& p) { return p.substr(p.rfind('/') + 1); }

// a covers b or b covers a: a mount at either hides or replaces what the key describes.
bool overlaps(const std::string& a, const std::string& b) {
  auto under = [](const std::string& x, const std::string& y) { return x == y || (str::starts_with(x, y) && (y == "/" || x[y.size()] == '/')); };
  return under(a, b) || under(b, a);
}

std::string hex_of(std::string_view s) { return Sha256::hex(Sha256::digest(s)).substr(0, 32); }

// An image file's identity. The device is left out on purpose: every container gets a fresh
// overlay mount (a new st_dev) over the same image layers, whose inode numbers stay.
std::string identity(const struct stat& st) {
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_mode);
}

// A host file's identity (a library berth binds in): the device too.
std::string host_identity(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "missing";
  return std::to_string(st.st_dev) + ":" + identity(st);
}

class KeyBuilder {
 public:
  KeyBuilder(const nvidia::RootDir& root, const Edits& e) : root_(root), e_(e) {}

  Result<LdconfigKey> build(const std::vector<spec::Mount>& mounts) {
    if (e_.ldconfig.size() != 1) return Error::generic(std::to_string(e_.ldconfig.size()) + " ldconfig runs");
    const Ldconfig& run = e_.ldconfig[0];
    line(std::string("berth-ldconfig-key 1 ") + kTriplet);
    line("ldconfig " + run.host_binary + " " + host_identity(run.host_binary) + " " + str::join(run.args, " "));
    BERTH_TRY(edit_names());
    BERTH_TRY(conf("/etc/ld.so.conf", true));
    for (const char* d : {"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib32", "/usr/lib32", "/libx32", "/usr/libx32"})
      add_dir(d);
    add_dir(std::string("/lib/") + kTriplet);
    add_dir(std::string("/usr/lib/") + kTriplet);
    for (size_t i = 0; i < run.args.size(); ++i) {
      if (run.args[i] == "-f" || run.args[i] == "-C") ++i;
      else if (!run.args[i].empty() && run.args[i][0] == '/') add_dir(run.args[i]);
      else return Error::generic("ldconfig argument " + run.args[i]);
    }
    for (size_t i = 0; i < dirs_.size(); ++i) BERTH_TRY(scan(dirs_[i], 0));
    struct stat st;
    line("aux-cache " + (root_.stat("/var/cache/ldconfig/aux-cache", &st) ? identity(st) : std::string("missing")));
    for (const auto& m : mounts)
      for (const auto& g : guarded_)
        if (overlaps(normalize(m.destination), g)) return Error::generic("the mount at " + m.destination + " covers " + g);
    for (const auto& m : e_.mounts)
      for (const auto& g : guarded_)
        if (str::starts_with(g, normalize(m.container_path)) && overlaps(normalize(m.container_path), g))
          return Error::generic("the device mount at " + m.container_path + " covers " + g);
    key_.digest = Sha256::hex(Sha256::digest(key_.text));
    return std::move(key_);
  }

 private:
  void line(const std::string& s) { key_.text += s + "\n"; }

  std::string resolved(const std::string& dir) {
    auto [it, added] = resolved_.emplace(dir, "");
    if (added) {
      auto r = root_.resolve(dir);
      it->second = r ? normalize(*r) : normalize(dir);
    }
    return it->second;
  }

  // Names berth's own edits put into a directory: described by the edit (the host file's
  // identity, the link target, the content), never by what is on disk, which the init
  // makes (mount points) or rewrites on every create.
  Status edit_names() {
    auto add = [&](const std::string& path, const std::string& what) {
      std::string p = normalize(path);
      edits_[resolved(parent_of(p))][base_of(p)] = what;
      // The directories the init makes on the way (/lib/firmware for the GSP firmware):
      // the same line whether the first create has made them yet or not. ldconfig does
      // not look into them unless they are hwcap directories.
      for (p = parent_of(p); p != "/" && !kHwcapDirs.count(base_of(p)); p = parent_of(p))
        edits_[resolved(parent_of(p))].emplace(base_of(p), "directory of edits");
    };
    for (const auto& m : e_.mounts) add(m.container_path, "mount " + host_identity(m.host_path));
    for (const auto& l : e_.symlinks) add(l.container_path, "link " + l.target);
    for (const auto& f : e_.files) add(f.container_path, "file " + hex_of(f.content));
    return ok();
  }

  const std::string* edit_content(const std::string& path) {
    for (const auto& f : e_.files)
      if (normalize(f.container_path) == path) return &f.content;
    return nullptr;
  }

  Result<std::optional<std::string>> read_conf(const std::string& path) {
    guarded_.insert(path);
    if (const std::string* c = edit_content(path)) return std::optional<std::string>(*c);
    auto text = root_.read(path, kMaxConf);
    if (!text && text.error().err() == ENOENT) return std::optional<std::string>();
    if (!text) return std::move(text).error().context(path);
    return std::optional<std::string>(std::move(*text));
  }

  // ldconfig's configuration syntax: directories, "include <glob>", "hwcap ..." (refused).
  Status conf(const std::string& path, bool top) {
    BERTH_ASSIGN(auto text, read_conf(path));
    line("conf " + path + " " + (text ? hex_of(*text) : std::string("missing")));
    if (!text) return ok();
    for (auto raw : str::split(*text, '\n')) {
      std::string l(str::trim(raw.substr(0, raw.find('#'))));
      for (char& c : l)
        if (c == '\t' || c == ',' || c == ':') c = ' ';
      auto words = str::split_nonempty(l, ' ');
      if (words.empty()) continue;
      if (words[0] == "include") {
        for (size_t i = 1; i < words.size(); ++i) {
          std::string pattern = words[i][0] == '/' ? words[i] : "/etc/" + words[i];
          if (!top || pattern != "/etc/ld.so.conf.d/*.conf") return Error::generic(path + ": include " + words[i]);
          BERTH_TRY(dropins());
        }
        continue;
      }
      if (words[0] == "hwcap") return Error::generic(path + ": hwcap");
      for (const auto& w : words) {
        if (w[0] != '/') return Error::generic(path + ": relative directory " + w);
        add_dir(w.substr(0, w.find('=')));
      }
    }
    return ok();
  }

  Status dropins() {
    const std::string dir = "/etc/ld.so.conf.d";
    guarded_.insert(dir);
    std::set<std::string> names;
    for (const auto& n : root_.list(dir)) names.insert(n);
    for (const auto& f : e_.files)
      if (parent_of(normalize(f.container_path)) == dir) names.insert(base_of(normalize(f.container_path)));
    for (const auto& n : names)  // glob order; hidden names do not match "*.conf"
      if (n[0] != '.' && str::ends_with(n, ".conf") && n.size() > 5) BERTH_TRY(conf(dir + "/" + n, false));
    return ok();
  }

  void add_dir(const std::string& d) {
    std::string n = normalize(d);
    if (std::find(dirs_.begin(), dirs_.end(), n) == dirs_.end()) dirs_.push_back(n);
  }

  // One scanned directory: every entry, in name order.
  Status scan(const std::string& dir, int depth) {
    guarded_.insert(dir);
    auto fd = root_.open_at(dir, O_RDONLY | O_DIRECTORY);
    if (!fd && (fd.error().err() == ENOENT || fd.error().err() == ENOTDIR)) {
      // The init makes a missing library directory for berth's binds and links: described
      // as it will be then, so the key taken after the run is the same.
      auto own = edits_.find(dir);
      if (own == edits_.end()) {
        line("dir " + dir + " missing");
        return ok();
      }
      line("dir " + dir + " = " + dir);
      for (const auto& [n, what] : own->second) {
        line("  " + n + " " + what);
        key_.names[dir].insert(n);
      }
      return ok();
    }
    if (!fd) return std::move(fd).error().context(dir);
    std::string real = resolved(dir);
    guarded_.insert(real);
    // Another name of a directory already scanned (/lib/<triplet> on a merged-/usr image):
    // ldconfig skips it too (same device and inode); its entries may be recorded under
    // either name.
    if (auto seen = key_.names.find(real); seen != key_.names.end() && scanned_.count(real)) {
      line("dir " + dir + " = " + real + " (scanned)");
      auto copy = seen->second;
      key_.names[dir].insert(copy.begin(), copy.end());
      return ok();
    }
    scanned_.insert(real);
    line("dir " + dir + " = " + real);
    std::set<std::string> names;
    int dup = ::fcntl(fd->get(), F_DUPFD_CLOEXEC, 0);
    DIR* d = dup < 0 ? nullptr : ::fdopendir(dup);
    if (!d) {
      if (dup >= 0) ::close(dup);
      return Error::sys(errno, "read " + dir);
    }
    while (struct dirent* ent = ::readdir(d)) {
      std::string n = ent->d_name;
      if (n != "." && n != "..") names.insert(n);
      if (names.size() > kMaxNames) break;
    }
    ::closedir(d);
    if (names.size() > kMaxNames) return Error::generic(dir + ": too many entries");
    const auto& own = edits_[real];
    for (const auto& [n, what] : own) names.insert(n);
    for (const auto& n : names) BERTH_TRY(entry(fd->get(), dir, real, n, own, names, depth));
    key_.names[dir].insert(names.begin(), names.end());
    key_.names[real].insert(names.begin(), names.end());
    return ok();
  }

  Status entry(int dirfd, const std::string& dir, const std::string& real, const std::string& n,
               const std::map<std::string, std::string>& own, const std::set<std::string>& names, int depth) {
    if (auto it = own.find(n); it != own.end()) {
      line("  " + n + " " + it->second);
      return ok();
    }
    struct stat st;
    if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Error::sys(errno, "stat " + dir + "/" + n);
    if (S_ISLNK(st.st_mode)) {
      char buf[PATH_MAX];
      ssize_t len = ::readlinkat(dirfd, n.c_str(), buf, sizeof buf);
      if (len < 0) return Error::sys(errno, "readlink " + dir + "/" + n);
      std::string to(buf, static_cast<size_t>(len));
      // A link to a name in the same directory (the SONAME links of nearly every library):
      // that name's own line describes what it reaches.
      if (to.find('/') == std::string::npos && !kHwcapDirs.count(n) && names.count(to)) {
        line("  " + n + " l " + str::go_quote(to));
        return ok();
      }
      struct stat target;
      bool there = root_.stat(real + "/" + n, &target);
      line("  " + n + " l " + identity(st) + " " + str::go_quote(to) + " " +
           (there ? std::string(S_ISDIR(target.st_mode) ? "d " : "") + identity(target) : std::string("dangling")));
      if (there && S_ISDIR(target.st_mode) && kHwcapDirs.count(n) && depth < 3) return scan(dir + "/" + n, depth + 1);
      return ok();
    }
    if (S_ISDIR(st.st_mode)) {
      line("  " + n + " d");
      if (kHwcapDirs.count(n) || depth > 0) {
        if (depth >= 3) return Error::generic(dir + "/" + n + ": hwcap directories nested too deep");
        return scan(dir + "/" + n, depth + 1);
      }
      return ok();
    }
    line("  " + n + " " + identity(st));
    return ok();
  }

  const nvidia::RootDir& root_;
  const Edits& e_;
  LdconfigKey key_;
  std::map<std::string, std::map<std::string, std::string>> edits_;  // resolved dir → name → edit
  std::vector<std::string> dirs_;
  std::map<std::string, std::string> resolved_;  // in-root path → resolved in the root
  std::set<std::string> scanned_;                 // resolved directories listed already
  std::set<std::string> guarded_ = {"/etc/ld.so.cache", "/var/cache/ldconfig"};
};

}  // namespace

Result<LdconfigKey> ldconfig_key(const std::string& rootfs, const Edits& e, const std::vector<spec::Mount>& mounts) {
  BERTH_ASSIGN(nvidia::RootDir root, nvidia::RootDir::open(rootfs));
  KeyBuilder b(root, e);
  return b.build(mounts);
}

Status check_ldcache_value(std::string_view bytes, const LdconfigKey& key) {
  BERTH_ASSIGN(auto entries, nvidia::parse_ldcache(bytes));
  for (const auto& en : entries) {
    std::string dir = en.value.empty() || en.value[0] != '/' ? "" : parent_of(en.value);
    auto it = key.names.find(dir);
    if (base_of(en.value) != en.key || it == key.names.end() || !it->second.count(en.key))
      return Error::generic("entry " + str::go_quote(en.key) + " => " + str::go_quote(en.value) +
                            " is not that name in a scanned directory");
  }
  return ok();
}

}  // namespace berth::devices::nvidia
