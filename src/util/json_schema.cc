// JsonReader's scalar conversions and error texts (see json_schema.h).
#include "util/json_schema.h"

#include "util/strings.h"

namespace berth::json {

yajl_val JsonReader::lookup(const char* key) const {
  if (object_ == nullptr) return nullptr;
  const auto& o = object_->u.object;
  // The last occurrence wins on duplicate keys, as with Go's encoding/json.
  for (size_t i = o.len; i-- > 0;)
    if (std::strcmp(o.keys[i], key) == 0) return o.values[i];
  return nullptr;
}

void JsonReader::fail(std::string what) {
  if (failed()) return;
  std::string where = path_.empty() ? "(top level)" : path_;
  error_ = Error::invalid_spec(source_ + ": " + where + ": " + what);
}

void JsonReader::fail_type(const char* expected, yajl_val got) {
  std::string desc;
  if (YAJL_IS_STRING(got)) {
    std::string s = got->u.string;
    if (s.size() > 64) s = s.substr(0, 64) + "...";
    desc = str::go_quote(s);
  } else if (YAJL_IS_NUMBER(got)) {
    desc = got->u.number.r;
  } else {
    desc = describe(got);
  }
  fail(std::string("expected ") + expected + ", got " + desc);
}

void JsonReader::read(yajl_val v, bool& out) {
  if (YAJL_IS_TRUE(v)) out = true;
  else if (YAJL_IS_FALSE(v)) out = false;
  else fail_type("a boolean", v);
}

void JsonReader::read(yajl_val v, std::string& out) {
  if (!YAJL_IS_STRING(v)) return fail_type("a string", v);
  out = v->u.string;
  if (has_nul(out)) fail_nul();
}

// A NUL would cut the string short at every system call (execve runs "tr" for "tr\u0000ue").
void JsonReader::fail_nul() {
  // The path may hold a map key with the mark: shown as Go quotes a NUL.
  for (size_t at; (at = path_.find(kNulMark)) != std::string::npos;) path_.replace(at, kNulMark.size(), "\\x00");
  fail("must not contain a NUL byte (\\u0000)");
}

bool JsonReader::read_i64(yajl_val v, int64_t* out) {
  if (!YAJL_IS_NUMBER(v)) {
    fail_type("an integer", v);
    return false;
  }
  auto x = str::parse_i64(v->u.number.r);
  if (!x) {
    // Either not an integer (1.5, 1e3) or beyond 64 bits.
    if (std::strpbrk(v->u.number.r, ".eE") == nullptr) fail_range(v, 64, true);
    else fail_type("an integer", v);
    return false;
  }
  *out = *x;
  return true;
}

bool JsonReader::read_u64(yajl_val v, uint64_t* out) {
  if (!YAJL_IS_NUMBER(v)) {
    fail_type("an integer", v);
    return false;
  }
  const char* raw = v->u.number.r;
  auto x = str::parse_u64(raw);
  if (!x) {
    if (str::parse_i64(raw)) fail(std::string("expected a non-negative integer, got ") + raw);
    else if (raw[0] != '-' && raw[0] != '\0' && std::strpbrk(raw, ".eE") == nullptr) fail_range(v, 64, false);
    else fail_type("an integer", v);
    return false;
  }
  *out = *x;
  return true;
}

void JsonReader::fail_range(yajl_val v, size_t bits, bool is_signed) {
  fail(std::string("value ") + v->u.number.r + " is out of range for " + (is_signed ? "int" : "uint") +
       std::to_string(bits));
}

}  // namespace berth::json
