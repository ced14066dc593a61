// Protecting the host binary (see exe_seal.h).
#include "linux/exe_seal.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "util/log.h"
#include "util/unique_fd.h"

namespace berth::linux {

bool exe_is_sealed() {
  UniqueFd fd(::open("/proc/self/exe", O_PATH | O_CLOEXEC));
  struct statvfs st;
  return fd && ::fstatvfs(fd.get(), &st) == 0 && (st.f_flag & ST_RDONLY);
}

void ensure_sealed_exe(char** argv) {
  if (exe_is_sealed()) return;
  if (std::getenv("_BERTH_SEALED")) return;  // never loop if the clone is not read-only
  UniqueFd tree(static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, "/proc/self/exe", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
  if (!tree) return;
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID;
  if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) return;
  ::setenv("_BERTH_SEALED", "1", 1);
  log::debug("exe: re-executing from a read-only clone of the binary (install it on a read-only mount to skip this)");
  ::syscall(SYS_execveat, tree.get(), "", argv, ::environ, AT_EMPTY_PATH);
  ::unsetenv("_BERTH_SEALED");
}

}  // namespace berth::linux
