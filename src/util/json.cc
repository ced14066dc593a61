// JSON through yajl (see json.h).
#include "util/json.h"

#include <yajl/yajl_gen.h>

#include <cstring>

namespace berth::json {
namespace {

// Scans for nesting depth outside strings; cheap, and keeps yajl's recursive free safe.
bool too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

// yajl_tree keeps strings NUL-terminated, so "tr\u0000ue" would reach the reader as "tr",
// silently truncated. Every \u0000 escape becomes U+10FFFF instead (a noncharacter, as its
// surrogate pair), which JsonReader refuses by field name. Escaped backslashes are skipped.
bool mark_nul_escapes(std::string& buf) {
  bool marked = false, in_string = false;
  for (size_t i = 0; i < buf.size(); ++i) {
    char c = buf[i];
    if (!in_string) {
      in_string = c == '"';
      continue;
    }
    if (c == '"') {
      in_string = false;
    } else if (c == '\\' && buf.compare(i, 6, "\\u0000") == 0) {
      buf.replace(i, 6, "\\udbff\\udfff");
      i += 11;
      marked = true;
    } else if (c == '\\') {
      ++i;
    }
  }
  return marked;
}

}  // namespace

Document& Document::operator=(Document&& o) noexcept {
  if (this != &o) {
    if (root_) yajl_tree_free(root_);
    root_ = o.root_;
    nul_marked_ = o.nul_marked_;
    o.root_ = nullptr;
  }
  return *this;
}

Document::~Document() {
  if (root_) yajl_tree_free(root_);
}

Result<Document> Document::parse(std::string_view text, std::string_view source) {
  std::string where(source);
  if (too_deep(text))
    return Error::invalid_spec(where + ": invalid JSON: nested deeper than " + std::to_string(kMaxDepth) + " levels");
  if (std::memchr(text.data(), '\0', text.size()) != nullptr)
    return Error::invalid_spec(where + ": invalid JSON: contains a NUL byte");
  std::string buf(text);  // yajl_tree_parse wants a NUL-terminated string
  bool nul_marked = mark_nul_escapes(buf);
  char err[512];
  err[0] = 0;
  yajl_val root = yajl_tree_parse(buf.c_str(), err, sizeof err);
  if (root == nullptr) {
    std::string reason(err);
    // yajl appends the offending text on further lines; keep the first line.
    if (auto nl = reason.find('\n'); nl != std::string::npos) reason.resize(nl);
    if (reason.empty()) reason = "parse error";
    return Error::invalid_spec(where + ": invalid JSON: " + reason);
  }
  Document doc(root);
  doc.nul_marked_ = nul_marked;
  return doc;
}

std::string describe(yajl_val v) {
  if (v == nullptr) return "nothing";
  switch (v->type) {
    case yajl_t_string: return "a string";
    case yajl_t_number: return "a number";
    case yajl_t_object: return "an object";
    case yajl_t_array: return "an array";
    case yajl_t_true:
    case yajl_t_false: return "a boolean";
    case yajl_t_null: return "null";
    default: return "an unknown value";
  }
}

Writer::Writer(bool pretty, const char* indent) : g_(yajl_gen_alloc(nullptr)), pretty_(pretty) {
  if (pretty) {
    yajl_gen_config(g_, yajl_gen_beautify, 1);
    yajl_gen_config(g_, yajl_gen_indent_string, indent);
  }
}

Writer::~Writer() { yajl_gen_free(g_); }

void Writer::begin_object() { yajl_gen_map_open(g_); }
void Writer::end_object() { yajl_gen_map_close(g_); }
void Writer::begin_array() { yajl_gen_array_open(g_); }
void Writer::end_array() { yajl_gen_array_close(g_); }
void Writer::key(std::string_view k) { string(k); }
void Writer::string(std::string_view s) {
  yajl_gen_string(g_, reinterpret_cast<const unsigned char*>(s.data()), s.size());
}
void Writer::integer(int64_t v) { yajl_gen_integer(g_, static_cast<long long>(v)); }
void Writer::uinteger(uint64_t v) {
  std::string s = std::to_string(v);
  yajl_gen_number(g_, s.data(), s.size());
}
void Writer::boolean(bool b) { yajl_gen_bool(g_, b ? 1 : 0); }
void Writer::null() { yajl_gen_null(g_); }

std::string Writer::str() const {
  const unsigned char* buf = nullptr;
  size_t len = 0;
  yajl_gen_get_buf(g_, &buf, &len);
  std::string out(reinterpret_cast<const char*>(buf), len);
  if (pretty_ && (out.empty() || out.back() != '\n')) out += '\n';
  return out;
}

}  // namespace berth::json
