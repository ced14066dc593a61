// systemd property values and the org.systemd.property.<Name> annotations: see value.h.
#include "cgroups/systemd/value.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "util/strings.h"

namespace berth::cgroups::systemd {

Value Value::boolean(bool v) { Value x; x.sig = "b"; x.b = v; return x; }
Value Value::u64(uint64_t v) { Value x; x.sig = "t"; x.u = v; return x; }
Value Value::str(std::string v) { Value x; x.sig = "s"; x.s = std::move(v); return x; }
Value Value::byte_array(std::vector<uint8_t> v) { Value x; x.sig = "ay"; x.bytes = std::move(v); return x; }
Value Value::string_pairs(std::vector<std::pair<std::string, std::string>> v) {
  Value x; x.sig = "a(ss)"; x.pairs = std::move(v); return x;
}
Value Value::u32_array(std::vector<uint32_t> v) {
  Value x;
  x.sig = "au";
  for (uint32_t p : v) {
    Value e; e.sig = "u"; e.u = p;
    x.items.push_back(e);
  }
  return x;
}

static std::string scalar_text(const Value& v) {
  switch (v.sig.empty() ? '?' : v.sig[0]) {
    case 'b': return v.b ? "true" : "false";
    case 'y': case 'q': case 'u': case 't': return std::to_string(v.u);
    case 'n': case 'i': case 'x': return std::to_string(v.i);
    case 'd': { char buf[64]; std::snprintf(buf, sizeof buf, "%g", v.d); return buf; }
    case 's': return "'" + v.s + "'";
    default: return "?";
  }
}

std::string Value::text() const {
  std::string out = sig + " ";
  if (sig == "ay") {
    for (size_t k = 0; k < bytes.size(); ++k) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%s0x%02x", k ? " " : "", bytes[k]);
      out += buf;
    }
    return out;
  }
  if (sig == "a(ss)") {
    out += "[";
    for (size_t k = 0; k < pairs.size(); ++k)
      out += (k ? ", " : "") + std::string("('") + pairs[k].first + "', '" + pairs[k].second + "')";
    return out + "]";
  }
  if (!sig.empty() && sig[0] == 'a') {
    out += "[";
    for (size_t k = 0; k < items.size(); ++k) out += (k ? ", " : "") + scalar_text(items[k]);
    return out + "]";
  }
  return out + scalar_text(*this);
}

namespace {

// A small recursive-descent reader over GVariant text (the subset in value.h).
class Reader {
 public:
  explicit Reader(std::string_view t) : t_(t) {}

  Result<Value> value(std::string_view want = {}) {
    skip_ws();
    if (at_end()) return fail("unexpected end");
    if (t_[pos_] == '[') return array(want);
    if (t_[pos_] == '\'' || t_[pos_] == '"') {
      if (!want.empty() && want != "s") return fail("a string where " + std::string(want) + " is expected");
      return quoted();
    }
    if (t_[pos_] == '@') {  // "@t 5": an explicit type
      ++pos_;
      std::string sig = word();
      if (sig.empty()) return fail("missing type after '@'");
      return value(sig);
    }
    std::string w = word();
    static const std::map<std::string, std::string, std::less<>> kKeywords = {
        {"boolean", "b"}, {"byte", "y"},   {"int16", "n"},  {"uint16", "q"}, {"int32", "i"},
        {"uint32", "u"},  {"int64", "x"},  {"uint64", "t"}, {"double", "d"}, {"string", "s"}};
    if (auto k = kKeywords.find(w); k != kKeywords.end()) {
      if (!want.empty() && want != k->second) return fail("type " + w + " where " + std::string(want) + " is expected");
      return value(k->second);
    }
    if (w == "true" || w == "false") {
      if (!want.empty() && want != "b") return fail("a boolean where " + std::string(want) + " is expected");
      return Value::boolean(w == "true");
    }
    if (w.empty()) return fail("unexpected " + str::go_quote(t_.substr(pos_, 1)));
    return number(w, want);
  }

  bool at_end() { skip_ws(); return pos_ >= t_.size(); }
  Error fail(const std::string& why) const { return Error::invalid_spec(why); }

 private:
  void skip_ws() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n')) ++pos_;
  }
  std::string word() {
    size_t start = pos_;
    while (pos_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '.' ||
                                t_[pos_] == '-' || t_[pos_] == '+' || t_[pos_] == '(' || t_[pos_] == ')'))
      ++pos_;
    return std::string(t_.substr(start, pos_ - start));
  }

  Result<Value> quoted() {
    char q = t_[pos_++];
    std::string s;
    while (pos_ < t_.size() && t_[pos_] != q) {
      char c = t_[pos_++];
      if (c == '\\') {
        if (pos_ >= t_.size()) break;
        c = t_[pos_++];
        if (c == 'n') c = '\n';
        else if (c == 't') c = '\t';
        else if (c != '\\' && c != '\'' && c != '"') return fail("unsupported escape \\" + std::string(1, c));
      }
      if (c == '\0') return fail("NUL in a string");
      s += c;
    }
    if (pos_ >= t_.size()) return fail("unterminated string");
    ++pos_;
    return Value::str(std::move(s));
  }

  Result<Value> number(const std::string& w, std::string_view want) {
    std::string sig(want);
    if (sig.empty()) sig = w.find_first_of(".eE") != std::string::npos ? "d" : "i";
    Value v;
    v.sig = sig;
    if (sig == "d") {
      char* end = nullptr;
      errno = 0;
      v.d = std::strtod(w.c_str(), &end);
      if (end == w.c_str() || *end || errno || !std::isfinite(v.d)) return fail("invalid number " + str::go_quote(w));
      return v;
    }
    static const std::map<char, std::pair<int64_t, uint64_t>> kRange = {
        {'y', {0, 255}}, {'n', {-32768, 32767}}, {'q', {0, 65535}}, {'i', {INT32_MIN, INT32_MAX}},
        {'u', {0, UINT32_MAX}}, {'x', {INT64_MIN, INT64_MAX}}, {'t', {0, UINT64_MAX}}};
    auto r = sig.size() == 1 ? kRange.find(sig[0]) : kRange.end();
    if (r == kRange.end()) return fail("unsupported type " + str::go_quote(sig));
    bool is_unsigned = r->second.first == 0;
    if (is_unsigned) {
      auto n = str::parse_u64(w, 0);
      if (!n || *n > r->second.second) return fail("invalid " + sig + " value " + str::go_quote(w));
      v.u = *n;
    } else {
      auto n = str::parse_i64(w, 0);
      if (!n || *n < r->second.first || *n > static_cast<int64_t>(r->second.second))
        return fail("invalid " + sig + " value " + str::go_quote(w));
      v.i = *n;
    }
    return v;
  }

  Result<Value> array(std::string_view want) {
    ++pos_;  // '['
    std::string elem = want.size() > 1 && want[0] == 'a' ? std::string(want.substr(1)) : "";
    if (!want.empty() && want[0] != 'a') return fail("an array where " + std::string(want) + " is expected");
    Value out;
    for (bool first = true;; first = false) {
      skip_ws();
      if (pos_ < t_.size() && t_[pos_] == ']') { ++pos_; break; }
      if (!first) {
        if (pos_ >= t_.size() || t_[pos_] != ',') return fail("expected ',' or ']'");
        ++pos_;
      }
      BERTH_ASSIGN(Value item, value(elem));
      if (!item.sig.empty() && item.sig[0] == 'a') return fail("nested arrays are not supported");
      if (elem.empty()) elem = item.sig;  // the first element fixes the type, as in GVariant
      else if (item.sig != elem) return fail("mixed types in an array");
      out.items.push_back(std::move(item));
    }
    if (elem.empty()) return fail("an empty array needs a type (\"@as []\")");
    out.sig = "a" + elem;
    return out;
  }

  std::string_view t_;
  size_t pos_ = 0;
};

bool alnum_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  return true;
}

// runc's convertSecToUSec: any number, times 10^6, as uint64 ("t").
Result<Value> sec_to_usec(const Value& v) {
  constexpr uint64_t kM = 1000000;
  if (v.sig.size() != 1) return Error::invalid_spec("not a number");
  switch (v.sig[0]) {
    case 'y': case 'q': case 'u': case 't': return Value::u64(v.u * kM);
    case 'n': case 'i': case 'x': return Value::u64(static_cast<uint64_t>(v.i) * kM);
    case 'd': return Value::u64(static_cast<uint64_t>(v.d * kM));
    default: return Error::invalid_spec("not a number");
  }
}

}  // namespace

Result<Value> parse_gvariant(std::string_view text) {
  Reader r(text);
  BERTH_ASSIGN(Value v, r.value());
  if (!r.at_end()) return r.fail("trailing text");
  return v;
}

Result<std::vector<Property>> annotation_properties(const std::map<std::string, std::string>& annotations) {
  constexpr std::string_view kPrefix = "org.systemd.property.";
  std::vector<Property> out;
  for (const auto& [key, text] : annotations) {
    if (!str::starts_with(key, kPrefix)) continue;
    std::string name = key.substr(kPrefix.size());
    if (!alnum_name(name)) return Error::invalid_spec("Annotation " + key + " name incorrect: " + name);
    auto parsed = parse_gvariant(text);
    if (!parsed) return Error::invalid_spec("Annotation " + key + "=" + text + " value parse error: " + parsed.error().root());
    Value value = std::move(*parsed);
    // systemd documents "TimeoutStopSec" but its D-Bus property is "TimeoutStopUSec".
    if (name.size() > 3 && str::ends_with(name, "Sec") && std::islower(static_cast<unsigned char>(name[name.size() - 4]))) {
      auto usec = sec_to_usec(value);
      if (!usec) return Error::invalid_spec("Annotation " + key + "=" + text + " value parse error: " + usec.error().root());
      name = name.substr(0, name.size() - 3) + "USec";
      value = std::move(*usec);
    }
    if (name == "PIDs" || name == "PIDFDs")
      return Error::invalid_spec("Annotation " + key + ": the unit's processes are the container's own");
    out.push_back({std::move(name), std::move(value)});
  }
  return out;
}

}  // namespace berth::cgroups::systemd
