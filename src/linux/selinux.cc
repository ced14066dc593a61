// linux.mountLabel / process.selinuxLabel: the SELinux probe, the context= mount option and
// the fscreate attribute (see selinux.h).
#include "linux/selinux.h"

#include <fcntl.h>
#include <linux/magic.h>

#include <fstream>
#include <sstream>

namespace berth::linux {

namespace {

bool selinuxfs_mounted(const std::string& root) {
  std::ifstream in(root + "/proc/self/mounts");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string source, target, type;
    if ((f >> source >> target >> type) && target == "/sys/fs/selinux" && type == "selinuxfs") return true;
  }
  return false;
}

}  // namespace

bool selinux_enabled(const std::string& root) {
  std::string base = root == "/" ? "" : root;
  if (!selinuxfs_mounted(base)) return false;
  std::ifstream enforce(base + "/sys/fs/selinux/enforce");
  std::string mode;
  return enforce && (enforce >> mode) && (mode == "0" || mode == "1");
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
