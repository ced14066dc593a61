// DeviceState (linux.resources.devices semantics shared by v1 and v2): see device_state.h.
#include "cgroups/common/device_state.h"

#include <algorithm>

#include "util/strings.h"

namespace berth::cgroups {

static bool same_node(const DeviceRule& a, const DeviceRule& b) {
  return a.type == b.type && a.major == b.major && a.minor == b.minor;
}

DeviceState DeviceState::from_rules(const std::vector<DeviceRule>& rules) {
  DeviceState s;
  for (const auto& r : rules) s.apply(r);
  return s;
}

Result<DeviceState> DeviceState::from_list(std::string_view list) {
  DeviceState s;
  s.default_allow_ = false;
  for (const auto& line : str::split_nonempty(list, '\n')) {
    BERTH_ASSIGN(auto rule, parse_rule(line, true));
    if (rule.type == 'a') {
      // "a *:* rwm": the cgroup allows by default; its deny exceptions are not shown.
      s.default_allow_ = true;
      s.exact_ = false;
      s.exceptions_.clear();
      return s;
    }
    s.apply(rule);
  }
  return s;
}

void DeviceState::apply(const DeviceRule& rule) {
  if (rule.type == 'a') {
    default_allow_ = rule.allow;
    exact_ = true;
    exceptions_.clear();
    return;
  }
  auto it = std::find_if(exceptions_.begin(), exceptions_.end(),
                         [&](const DeviceRule& e) { return same_node(e, rule); });
  if (rule.allow == default_allow_) {
    // Same polarity as the default: narrow (or drop) the matching exception.
    if (it == exceptions_.end()) return;
    it->access = static_cast<uint8_t>(it->access & ~rule.access);
    if (it->access == 0) exceptions_.erase(it);
    return;
  }
  if (it != exceptions_.end()) {
    it->access = static_cast<uint8_t>(it->access | rule.access);
    return;
  }
  DeviceRule e = rule;
  e.allow = !default_allow_;
  exceptions_.push_back(e);
}

static bool node_matches(const DeviceRule& e, char type, int64_t major, int64_t minor) {
  return e.type == type && (e.major == kWildcard || e.major == major) &&
         (e.minor == kWildcard || e.minor == minor);
}

bool DeviceState::allows(char type, int64_t major, int64_t minor, uint8_t access) const {
  for (const auto& e : exceptions_) {
    if (!node_matches(e, type, major, minor)) continue;
    if (default_allow_) {
      // A deny exception refuses a request sharing any access bit with it.
      if (e.access & access) return false;
    } else if ((access & ~e.access) == 0) {
      // An allow exception grants a request it covers entirely.
      return true;
    }
  }
  return default_allow_;
}

static uint8_t access_of(const std::vector<DeviceRule>& list, const DeviceRule& node) {
  for (const auto& e : list)
    if (same_node(e, node)) return e.access;
  return 0;
}

std::vector<DeviceWrite> transition(const DeviceState& from, const DeviceState& to) {
  std::vector<DeviceWrite> out;
  if (from.exact() && !from.default_allow() && !to.default_allow()) {
    for (const auto& e : from.exceptions()) {
      uint8_t drop = static_cast<uint8_t>(e.access & ~access_of(to.exceptions(), e));
      if (drop == 0) continue;
      DeviceRule d = e;
      d.access = drop;
      out.push_back({false, to_string(d)});
    }
    for (const auto& e : to.exceptions()) {
      uint8_t add = static_cast<uint8_t>(e.access & ~access_of(from.exceptions(), e));
      if (add == 0) continue;
      DeviceRule a = e;
      a.access = add;
      out.push_back({true, to_string(a)});
    }
    return out;
  }
  out.push_back({to.default_allow(), "a"});
  for (const auto& e : to.exceptions()) out.push_back({e.allow, to_string(e)});
  return out;
}

}  // namespace berth::cgroups
