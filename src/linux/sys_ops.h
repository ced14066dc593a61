// The compound operations of LinuxSys (see sys.h): a directory copy for tmpcopyup, a user
// namespace from id maps for idmapped mounts, a host program run inside the container.
// Each is one step for the caller and one line in a test log, but several system calls.
#pragma once

#include <string>
#include <vector>

#include "berth/result.h"
#include "util/unique_fd.h"

namespace berth::linux::ops {

Status copy_tree(int from_dirfd, int to_dirfd);
Result<UniqueFd> make_userns(const std::string& uid_map, const std::string& gid_map);
Status run_program(int fd, const std::vector<std::string>& argv);

}  // namespace berth::linux::ops
