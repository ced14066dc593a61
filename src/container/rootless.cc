// Rootless checks at create (see rootless.h): linux.namespaces (user), linux.uidMappings,
// linux.gidMappings.
#include "container/rootless.h"

#include <algorithm>

namespace berth::container {

Result<UserNsPlan> plan_user_ns(const spec::Spec& spec, const linux::MapCaller& caller) {
  UserNsPlan out;
  static const spec::Linux kNone;
  const spec::Linux& l = spec.linux ? *spec.linux : kNone;
  auto user = std::find_if(l.namespaces.begin(), l.namespaces.end(), [](const auto& n) { return n.type == "user"; });
  out.unprivileged = !caller.privileged;
  // Without one, an unprivileged clone of any other namespace fails with a bare EPERM; runc
  // refuses such a config up front, with these texts.
  if (out.unprivileged && user == l.namespaces.end())
    return Error::invalid_spec("rootless container requires user namespaces");
  if (user == l.namespaces.end() || !user->path.empty()) return out;  // joined: mapped already
  out.creates = true;
  if (out.unprivileged && l.uid_mappings.empty())
    return Error::invalid_spec("rootless containers requires at least one UID mapping");
  if (out.unprivileged && l.gid_mappings.empty())
    return Error::invalid_spec("rootless containers requires at least one GID mapping");
  BERTH_ASSIGN(out.maps, linux::plan_id_maps(l.uid_mappings, l.gid_mappings, caller));
  return out;
}

}  // namespace berth::container
