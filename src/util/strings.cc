// Small string helpers (see strings.h).
#include "util/strings.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace berth::str {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::vector<std::string> split_nonempty(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (auto& p : split(s, sep))
    if (!p.empty()) out.push_back(std::move(p));
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string_view trim(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view x) {
  return s.size() >= x.size() && s.substr(s.size() - x.size()) == x;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::optional<int64_t> parse_i64(std::string_view s, int base) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  char buf[72];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = 0;
  if (buf[0] == ' ' || buf[0] == '+' || buf[0] == '\t') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(buf, &end, base);
  if (errno != 0 || end != buf + s.size()) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<uint64_t> parse_u64(std::string_view s, int base) {
  if (s.empty() || s.size() > 64 || s[0] == '-' || s[0] == '+' || s[0] == ' ') return std::nullopt;
  char buf[72];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = 0;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(buf, &end, base);
  if (errno != 0 || end != buf + s.size()) return std::nullopt;
  return static_cast<uint64_t>(v);
}

namespace {
// Decodes one UTF-8 sequence; returns its length, or 0 when invalid.
size_t utf8_decode(std::string_view s, size_t i, uint32_t* cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  uint32_t v = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
  for (size_t k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc >> 6) != 2) return 0;
    v = (v << 6) | (cc & 0x3f);
  }
  *cp = v;
  return len;
}
}  // namespace

std::string go_quote(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      uint32_t cp = 0;
      size_t len = utf8_decode(s, i, &cp);
      if (len == 0) {
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
        ++i;
      } else {
        out.append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\v': out += "\\v"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

}  // namespace berth::str
