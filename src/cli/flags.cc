// Command-line parsing (see flags.h).
#include "cli/flags.h"


#include "util/strings.h"

namespace berth::cli {
namespace {

const FlagSpec* find(const std::vector<FlagSpec>& specs, std::string_view name) {
  for (const auto& s : specs)
    for (const auto& n : s.names)
      if (n == name) return &s;
  return nullptr;
}

bool looks_like_flag(const std::string& a) { return a.size() > 1 && a[0] == '-'; }

// urfave/cli v1 reorderArgs: known flags (and the separate value word of a non-bool flag)
// move before the positional arguments; "--" and everything after it stay in place at the
// end; an unknown flag-like word stays positional, as in urfave.
std::vector<std::string> reorder_args(const std::vector<FlagSpec>& specs, const std::vector<std::string>& argv) {
  std::vector<std::string> flags, rest;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") {
      rest.insert(rest.end(), argv.begin() + static_cast<long>(i), argv.end());
      break;
    }
    std::string name = looks_like_flag(a) ? a.substr(a[1] == '-' ? 2 : 1) : "";
    bool inline_value = name.find('=') != std::string::npos;
    const FlagSpec* s = name.empty() ? nullptr : find(specs, name.substr(0, name.find('=')));
    if (s == nullptr) {
      rest.push_back(a);
      continue;
    }
    flags.push_back(a);
    if (s->type != FlagType::kBool && !inline_value && i + 1 < argv.size()) flags.push_back(argv[++i]);
  }
  flags.insert(flags.end(), rest.begin(), rest.end());
  return flags;
}

bool parse_bool(std::string_view v, bool* out) {
  // Go's strconv.ParseBool.
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") return *out = true, true;
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") return *out = false, true;
  return false;
}

Status check_value(const FlagSpec& spec, const std::string& shown, const std::string& value) {
  auto invalid = [&] {
    return Error::usage("invalid value " + str::go_quote(value) + " for flag -" + shown + ": parse error");
  };
  switch (spec.type) {
    case FlagType::kInt:
      if (!str::parse_i64(value, 0)) return invalid();
      break;
    case FlagType::kUint:
      if (!str::parse_u64(value, 0)) return invalid();
      break;
    case FlagType::kDuration:
      if (!parse_go_duration(value)) return invalid();
      break;
    default:
      break;
  }
  return ok();
}

}  // namespace

void ParsedFlags::set(const std::string& name, std::string value, bool append) {
  auto& v = values_[name];
  if (!append) v.clear();
  v.push_back(std::move(value));
}

bool ParsedFlags::get_bool(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it != values_.end() && !it->second.empty() && it->second.back() == "true";
}

std::string ParsedFlags::get_string(std::string_view name, std::string_view fallback) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end() || it->second.empty()) return std::string(fallback);
  return it->second.back();
}

std::vector<std::string> ParsedFlags::get_strings(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int64_t ParsedFlags::get_int(std::string_view name, int64_t fallback) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return fallback;
  return str::parse_i64(it->second.back(), 0).value_or(fallback);
}

uint64_t ParsedFlags::get_uint(std::string_view name, uint64_t fallback) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return fallback;
  return str::parse_u64(it->second.back(), 0).value_or(fallback);
}

int64_t ParsedFlags::get_duration_ns(std::string_view name, int64_t fallback) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return fallback;
  return parse_go_duration(it->second.back()).value_or(fallback);
}

Result<ParsedFlags> parse_flags(const std::vector<FlagSpec>& specs, const std::vector<std::string>& input,
                                bool reorder) {
  std::vector<std::string> argv = reorder ? reorder_args(specs, input) : input;
  ParsedFlags out;
  size_t i = 0;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (!looks_like_flag(a)) break;  // Go's flag package stops at the first non-flag argument
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    if (body.empty() || body[0] == '-' || body[0] == '=')
      return Error::usage("bad flag syntax: " + a);
    std::string name = body, value;
    bool has_value = false;
    if (auto eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    const FlagSpec* spec = find(specs, name);
    if (spec == nullptr) return Error::usage("flag provided but not defined: -" + name);
    const std::string& canon = spec->names.front();
    if (spec->type == FlagType::kBool) {
      bool b = true;
      if (has_value && !parse_bool(value, &b))
        return Error::usage("invalid boolean value " + str::go_quote(value) + " for -" + name + ": parse error");
      out.set(canon, b ? "true" : "false", false);
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argv.size()) return Error::usage("flag needs an argument: -" + name);
      value = argv[++i];
    }
    BERTH_TRY(check_value(*spec, name, value));
    out.set(canon, value, spec->type == FlagType::kStringSlice);
  }
  for (; i < argv.size(); ++i) out.args.push_back(argv[i]);
  return out;
}

std::optional<int64_t> parse_go_duration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  double total = 0;
  while (!s.empty()) {
    size_t n = 0;
    while (n < s.size() && ((s[n] >= '0' && s[n] <= '9') || s[n] == '.')) ++n;
    if (n == 0) return std::nullopt;
    std::string num(s.substr(0, n));
    if (num == "." ) return std::nullopt;
    s.remove_prefix(n);
    size_t u = 0;
    while (u < s.size() && !((s[u] >= '0' && s[u] <= '9') || s[u] == '.')) ++u;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    double mult;
    if (unit == "ns") mult = 1;
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") mult = 1e3;
    else if (unit == "ms") mult = 1e6;
    else if (unit == "s") mult = 1e9;
    else if (unit == "m") mult = 60e9;
    else if (unit == "h") mult = 3600e9;
    else return std::nullopt;  // Go requires a unit on every number but a lone "0"
    char* end = nullptr;
    double v = std::strtod(num.c_str(), &end);
    if (end != num.c_str() + num.size()) return std::nullopt;
    total += v * mult;
  }
  if (total > 9.2e18) return std::nullopt;
  return static_cast<int64_t>(neg ? -total : total);
}

std::optional<int64_t> parse_ram_bytes(std::string_view s) {
  std::string t(str::trim(s));
  if (t.empty()) return std::nullopt;
  size_t n = 0;
  while (n < t.size() && ((t[n] >= '0' && t[n] <= '9') || t[n] == '.')) ++n;
  if (n == 0) return std::nullopt;
  char* end = nullptr;
  std::string num = t.substr(0, n);
  double v = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return std::nullopt;
  std::string unit = str::to_lower(str::trim(std::string_view(t).substr(n)));
  // [kmgtp] optionally followed by "i" and/or "b"; all binary (1024) multipliers.
  double mult = 1;
  if (!unit.empty()) {
    static const std::string kUnits = "kmgtp";
    size_t idx = kUnits.find(unit[0]);
    if (idx != std::string::npos) {
      // 1024^(idx+1) is a power of two, exact as a double (no libm).
      mult = static_cast<double>(1ULL << (10 * (idx + 1)));
      unit.erase(0, 1);
    }
    if (!unit.empty() && unit[0] == 'i') unit.erase(0, 1);
    if (unit == "b") unit.clear();
    if (!unit.empty()) return std::nullopt;
  }
  // Converting a double beyond int64 is undefined: a size that large is an error.
  double bytes = v * mult;
  if (!(bytes < 9.2e18)) return std::nullopt;
  return static_cast<int64_t>(bytes);
}

}  // namespace berth::cli
