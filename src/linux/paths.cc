// In-root path resolution and creation (see paths.h).
#include "linux/paths.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

namespace berth::linux {
namespace {

constexpr uint64_t kResolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;

std::string join_components(const std::vector<std::string>& parts, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i) out += '/';
    out += parts[i];
  }
  return out.empty() ? "." : out;
}

}  // namespace

std::string absolute_path(const std::string& p) {
  if (!p.empty() && p[0] == '/') return clean_path(p);
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) return p;
  return clean_path(std::string(cwd) + "/" + (p.empty() ? "." : p));
}

std::string clean_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string comp = path.substr(i, j - i);
    if (comp == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!comp.empty() && comp != ".") {
      parts.push_back(comp);
    }
    i = j + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

std::vector<std::string> path_components(const std::string& cleaned) {
  std::vector<std::string> parts;
  size_t i = 1;
  while (i < cleaned.size()) {
    size_t j = cleaned.find('/', i);
    if (j == std::string::npos) j = cleaned.size();
    parts.push_back(cleaned.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

Result<UniqueFd> resolve_in_root(Sys& sys, int rootfd, const std::string& path, int flags, uint64_t extra_resolve) {
  auto parts = path_components(clean_path(path));
  return sys.openat2(rootfd, join_components(parts, parts.size()), static_cast<uint64_t>(flags), 0,
                     kResolve | extra_resolve);
}

Result<UniqueFd> make_in_root(Sys& sys, int rootfd, const std::string& path, Leaf leaf, mode_t mode, bool* created) {
  if (created) *created = false;
  auto parts = path_components(clean_path(path));
  // Fast path: everything exists.
  auto whole = sys.openat2(rootfd, join_components(parts, parts.size()), O_PATH, 0, kResolve);
  if (whole || whole.error().err() != ENOENT) return whole;
  // Find the deepest existing ancestor, then create downwards from it.
  size_t have = parts.size();
  UniqueFd parent;
  while (have > 0) {
    auto r = sys.openat2(rootfd, join_components(parts, have - 1), O_PATH | O_DIRECTORY, 0, kResolve);
    if (r) {
      parent = std::move(*r);
      break;
    }
    if (r.error().err() != ENOENT) return std::move(r).error();
    --have;
  }
  if (have == 0) return Error::sys(ENOENT, "resolve " + path);
  for (size_t i = have - 1; i < parts.size(); ++i) {
    const std::string& name = parts[i];
    bool last = i + 1 == parts.size();
    if (last && leaf == Leaf::kFile) {
      // mknod of a regular file: created without opening it (nothing to close, no fd).
      auto st = sys.mknodat(parent.get(), name, S_IFREG | 0644, 0);
      if (!st && st.error().err() != EEXIST) return std::move(st).error().context("create " + path);
      if (st && created) *created = true;
    } else {
      auto st = sys.mkdirat(parent.get(), name, mode);
      if (!st && st.error().err() != EEXIST) return std::move(st).error().context("create " + path);
      if (st && last && created) *created = true;
    }
    // Re-open what now exists without following a symlink: the component was either just
    // created by us or raced into place; either way it must not redirect us.
    int flags = O_PATH | O_NOFOLLOW | (last && leaf == Leaf::kFile ? 0 : O_DIRECTORY);
    BERTH_ASSIGN(UniqueFd next, sys.openat(parent.get(), name, flags, 0).with_context([&] {
      return "create " + path + ": " + name + " is not a " + (last && leaf == Leaf::kFile ? "file" : "directory");
    }));
    parent = std::move(next);
  }
  return parent;
}

}  // namespace berth::linux
