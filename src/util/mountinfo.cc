// /proc/self/mountinfo parsing (see mountinfo.h).
#include "util/mountinfo.h"

#include "util/file.h"
#include "util/strings.h"

namespace berth {

std::string unescape_mountinfo(std::string_view s) {
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    // Three octal digits of a byte value, \000 to \377. Not strtoull, which skips leading
    // whitespace (a backslash before a tab and "12" is no escape).
    if (s[i] == '\\' && s.size() - i >= 4 && s[i + 1] <= '3' && octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
      continue;
    }
    out += s[i];
  }
  return out;
}

Result<std::vector<MountInfo>> parse_mountinfo(std::string_view text) {
  std::vector<MountInfo> out;
  for (const auto& line : str::split(text, '\n')) {
    if (line.empty()) continue;
    auto f = str::split(line, ' ');
    // id parent maj:min root mountpoint options [optional...] - fstype source superopts
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 7 || dash + 2 >= f.size())
      return Error::generic("malformed mountinfo line: " + line);
    MountInfo m;
    auto id = str::parse_i64(f[0]), parent = str::parse_i64(f[1]);
    if (!id || !parent) return Error::generic("malformed mountinfo line: " + line);
    m.id = static_cast<int>(*id);
    m.parent = static_cast<int>(*parent);
    m.root = unescape_mountinfo(f[3]);
    m.mountpoint = unescape_mountinfo(f[4]);
    m.options = f[5];
    for (size_t i = 6; i < dash; ++i) m.optional += (i > 6 ? " " : "") + f[i];
    m.fstype = f[dash + 1];
    m.source = unescape_mountinfo(f[dash + 2]);
    if (dash + 3 < f.size()) m.super_options = f[dash + 3];
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<MountInfo>> read_mountinfo(const std::string& path) {
  BERTH_ASSIGN(auto text, file::read(path));
  return parse_mountinfo(text);
}

const MountInfo* mount_containing(const std::vector<MountInfo>& mounts, const std::string& path) {
  const MountInfo* best = nullptr;
  for (const auto& m : mounts) {
    const std::string& mp = m.mountpoint;
    bool prefix = path == mp || mp == "/" ||
                  (str::starts_with(path, mp) && path.size() > mp.size() && path[mp.size()] == '/');
    if (prefix && (!best || mp.size() >= best->mountpoint.size())) best = &m;
  }
  return best;
}

}  // namespace berth
