// linux.mountLabel / process.selinuxLabel: the SELinux probe, the context= mount option and
// the fscreate attribute (see selinux.h).
#include "linux/selinux.h"

#include <fcntl.h>
#include <linux/magic.h>

#include "util/file.h"
#include "util/strings.h"

namespace berth::linux {

namespace {

// Plain reads and splits, not iostreams: a stream here links libstdc++'s locale machinery
// (about 0.5 MB of text) whose static initializers run on every call
// (docs/performance.md, "Why the code is shaped so").
bool selinuxfs_mounted(const std::string& root) {
  auto mounts = file::read(root + "/proc/self/mounts");
  if (!mounts) return false;
  for (const std::string& line : str::split(*mounts, '\n')) {
    std::vector<std::string> f = str::split_nonempty(line, ' ');
    if (f.size() >= 3 && f[1] == "/sys/fs/selinux" && f[2] == "selinuxfs") return true;
  }
  return false;
}

}  // namespace

bool selinux_enabled(const std::string& root) {
  std::string base = root == "/" ? "" : root;
  if (!selinuxfs_mounted(base)) return false;
  auto enforce = file::read(base + "/sys/fs/selinux/enforce", 64);
  if (!enforce) return false;
  std::string_view mode = str::trim(*enforce);
  return mode == "0" || mode == "1";
}

Status check_label(const std::string& label, const std::string& field) {
  if (label.empty()) return Error::invalid_spec("config.json: " + field + ": empty label");
  for (unsigned char c : label)
    if (c == '"' || c < 0x20 || c == 0x7f)
      return Error::invalid_spec("config.json: " + field + ": a label may not hold quotes or control characters");
  return ok();
}

std::string context_option(const std::string& label) { return "context=\"" + label + "\""; }

Status set_fscreate_label(Sys& sys, const std::string& label) {
  const char* path = "/proc/thread-self/attr/fscreate";
  BERTH_ASSIGN(UniqueFd fd, sys.openat(AT_FDCWD, path, O_WRONLY | O_NOFOLLOW, 0).context("linux.mountLabel"));
  BERTH_ASSIGN(struct statfs fs, sys.fstatfs(fd.get()).context("linux.mountLabel"));
  if (fs.f_type != PROC_SUPER_MAGIC) return Error::generic(std::string("linux.mountLabel: ") + path + " is not on procfs");
  return sys.write_fd(fd.get(), label).context("linux.mountLabel: write " + std::string(path));
}

}  // namespace berth::linux
