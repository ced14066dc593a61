// Protecting the host binary (see exe_seal.h).
#include "linux/exe_seal.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/log.h"
#include "util/unique_fd.h"

namespace berth::linux {

namespace {

bool on_readonly_mount(int fd) {
  struct statvfs st;
  return fd >= 0 && ::fstatvfs(fd, &st) == 0 && (st.f_flag & ST_RDONLY);
}

}  // namespace

bool exe_is_sealed() {
  UniqueFd fd(::open("/proc/self/exe", O_PATH | O_CLOEXEC));
  return on_readonly_mount(fd.get());
}

// Whether to re-execute is the kernel's answer alone, never the caller's environment (a
// variable would let whoever starts berth switch the protection off). The loop is closed
// the same way: the clone is checked read-only before executing from it, so the new
// process finds its /proc/self/exe sealed and goes on.
void ensure_sealed_exe(char** argv) {
  if (exe_is_sealed()) return;
  UniqueFd tree(static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, "/proc/self/exe", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
  if (!tree) return;
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID;
  if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) return;
  if (!on_readonly_mount(tree.get())) return;
  log::debug("exe: re-executing from a read-only clone of the binary (install it on a read-only mount to skip this)");
  ::syscall(SYS_execveat, tree.get(), "", argv, ::environ, AT_EMPTY_PATH);
}

}  // namespace berth::linux
