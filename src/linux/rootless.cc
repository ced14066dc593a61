// Rootless detection and the default state root (see rootless.h).
#include "linux/rootless.h"

#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "util/file.h"
#include "util/strings.h"

namespace berth::linux {

bool is_initial_uid_map(std::string_view uid_map) {
  // The kernel pads each field ("         0          0 4294967295"). Split by hand: an
  // istringstream here pulled libstdc++'s whole locale machinery (its text, and its set-up
  // on every create) into the binary (docs/performance.md, "Why the code is shaped so").
  std::vector<std::string_view> fields;
  size_t i = 0;
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (i < uid_map.size()) {
    while (i < uid_map.size() && space(uid_map[i])) ++i;
    size_t start = i;
    while (i < uid_map.size() && !space(uid_map[i])) ++i;
    if (i > start) fields.push_back(uid_map.substr(start, i - start));
  }
  return fields.size() == 3 && fields[0] == "0" && fields[1] == "0" && fields[2] == "4294967295";
}

bool running_in_user_ns() {
  auto text = file::read("/proc/self/uid_map", 1 << 16);
  if (!text) return false;  // no user namespaces in this kernel: we are on the host
  return !is_initial_uid_map(*text);
}

Result<std::optional<bool>> parse_bool_or_auto(std::string_view v) {
  if (v.empty() || v == "auto") return std::optional<bool>();
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"})
    if (v == t) return std::optional<bool>(true);
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"})
    if (v == f) return std::optional<bool>(false);
  // Go's strconv error, which runc prints for a bad --rootless.
  return Error::invalid_argument("strconv.ParseBool: parsing " + str::go_quote(v) + ": invalid syntax");
}

Caller Caller::current() {
  Caller c;
  c.euid = ::geteuid();
  // Only root's answer depends on it: a non-root caller is rootless wherever it runs.
  c.in_user_ns = c.euid == 0 && running_in_user_ns();
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) c.xdg_runtime_dir = x;
  if (const char* u = std::getenv("USER")) c.user = u;
  return c;
}

Result<bool> resolve_rootless(std::string_view flag, const Caller& c) {
  BERTH_ASSIGN(auto b, parse_bool_or_auto(flag));
  if (b) return *b;
  if (c.euid != 0) return true;
  return c.in_user_ns;
}

std::string default_state_root(const Caller& c) {
  bool honor_xdg = false;
  if (c.xdg_runtime_dir) {
    if (c.euid != 0) honor_xdg = true;
    else if (c.in_user_ns) honor_xdg = !c.user || *c.user != "root";
  }
  return honor_xdg ? *c.xdg_runtime_dir + "/berth" : "/run/berth";
}

}  // namespace berth::linux
