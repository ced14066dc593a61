// linux.uidMappings / linux.gidMappings: written by the parent into /proc/<pid>/{uid,gid}_map
// of a child that created a user namespace and waits for it.
#pragma once

#include <sys/types.h>

#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::linux {

std::string format_id_map(const std::vector<spec::IdMapping>& maps);
// deny_setgroups: needed when the writer lacks CAP_SETGID over the parent namespace
// (rootless); root keeps setgroups available, as runc does.
Status write_id_maps(pid_t pid, const std::vector<spec::IdMapping>& uids, const std::vector<spec::IdMapping>& gids,
                     bool deny_setgroups);
// A container id mapped to the host, or -1.
int64_t map_to_host(const std::vector<spec::IdMapping>& maps, uint32_t id);

}  // namespace berth::linux
