// DeviceState: the v1 devices controller's semantics as data (a default verdict plus
// exceptions of the opposite polarity). Applying the whole rule list here gives the same
// outcome as writing it to devices.allow/deny, so v1 can write the minimal set of lines
// (and move a running container between rule sets without a deny-all window), and v2 can
// compile the same meaning into its eBPF program (runc does the same for the same reason).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/result.h"
#include "cgroups/common/device_rule.h"

namespace berth::cgroups {

class DeviceState {
 public:
  // A new v1 cgroup under an unrestricted parent: everything allowed, no exceptions.
  DeviceState() = default;
  static DeviceState from_rules(const std::vector<DeviceRule>& rules);
  // Parses devices.list. In default-allow mode the kernel prints only "a *:* rwm" and hides
  // its deny exceptions, so such a state is marked inexact.
  static Result<DeviceState> from_list(std::string_view devices_list);

  // The kernel's devcgroup_update_access: type 'a' resets the default and drops every
  // exception; a rule of the default's polarity removes access bits from the exception with
  // the same type:major:minor; the opposite polarity adds (merges) an exception.
  void apply(const DeviceRule& rule);

  // The kernel's permission check for one request (type 'c' or 'b', concrete numbers).
  bool allows(char type, int64_t major, int64_t minor, uint8_t access) const;

  bool default_allow() const { return default_allow_; }
  bool exact() const { return exact_; }
  // Exceptions in insertion order; their `allow` is the opposite of the default.
  const std::vector<DeviceRule>& exceptions() const { return exceptions_; }

  bool operator==(const DeviceState&) const = default;

 private:
  bool default_allow_ = true;
  bool exact_ = true;
  std::vector<DeviceRule> exceptions_;
};

// One write for v1: {to devices.allow?, line}.
struct DeviceWrite {
  bool allow;
  std::string line;
  bool operator==(const DeviceWrite&) const = default;
};

// The writes that take a cgroup from `from` to `to`. When both deny by default (the usual
// container case) only the differences are written, narrowing before widening, so a running
// container never loses /dev/null; otherwise the default is reset first ("a"), then every
// exception is written.
std::vector<DeviceWrite> transition(const DeviceState& from, const DeviceState& to);

}  // namespace berth::cgroups
