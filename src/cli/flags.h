// Command-line parsing with the rules runc inherits from Go's flag package and urfave/cli:
// `-flag` == `--flag`, `--flag=value` / `--flag value`, bools take only `=true|false`,
// `--` ends flags, repeatable (slice) flags, aliases ("bundle, b"), Go durations, and
// urfave's reordering of flags found after positional arguments (unless disabled).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"

namespace berth::cli {

enum class FlagType { kBool, kString, kInt, kUint, kDuration, kStringSlice };

struct FlagSpec {
  std::vector<std::string> names;  // first is canonical ("bundle"), then aliases ("b")
  FlagType type = FlagType::kBool;
  std::string usage;
  std::string default_text;  // shown as "(default: ...)" in help
  bool hidden = false;
};

class ParsedFlags {
 public:
  bool has(std::string_view name) const { return values_.count(std::string(name)) != 0; }
  bool get_bool(std::string_view name) const;
  std::string get_string(std::string_view name, std::string_view fallback = "") const;
  std::vector<std::string> get_strings(std::string_view name) const;
  int64_t get_int(std::string_view name, int64_t fallback = 0) const;
  uint64_t get_uint(std::string_view name, uint64_t fallback = 0) const;
  int64_t get_duration_ns(std::string_view name, int64_t fallback) const;

  std::vector<std::string> args;  // positional arguments

  // Used by the parser.
  void set(const std::string& name, std::string value, bool append);

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// Parses argv (without the command name). `reorder`: move flags that follow positional
// arguments in front of them, as urfave/cli v1 does for most runc commands; exec and ps
// disable it so that the container command's own flags stay with it.
// Errors carry Go's texts: "flag provided but not defined: -x",
// "flag needs an argument: -x", `invalid boolean value "v" for -x: parse error`.
Result<ParsedFlags> parse_flags(const std::vector<FlagSpec>& specs, const std::vector<std::string>& argv,
                                bool reorder);

// Go's time.ParseDuration ("300ms", "1m30s", "5s"); nanoseconds.
std::optional<int64_t> parse_go_duration(std::string_view s);
// docker/go-units RAMInBytes ("512m", "1g", "1024") as runc's update uses.
std::optional<int64_t> parse_ram_bytes(std::string_view s);

}  // namespace berth::cli
