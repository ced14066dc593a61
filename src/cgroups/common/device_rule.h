// Device cgroup rules shared by v1 (devices.allow/deny lines) and v2 (the eBPF program):
// linux.resources.devices[] converted from the spec, the "c 1:3 rwm" text form, and runc's
// default allow-list that the caller merges after the spec's rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::cgroups {

inline constexpr int64_t kWildcard = -1;

// Access bits as the kernel numbers them (BPF_DEVCG_ACC_*); v1 spells them "mrw".
enum DeviceAccess : uint8_t { kMknod = 1, kRead = 2, kWrite = 4, kAllAccess = 7 };

struct DeviceRule {
  char type = 'a';          // 'a' (all), 'c' or 'b'
  int64_t major = kWildcard;
  int64_t minor = kWildcard;
  uint8_t access = kAllAccess;  // DeviceAccess bits; never 0 in a valid rule
  bool allow = false;
  bool operator==(const DeviceRule&) const = default;
};

// "rwm" → bits; rejects other letters and an empty string.
Result<uint8_t> parse_access(std::string_view s);
// Bits → "rwm" in the kernel's order (devices.list prints r, w, m).
std::string access_string(uint8_t access);

// The line written to devices.allow/deny and printed by devices.list: "c 1:3 rwm",
// "c 136:* rwm", "a *:* rwm".
std::string to_string(const DeviceRule& rule);
// Parses one devices.list-style line (without allow/deny): "c 1:3 rwm", "a", "a *:* rwm".
Result<DeviceRule> parse_rule(std::string_view line, bool allow);

// linux.resources.devices[i] → a rule; `where` names the field in errors.
Result<DeviceRule> from_spec(const spec::DeviceRule& rule, std::string_view where);
Result<std::vector<DeviceRule>> from_spec(const std::vector<spec::DeviceRule>& rules);

// runc's specconv.AllowedDevices: mknod of any char/block device, /dev/null, random, full,
// tty, zero, urandom, the pty slaves (136:*), ptmx (5:2) and /dev/net/tun (10:200, kept by
// runc for Docker's sake). runc appends these after the spec's rules, so a spec cannot deny
// them; berth's caller merges them in the same order to stay compatible.
const std::vector<DeviceRule>& default_allowed_devices();

}  // namespace berth::cgroups
