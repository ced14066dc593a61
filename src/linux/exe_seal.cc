// Protecting the host binary (see exe_seal.h).
#include "linux/exe_seal.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

#include "util/caller_fds.h"
#include "util/log.h"
#include "util/unique_fd.h"

namespace berth::linux {

namespace {

bool on_readonly_mount(int fd) {
  struct statvfs st;
  return fd >= 0 && ::fstatvfs(fd, &st) == 0 && (st.f_flag & ST_RDONLY);
}

// A detached clone has no path: /proc/self/exe reads "/" (the clone's own root), which is
// not the file. An attached binary's path leads back to the same inode.
bool reachable_by_path(int fd) {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  struct stat by_path, by_fd;
  return ::stat(path, &by_path) == 0 && ::fstat(fd, &by_fd) == 0 && by_path.st_dev == by_fd.st_dev &&
         by_path.st_ino == by_fd.st_ino;
}

}  // namespace

ExeSeal exe_seal() {
  UniqueFd fd(::open("/proc/self/exe", O_PATH | O_CLOEXEC));
  if (!on_readonly_mount(fd.get())) return ExeSeal::kWritable;
  return reachable_by_path(fd.get()) ? ExeSeal::kSealed : ExeSeal::kClone;
}

// Whether to re-execute is the kernel's answer alone, never the caller's environment (a
// variable would let whoever starts berth switch the protection off). The loop is closed
// the same way: the clone is checked read-only before executing from it, so the new
// process finds its /proc/self/exe sealed and goes on.
void ensure_sealed_exe(char** argv) {
  // The hot path (an installed, sealed binary) costs one open and one fstatvfs; telling a
  // seal from a clone (a readlink and two stats) only matters for the --debug line.
  if (!log::debug_enabled()) {
    UniqueFd self(::open("/proc/self/exe", O_PATH | O_CLOEXEC));
    if (on_readonly_mount(self.get())) return;
  }
  switch (exe_seal()) {
    case ExeSeal::kSealed:
      log::debug("exe: sealed: the binary is on a read-only mount, no re-exec");
      return;
    case ExeSeal::kClone:
      log::debug("exe: running from a read-only clone of the binary (not sealed)");
      return;
    case ExeSeal::kWritable: break;
  }
  UniqueFd tree(static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, "/proc/self/exe", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID;
  if (!tree || ::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) < 0 ||
      !on_readonly_mount(tree.get())) {
    log::debug("exe: not sealed, and no read-only clone could be made: the init's payload checks remain");
    return;
  }
  log::debug("exe: not sealed: re-executing from a read-only clone of the binary (install it on a read-only mount to skip this)");
  // The new process takes its own record of the caller's fds: it must inherit those and
  // nothing of ours (everything we open is close-on-exec already; this makes sure).
  caller_fds::cloexec_all_but_passed();
  ::syscall(SYS_execveat, tree.get(), "", argv, ::environ, AT_EMPTY_PATH);
}

}  // namespace berth::linux
