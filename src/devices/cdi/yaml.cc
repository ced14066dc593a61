// YAML → JSON text through libyaml's event parser (see yaml.h).
#include "devices/cdi/yaml.h"

#include <yaml.h>

#include <cctype>
#include <cstdio>
#include <optional>
#include <map>
#include <vector>

#include "util/strings.h"

namespace berth::devices::cdi {
namespace {

constexpr size_t kMaxDepth = 256;
constexpr size_t kMaxOutput = 16u << 20;

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool all_digits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) : (c >= '0' && c < '0' + base);
    if (!ok) return false;
  }
  return true;
}

// A float written as JSON accepts it: digits, a dot, digits (JSON needs a digit on both
// sides of the dot), then optionally e or E, a sign and digits. Leading zeros of the whole
// part are dropped: YAML 1.1 reads 01.5 as 1.5, JSON refuses "01.5". Anything else
// (1.5e, 1.5e-3}, 1.5x) is not a number.
std::optional<std::string> json_float(std::string_view v) {
  size_t dot = v.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view whole = v.substr(0, dot), rest = v.substr(dot + 1);
  size_t e = rest.find_first_of("eE");
  if (!all_digits(whole, 10) || !all_digits(rest.substr(0, e), 10)) return std::nullopt;
  if (e != std::string_view::npos) {
    std::string_view exp = rest.substr(e + 1);
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) exp.remove_prefix(1);
    if (!all_digits(exp, 10)) return std::nullopt;
  }
  size_t nonzero = whole.find_first_not_of('0');
  whole = nonzero == std::string_view::npos ? whole.substr(whole.size() - 1) : whole.substr(nonzero);
  return std::string(whole) + "." + std::string(rest);
}

// A plain scalar as a JSON value.
std::string plain_scalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return "null";
  if (s == "true" || s == "True" || s == "TRUE") return "true";
  if (s == "false" || s == "False" || s == "FALSE") return "false";
  std::string_view v = s;
  bool neg = false;
  if (!v.empty() && (v[0] == '-' || v[0] == '+')) neg = v[0] == '-', v.remove_prefix(1);
  std::optional<uint64_t> n;
  if (v.size() > 2 && (v.substr(0, 2) == "0x" || v.substr(0, 2) == "0X") && all_digits(v.substr(2), 16)) n = str::parse_u64(v.substr(2), 16);
  else if (v.size() > 2 && v.substr(0, 2) == "0o" && all_digits(v.substr(2), 8)) n = str::parse_u64(v.substr(2), 8);
  else if (v.size() > 1 && v[0] == '0' && all_digits(v, 8)) n = str::parse_u64(v.substr(1), 8);
  else if (all_digits(v, 10)) n = str::parse_u64(v);
  if (n) return (neg ? "-" : "") + std::to_string(*n);
  if (auto f = json_float(v)) return (neg ? "-" : "") + *f;
  return quote(s);
}

struct Frame {
  bool map = false;
  size_t count = 0;
  bool want_key = true;
  std::string anchor;
  size_t start = 0;
};

class Converter {
 public:
  Converter(std::string_view source) : source_(source) {}

  Status event(const yaml_event_t& ev, bool* done) {
    switch (ev.type) {
      case YAML_SCALAR_EVENT: {
        std::string text(reinterpret_cast<const char*>(ev.data.scalar.value), ev.data.scalar.length);
        bool key = !stack_.empty() && stack_.back().map && stack_.back().want_key;
        bool plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        size_t at = begin_node();
        out_ += key || !plain ? quote(text) : plain_scalar(text);
        if (ev.data.scalar.anchor) BERTH_TRY(keep_anchor(ev, reinterpret_cast<const char*>(ev.data.scalar.anchor), at));
        return end_node();
      }
      case YAML_ALIAS_EVENT: {
        auto it = anchors_.find(reinterpret_cast<const char*>(ev.data.alias.anchor));
        if (it == anchors_.end()) return fail(ev, "unknown alias");
        if (!stack_.empty() && stack_.back().map && stack_.back().want_key) return fail(ev, "an alias as a mapping key");
        begin_node();
        out_ += it->second;
        return end_node();
      }
      case YAML_MAPPING_START_EVENT:
      case YAML_SEQUENCE_START_EVENT: {
        if (stack_.size() >= kMaxDepth) return fail(ev, "nesting too deep");
        if (!stack_.empty() && stack_.back().map && stack_.back().want_key) return fail(ev, "a collection as a mapping key");
        bool map = ev.type == YAML_MAPPING_START_EVENT;
        const yaml_char_t* anchor = map ? ev.data.mapping_start.anchor : ev.data.sequence_start.anchor;
        size_t at = begin_node();
        out_ += map ? '{' : '[';
        stack_.push_back({map, 0, true, anchor ? reinterpret_cast<const char*>(anchor) : "", at});
        return ok();
      }
      case YAML_MAPPING_END_EVENT:
      case YAML_SEQUENCE_END_EVENT: {
        Frame f = stack_.back();
        stack_.pop_back();
        out_ += f.map ? '}' : ']';
        if (!f.anchor.empty()) BERTH_TRY(keep_anchor(ev, f.anchor, f.start));
        return end_node();
      }
      case YAML_DOCUMENT_END_EVENT:
      case YAML_STREAM_END_EVENT:
        *done = true;
        return ok();
      default:
        return ok();
    }
  }

  std::string take() { return std::move(out_); }

 private:
  // Separators before a node; returns where the node's own text starts.
  size_t begin_node() {
    if (!stack_.empty()) {
      Frame& f = stack_.back();
      if ((!f.map || f.want_key) && f.count > 0) out_ += ',';
    }
    return out_.size();
  }

  Status end_node() {
    if (out_.size() > kMaxOutput) return Error::invalid_spec(std::string(source_) + ": YAML document too large");
    if (stack_.empty()) return ok();
    Frame& f = stack_.back();
    if (f.map && f.want_key) {
      out_ += ':';
      f.want_key = false;
    } else {
      f.want_key = true;
      ++f.count;
    }
    return ok();
  }

  // Remembers the text of an anchored node, from `start` to the end of the output. Nested
  // anchors each hold a copy of what they contain, so their total is bounded as the output
  // is: 64 KiB of YAML could otherwise make gigabytes of copies.
  Status keep_anchor(const yaml_event_t& ev, const std::string& name, size_t start) {
    std::string& slot = anchors_[name];
    anchor_bytes_ -= slot.size();
    slot = out_.substr(start);
    anchor_bytes_ += slot.size();
    if (anchor_bytes_ > kMaxOutput) return fail(ev, "anchored nodes too large");
    return ok();
  }

  Status fail(const yaml_event_t& ev, const char* what) {
    return Error::invalid_spec(std::string(source_) + ": line " + std::to_string(ev.start_mark.line + 1) + ": " + what);
  }

  std::string_view source_;
  std::string out_;
  std::vector<Frame> stack_;
  std::map<std::string, std::string> anchors_;
  size_t anchor_bytes_ = 0;
};

}  // namespace

Result<std::string> yaml_to_json(std::string_view yaml, std::string_view source) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return Error::generic("yaml_parser_initialize failed");
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(yaml.data()), yaml.size());
  Converter conv(source);
  bool done = false;
  Status st;
  while (!done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      st = Error::invalid_spec(std::string(source) + ": invalid YAML at line " + std::to_string(parser.problem_mark.line + 1) +
                               ": " + (parser.problem ? parser.problem : "parse error"));
      break;
    }
    st = conv.event(ev, &done);
    yaml_event_delete(&ev);
    if (!st) break;
  }
  yaml_parser_delete(&parser);
  if (!st) return std::move(st).error();
  std::string out = conv.take();
  if (out.empty()) return Error::invalid_spec(std::string(source) + ": empty YAML document");
  return out;
}

}  // namespace berth::devices::cdi
