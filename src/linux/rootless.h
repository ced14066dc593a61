// --rootless (true|false|auto) and the default state root: detection as runc does it (euid
// ≠ 0, or root of a user namespace that does not own the host, seen in /proc/self/uid_map),
// and $XDG_RUNTIME_DIR/berth for a rootless caller, never root's /run/berth.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "berth/result.h"

namespace berth::linux {

// True when a uid_map text is the host's identity map ("0 0 4294967295"): the caller's user
// namespace is the initial one.
bool is_initial_uid_map(std::string_view uid_map);
// Reads /proc/self/uid_map; a kernel without user namespaces counts as the initial one.
bool running_in_user_ns();

// runc's parseBoolOrAuto: "auto" or "" → nullopt, Go's strconv.ParseBool forms otherwise.
Result<std::optional<bool>> parse_bool_or_auto(std::string_view value);

struct Caller {
  unsigned euid = 0;
  bool in_user_ns = false;  // probed for euid 0 only (nothing else depends on it)
  std::optional<std::string> xdg_runtime_dir;  // $XDG_RUNTIME_DIR, when set and not empty
  std::optional<std::string> user;             // $USER, when set
  static Caller current();
};

// --rootless resolved: explicit true/false win; auto → euid ≠ 0, or euid 0 inside a user
// namespace (which cannot own the host's cgroups).
Result<bool> resolve_rootless(std::string_view flag, const Caller& c);
// The state root without --root: $XDG_RUNTIME_DIR/berth for a non-root caller, or for root
// of a user namespace whose $USER is not root (runc's shouldHonorXDGRuntimeDir); /run/berth
// otherwise: never a shared path such as /tmp, where another user could plant it first.
std::string default_state_root(const Caller& c);

}  // namespace berth::linux
