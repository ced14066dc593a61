// Device cgroup rules (linux.resources.devices): conversion from the spec, text form, and
// runc's default allow-list. See device_rule.h.
#include "cgroups/common/device_rule.h"

#include "util/strings.h"

namespace berth::cgroups {

// As runc, which writes the string as it is and lets the kernel read the letters it knows:
// order and repeats do not matter ("mwr", "rrw"), other characters are skipped ("rwmx",
// "rw m"). A string without any of r, w, m grants nothing; runc fails such a rule only
// when it compares the result, berth says why up front.
Result<uint8_t> parse_access(std::string_view s) {
  uint8_t bits = 0;
  for (char c : s) {
    switch (c) {
      case 'r': bits |= kRead; break;
      case 'w': bits |= kWrite; break;
      case 'm': bits |= kMknod; break;
      default: break;
    }
  }
  if (bits == 0)
    return Error::invalid_spec("invalid device access \"" + std::string(s) + "\": none of r, w and m");
  return bits;
}

std::string access_string(uint8_t access) {
  std::string out;
  if (access & kRead) out += 'r';
  if (access & kWrite) out += 'w';
  if (access & kMknod) out += 'm';
  return out;
}

static std::string number_or_star(int64_t v) { return v == kWildcard ? "*" : std::to_string(v); }

std::string to_string(const DeviceRule& rule) {
  return std::string(1, rule.type) + " " + number_or_star(rule.major) + ":" +
         number_or_star(rule.minor) + " " + access_string(rule.access);
}

static Result<int64_t> parse_number(std::string_view s, std::string_view line) {
  if (s == "*") return kWildcard;
  auto v = str::parse_i64(s);
  if (!v || *v < 0 || *v > 0xffffffffLL)
    return Error::invalid_argument("invalid device rule \"" + std::string(line) + "\"");
  return *v;
}

Result<DeviceRule> parse_rule(std::string_view line, bool allow) {
  line = str::trim(line);
  DeviceRule rule;
  rule.allow = allow;
  if (line.empty() || (line[0] != 'a' && line[0] != 'b' && line[0] != 'c'))
    return Error::invalid_argument("invalid device rule \"" + std::string(line) + "\"");
  rule.type = line[0];
  // The kernel reads "a" alone as "a *:* rwm".
  if (line == "a") return rule;
  auto parts = str::split_nonempty(line.substr(1), ' ');
  if (parts.size() != 2)
    return Error::invalid_argument("invalid device rule \"" + std::string(line) + "\"");
  auto colon = parts[0].find(':');
  if (colon == std::string::npos)
    return Error::invalid_argument("invalid device rule \"" + std::string(line) + "\"");
  BERTH_ASSIGN(rule.major, parse_number(std::string_view(parts[0]).substr(0, colon), line));
  BERTH_ASSIGN(rule.minor, parse_number(std::string_view(parts[0]).substr(colon + 1), line));
  auto access = parse_access(parts[1]);
  if (!access) return std::move(access).error().context("device rule \"" + std::string(line) + "\"");
  rule.access = *access;
  return rule;
}

Result<DeviceRule> from_spec(const spec::DeviceRule& in, std::string_view where) {
  DeviceRule rule;
  rule.allow = in.allow;
  if (in.type.empty() || in.type == "a") {
    rule.type = 'a';
  } else if (in.type == "c" || in.type == "b") {
    rule.type = in.type[0];
  } else {
    return Error::invalid_spec(std::string(where) + ".type: invalid device type \"" + in.type +
                               "\" (expected a, b or c)");
  }
  auto number = [&](const std::optional<int64_t>& v, const char* name) -> Result<int64_t> {
    if (!v || *v == kWildcard) return kWildcard;
    if (*v < 0 || *v > 0xffffffffLL)
      return Error::invalid_spec(std::string(where) + "." + name + ": out of range: " +
                                 std::to_string(*v));
    return *v;
  };
  BERTH_ASSIGN(rule.major, number(in.major, "major"));
  BERTH_ASSIGN(rule.minor, number(in.minor, "minor"));
  // An absent access means every access, as crun and the kernel's "a" do.
  if (!in.access.empty()) {
    auto access = parse_access(in.access);
    if (!access) return Error::invalid_spec(std::string(where) + ".access: " + access.error().root());
    rule.access = *access;
  }
  return rule;
}

Result<std::vector<DeviceRule>> from_spec(const std::vector<spec::DeviceRule>& rules) {
  std::vector<DeviceRule> out;
  out.reserve(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    BERTH_ASSIGN(auto rule, from_spec(rules[i], "linux.resources.devices[" + std::to_string(i) + "]"));
    out.push_back(rule);
  }
  return out;
}

const std::vector<DeviceRule>& default_allowed_devices() {
  static const std::vector<DeviceRule> kRules = {
      {'c', kWildcard, kWildcard, kMknod, true},  // mknod of any char device
      {'b', kWildcard, kWildcard, kMknod, true},  // mknod of any block device
      {'c', 1, 3, kAllAccess, true},              // /dev/null
      {'c', 1, 8, kAllAccess, true},              // /dev/random
      {'c', 1, 7, kAllAccess, true},              // /dev/full
      {'c', 5, 0, kAllAccess, true},              // /dev/tty
      {'c', 1, 5, kAllAccess, true},              // /dev/zero
      {'c', 1, 9, kAllAccess, true},              // /dev/urandom
      {'c', 136, kWildcard, kAllAccess, true},    // /dev/pts/*
      {'c', 5, 2, kAllAccess, true},              // /dev/ptmx
      {'c', 10, 200, kAllAccess, true},           // /dev/net/tun (runc restored it, #3468)
  };
  return kRules;
}

}  // namespace berth::cgroups
