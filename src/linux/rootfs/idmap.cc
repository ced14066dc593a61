// Idmapped binds prepared by the runtime (see idmap.h): mounts[].uidMappings,
// mounts[].gidMappings, options idmap and ridmap; and bind sources the runtime opens for an
// init in a user namespace (mounts[].source of binds).
#include "linux/rootfs/idmap.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>

#include <map>

#include "linux/userns.h"

namespace berth::linux::rootfs {

Status prepare_idmapped_mounts(Sys& sys, RootfsPlan& plan) {
  std::map<std::string, UniqueFd> namespaces;  // "uid_map|gid_map" → user namespace
  for (size_t i = 0; i < plan.mounts.size(); ++i) {
    MountStep& m = plan.mounts[i];
    if (!m.idmap || m.prepared) continue;
    std::string uids = format_id_map(m.uid_mappings), gids = format_id_map(m.gid_mappings);
    std::string key = uids + "|" + gids;
    auto it = namespaces.find(key);
    std::string what = "idmapped mount " + m.destination;
    if (it == namespaces.end()) {
      auto ns = sys.make_userns(uids, gids);
      if (!ns) return std::move(ns).error().context(what);
      it = namespaces.emplace(key, std::move(*ns)).first;
    }
    unsigned tree_flags = OPEN_TREE_CLONE | (m.opts.flags & MS_REC ? AT_RECURSIVE : 0);
    auto tree = sys.open_tree(AT_FDCWD, m.source, tree_flags);
    if (!tree) return std::move(tree).error().context(what);
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_IDMAP;
    attr.userns_fd = static_cast<uint64_t>(it->second.get());
    unsigned at = AT_EMPTY_PATH | (m.opts.idmap_recursive ? AT_RECURSIVE : 0);
    BERTH_TRY(sys.mount_setattr(tree->get(), "", at, attr).context(what + ": idmap " + m.source));
    m.prepared = std::make_shared<UniqueFd>(std::move(*tree));
  }
  return ok();
}

std::vector<size_t> runtime_opened_binds(const RootfsPlan& plan) {
  std::vector<size_t> out;
  for (size_t i = 0; i < plan.mounts.size(); ++i) {
    const MountStep& m = plan.mounts[i];
    if (m.kind == MountKind::kBind && !(m.opts.flags & MS_REMOUNT) && !m.idmap && !m.prepared) out.push_back(i);
  }
  return out;
}

Result<UniqueFd> open_bind_source(Sys& sys, int init_root, const RootfsPlan& plan, size_t i) {
  if (i >= plan.mounts.size()) return Error::generic("sync: bind source index out of range");
  // RESOLVE_IN_ROOT: an absolute symlink on the way would otherwise leave for our own
  // mount namespace, whose mounts the init cannot clone. It also refuses magic links
  // (/proc/<pid>/ns/*): the init binds those itself.
  return sys.openat2(init_root, plan.mounts[i].source, O_PATH, 0, RESOLVE_IN_ROOT);
}

Status adopt_bind_source(Sys& sys, RootfsPlan& plan, size_t i, int src) {
  if (i >= plan.mounts.size() || plan.mounts[i].kind != MountKind::kBind)
    return Error::generic("sync: bind source index out of range");
  MountStep& m = plan.mounts[i];
  unsigned flags = OPEN_TREE_CLONE | AT_EMPTY_PATH | (m.opts.flags & MS_REC ? AT_RECURSIVE : 0);
  auto tree = sys.open_tree(src, "", flags);
  if (!tree) return std::move(tree).error().context("bind mount " + m.source + " on " + m.destination);
  m.prepared = std::make_shared<UniqueFd>(std::move(*tree));
  return ok();
}

std::vector<int> prepared_fds(const RootfsPlan& plan) {
  std::vector<int> out;
  for (const auto& m : plan.mounts)
    if (m.prepared && m.prepared->valid()) out.push_back(m.prepared->get());
  return out;
}

}  // namespace berth::linux::rootfs
