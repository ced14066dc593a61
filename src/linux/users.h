// The container's /etc/passwd and /etc/group, read inside its root (never through NSS):
// HOME for a uid, and the supplementary groups of that user, as runc does.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "berth/result.h"

namespace berth::linux {

struct PasswdEntry {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
};

std::vector<PasswdEntry> parse_passwd(std::string_view text);
// Groups (gid) whose member list names `user`.
std::vector<gid_t> groups_of(std::string_view group_text, const std::string& user);
// For "name" or "uid[:gid]" strings (`exec --user`): resolves names through passwd text.
Result<std::pair<uid_t, gid_t>> parse_user_spec(const std::string& spec, std::string_view passwd_text);

}  // namespace berth::linux
