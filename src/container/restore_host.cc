// restore's host side (--empty-ns network, mounts[] mount points, the criu-root bind): the
// calls that change the host around CRIU, on the seam.
#include "container/restore_host.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "linux/paths.h"
#include "util/strings.h"

namespace berth::container {

Result<std::string> bind_root(linux::Sys& sys, int state_dirfd, const std::string& state_dir,
                              const std::string& rootfs, Rollback& undo) {
  std::string at = state_dir + "/criu-root";
  BERTH_TRY(sys.mkdirat(state_dirfd, "criu-root", 0755).context("mkdir " + at));
  undo.push([&sys, state_dirfd] { (void)sys.unlinkat(state_dirfd, "criu-root", AT_REMOVEDIR); });
  BERTH_TRY(sys.mount(rootfs, at, "", MS_BIND | MS_REC, "").context("bind " + rootfs + " for criu"));
  return at;
}

void unbind_root(linux::Sys& sys, int state_dirfd, const std::string& at) {
  (void)sys.umount2(at, MNT_DETACH);
  (void)sys.unlinkat(state_dirfd, "criu-root", AT_REMOVEDIR);
}

namespace {

bool is_bind(const spec::Mount& m) {
  bool bind = m.type == "bind";
  for (const auto& o : m.options) bind = bind || o == "bind" || o == "rbind";
  return bind;
}

bool under_any(const std::string& dest, const std::vector<std::string>& dirs) {
  for (const auto& t : dirs)
    if (str::starts_with(dest, t == "/" ? t : t + "/")) return true;
  return false;
}

}  // namespace

// As runc: a bind's mount point as its source, a file or a directory; every other mount's a
// directory. Not under a tmpfs mount (CRIU restores the tmpfs with its content). A rootfs
// other than the checkpointed one (podman's restore --import) lacks those the create had
// made: /proc, /sys.
Status prepare_mountpoints(linux::Sys& sys, const spec::Spec& spec, const std::string& rootfs,
                           const std::string& bundle) {
  std::vector<std::string> tmpfs;
  for (const auto& m : spec.mounts)
    if (m.type == "tmpfs") tmpfs.push_back(linux::clean_path("/" + m.destination));
  BERTH_ASSIGN(UniqueFd rootfd, sys.openat(AT_FDCWD, rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC, 0)
                                    .context("open rootfs " + rootfs));
  for (const auto& m : spec.mounts) {
    std::string dest = linux::clean_path("/" + m.destination);
    if (under_any(dest, tmpfs)) continue;
    std::string src = m.source.empty() || m.source[0] == '/' ? m.source : bundle + "/" + m.source;
    bool file = false;
    if (is_bind(m))
      if (auto st = sys.fstatat(AT_FDCWD, src, 0)) file = !S_ISDIR(st->st_mode);
    auto leaf = file ? linux::Leaf::kFile : linux::Leaf::kDirectory;
    BERTH_TRY(linux::make_in_root(sys, rootfd.get(), dest, leaf).context("mount point " + dest));
  }
  return ok();
}

Result<UniqueFd> new_empty_netns(linux::Sys& sys) {
  const std::string self = "/proc/thread-self/ns/net";
  BERTH_ASSIGN(UniqueFd home, sys.openat(AT_FDCWD, self, O_RDONLY | O_CLOEXEC, 0).context("open " + self));
  BERTH_TRY(sys.unshare(CLONE_NEWNET).context("--empty-ns network: unshare a network namespace"));
  auto ns = sys.openat(AT_FDCWD, self, O_RDONLY | O_CLOEXEC, 0);
  // Back home whatever came of the open: our thread must not stay in the empty namespace.
  BERTH_TRY(sys.setns(home.get(), CLONE_NEWNET).context("--empty-ns network: return to our network namespace"));
  if (!ns) return std::move(ns).error().context("--empty-ns network: open the new namespace");
  return std::move(*ns);
}

}  // namespace berth::container
