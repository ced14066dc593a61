// /etc/passwd and /etc/group parsing (see users.h).
#include "linux/users.h"

#include "util/strings.h"

namespace berth::linux {

std::vector<PasswdEntry> parse_passwd(std::string_view text) {
  std::vector<PasswdEntry> out;
  for (const auto& line : str::split(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    auto f = str::split(line, ':');
    if (f.size() < 6) continue;
    auto uid = str::parse_u64(f[2]), gid = str::parse_u64(f[3]);
    if (!uid || !gid) continue;
    out.push_back({f[0], static_cast<uid_t>(*uid), static_cast<gid_t>(*gid), f[5]});
  }
  return out;
}

std::vector<gid_t> groups_of(std::string_view group_text, const std::string& user) {
  std::vector<gid_t> out;
  if (user.empty()) return out;
  for (const auto& line : str::split(group_text, '\n')) {
    auto f = str::split(line, ':');
    if (f.size() < 4) continue;
    auto gid = str::parse_u64(f[2]);
    if (!gid) continue;
    for (const auto& member : str::split_nonempty(f[3], ','))
      if (str::trim(member) == user) out.push_back(static_cast<gid_t>(*gid));
  }
  return out;
}

Result<std::pair<uid_t, gid_t>> parse_user_spec(const std::string& spec, std::string_view passwd_text) {
  auto parts = str::split(spec, ':');
  if (parts.empty() || parts.size() > 2 || parts[0].empty())
    return Error::invalid_argument("invalid user " + str::go_quote(spec));
  auto users = parse_passwd(passwd_text);
  uid_t uid = 0;
  gid_t gid = 0;
  if (auto n = str::parse_u64(parts[0]); n && *n <= 0xffffffffu) {
    uid = static_cast<uid_t>(*n);
    for (const auto& u : users)
      if (u.uid == uid) gid = u.gid;
  } else {
    bool found = false;
    for (const auto& u : users)
      if (u.name == parts[0]) uid = u.uid, gid = u.gid, found = true;
    if (!found) return Error::invalid_argument("unable to find user " + parts[0] + ": no matching entries in passwd file");
  }
  if (parts.size() == 2) {
    auto g = str::parse_u64(parts[1]);
    if (!g || *g > 0xffffffffu) return Error::invalid_argument("invalid group " + str::go_quote(parts[1]));
    gid = static_cast<gid_t>(*g);
  }
  return std::make_pair(uid, gid);
}

}  // namespace berth::linux
