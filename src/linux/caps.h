// process.capabilities: names → bit sets (unknown or unavailable names are ignored with a
// warning, as runc 1.1 does), and applying all five sets around the uid switch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::linux {

struct CapSets {
  uint64_t bounding = 0, effective = 0, inheritable = 0, permitted = 0, ambient = 0;
};

int last_cap();  // /proc/sys/kernel/cap_last_cap, read once
// `ignored` receives names that are unknown or beyond last_cap().
CapSets resolve_caps(const spec::Capabilities& caps, std::vector<std::string>* ignored);
// process.capabilities as create and exec apply them. As runc, a name that is no
// capability berth knows, or one this kernel lacks (CAP_CHECKPOINT_RESTORE on an old
// kernel), is dropped with one warning: engines send fixed lists that may be newer than
// the host (the runtime-spec asks for an error; docs/conformance.md says why berth does
// not). `where` names the field for future errors; nothing fails today.
Result<CapSets> caps_from_spec(const spec::Capabilities& caps, const std::string& where);
std::vector<std::string> cap_names(uint64_t set);

class Sys;
// Before the uid switch: keep permitted caps across setuid and shrink the bounding set.
Status caps_before_setuid(Sys& sys, const CapSets& caps);
// After it: set effective/permitted/inheritable, then raise the ambient set.
Status caps_after_setuid(Sys& sys, const CapSets& caps);

// The single steps behind Sys (LinuxSys calls them): see Sys::drop_bounding_caps,
// capset and set_ambient_caps.
Status drop_bounding_caps(uint64_t keep);
Status set_cap_sets(const CapSets& caps);
Status set_ambient_caps(uint64_t ambient);

}  // namespace berth::linux
