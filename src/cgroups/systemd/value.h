// systemd unit properties as D-Bus values (name + typed value), the only shapes berth sends
// ("b" "y" "n" "q" "i" "u" "x" "t" "d" "s", arrays of those, "ay" bitmasks and DeviceAllow's
// "a(ss)"), and the annotations org.systemd.property.<Name> parsed from GVariant text as
// runc parses them (godbus' ParseVariant), including runc's "...Sec" → "...USec" rewrite.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/result.h"

namespace berth::cgroups::systemd {

struct Value {
  std::string sig;  // D-Bus signature of the whole value
  bool b = false;
  uint64_t u = 0;  // y q u t
  int64_t i = 0;   // n i x
  double d = 0;
  std::string s;
  std::vector<Value> items;                                // arrays other than ay / a(ss)
  std::vector<uint8_t> bytes;                              // ay
  std::vector<std::pair<std::string, std::string>> pairs;  // a(ss)

  static Value boolean(bool v);
  static Value u64(uint64_t v);
  static Value str(std::string v);
  static Value byte_array(std::vector<uint8_t> v);
  static Value u32_array(std::vector<uint32_t> v);
  static Value string_pairs(std::vector<std::pair<std::string, std::string>> v);

  // Text for logs and tests: "t 1024", "s 'strict'", "ay 0x0f 0x01", "a(ss) [('/dev/null', 'rwm')]".
  std::string text() const;
  bool operator==(const Value&) const = default;
};

struct Property {
  std::string name;
  Value value;
  std::string text() const { return name + "=" + value.text(); }
  bool operator==(const Property&) const = default;
};

// One GVariant text value as godbus reads it with no expected type: true/false, numbers
// (bare integers are int32, with '.' or 'e' double), typed numbers ("uint64 5", "@t 5"),
// quoted strings and homogeneous arrays of those. Anything else is an error.
Result<Value> parse_gvariant(std::string_view text);

// Every annotation "org.systemd.property.<Name>": Name must be [A-Za-z0-9]+ and the value
// parse; "<lowercase>Sec" names become "...USec" with the number times 10^6 (runc). PIDs and
// PIDFDs are refused (berth alone decides which processes the unit gets).
Result<std::vector<Property>> annotation_properties(const std::map<std::string, std::string>& annotations);

}  // namespace berth::cgroups::systemd
