// Generic JSON <-> struct mapping over yajl. A struct opts in with a free function found by
// ADL, listing its properties once:
//   template <class V> void visit(V& v, Root& r) { v("path", r.path, kAlways); v("readonly", r.readonly); }
// JsonReader fills structs from a parsed tree, naming the JSON path in errors
// (`config.json: linux.resources.memory.limit: expected an integer, got "abc"`) and ignoring
// unknown keys; JsonWriter writes them back, omitting empty properties unless kAlways (as Go's
// `omitempty` does).
#pragma once

#include <yajl/yajl_tree.h>

#include <concepts>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "berth/result.h"
#include "util/json.h"

namespace berth::json {

enum Presence { kOmitEmpty, kAlways };

class JsonReader {
 public:
  explicit JsonReader(std::string source, bool nul_marked = false)
      : source_(std::move(source)), nul_marked_(nul_marked) {}

  bool failed() const { return error_.has_value(); }
  Error take_error() { return std::move(*error_); }

  // Called by visit() for each property.
  template <class T>
  void operator()(const char* key, T& field, Presence = kOmitEmpty) {
    if (failed()) return;
    yajl_val v = lookup(key);
    if (v == nullptr || YAJL_IS_NULL(v)) return;  // absent or null: keep the default
    size_t mark = path_.size();
    if (!path_.empty()) path_ += '.';
    path_ += key;
    read(v, field);
    path_.resize(mark);
  }

  void read(yajl_val v, bool& out);
  void read(yajl_val v, std::string& out);

  template <class T>
    requires std::integral<T> && (!std::same_as<T, bool>)
  void read(yajl_val v, T& out) {
    if constexpr (std::is_signed_v<T>) {
      int64_t x = 0;
      if (!read_i64(v, &x)) return;
      if (x < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          x > static_cast<int64_t>(std::numeric_limits<T>::max()))
        return fail_range(v, sizeof(T) * 8, true);
      out = static_cast<T>(x);
    } else {
      uint64_t x = 0;
      if (!read_u64(v, &x)) return;
      if (x > static_cast<uint64_t>(std::numeric_limits<T>::max())) return fail_range(v, sizeof(T) * 8, false);
      out = static_cast<T>(x);
    }
  }

  template <class T>
  void read(yajl_val v, std::optional<T>& out) {
    T tmp{};
    read(v, tmp);
    if (!failed()) out = std::move(tmp);
  }

  template <class T>
  void read(yajl_val v, std::vector<T>& out) {
    if (!YAJL_IS_ARRAY(v)) return fail_type("an array", v);
    out.clear();
    out.reserve(v->u.array.len);
    for (size_t i = 0; i < v->u.array.len && !failed(); ++i) {
      size_t mark = path_.size();
      path_ += "[" + std::to_string(i) + "]";
      T item{};
      yajl_val e = v->u.array.values[i];
      if (!YAJL_IS_NULL(e)) read(e, item);
      out.push_back(std::move(item));
      path_.resize(mark);
    }
  }

  template <class T>
  void read(yajl_val v, std::map<std::string, T>& out) {
    if (!YAJL_IS_OBJECT(v)) return fail_type("an object", v);
    out.clear();
    for (size_t i = 0; i < v->u.object.len && !failed(); ++i) {
      size_t mark = path_.size();
      path_ += "[\"";
      path_ += v->u.object.keys[i];
      path_ += "\"]";
      if (has_nul(v->u.object.keys[i])) return fail_nul();
      T item{};
      yajl_val e = v->u.object.values[i];
      if (!YAJL_IS_NULL(e)) read(e, item);
      out[v->u.object.keys[i]] = std::move(item);
      path_.resize(mark);
    }
  }

  template <class T>
    requires requires(JsonReader& r, T& t) { visit(r, t); }
  void read(yajl_val v, T& out) {
    if (!YAJL_IS_OBJECT(v)) return fail_type("an object", v);
    yajl_val saved = object_;
    object_ = v;
    visit(*this, out);
    object_ = saved;
  }

 private:
  yajl_val lookup(const char* key) const;
  bool read_i64(yajl_val v, int64_t* out);
  bool read_u64(yajl_val v, uint64_t* out);
  void fail(std::string what);
  void fail_type(const char* expected, yajl_val got);
  void fail_range(yajl_val v, size_t bits, bool is_signed);
  bool has_nul(std::string_view s) const { return nul_marked_ && s.find(kNulMark) != std::string_view::npos; }
  void fail_nul();  // the path names the string (or map key) that held a NUL

  std::string source_;
  bool nul_marked_ = false;
  std::string path_;
  yajl_val object_ = nullptr;
  std::optional<Error> error_;
};

class JsonWriter {
 public:
  explicit JsonWriter(Writer& w) : w_(w) {}

  template <class T>
  void operator()(const char* key, T& field, Presence p = kOmitEmpty) {
    if (p == kOmitEmpty && empty(field)) return;
    w_.key(key);
    write(field);
  }

  template <class T>
    requires requires(JsonWriter& r, T& t) { visit(r, t); }
  void write(T& s) {
    w_.begin_object();
    visit(*this, s);
    w_.end_object();
  }
  void write(bool b) { w_.boolean(b); }
  void write(const std::string& s) { w_.string(s); }
  template <class T>
    requires std::integral<T> && (!std::same_as<T, bool>)
  void write(T v) {
    if constexpr (std::is_signed_v<T>) w_.integer(static_cast<int64_t>(v));
    else w_.uinteger(static_cast<uint64_t>(v));
  }
  template <class T> void write(std::optional<T>& o) { write(*o); }
  template <class T> void write(std::vector<T>& v) {
    w_.begin_array();
    for (auto& item : v) write(item);
    w_.end_array();
  }
  template <class T> void write(std::map<std::string, T>& m) {
    w_.begin_object();
    for (auto& [k, item] : m) {
      w_.key(k);
      write(item);
    }
    w_.end_object();
  }

 private:
  static bool empty(bool b) { return !b; }
  static bool empty(const std::string& s) { return s.empty(); }
  template <class T>
    requires std::integral<T> && (!std::same_as<T, bool>)
  static bool empty(T v) { return v == 0; }
  template <class T> static bool empty(const std::optional<T>& o) { return !o.has_value(); }
  template <class T> static bool empty(const std::vector<T>& v) { return v.empty(); }
  template <class T> static bool empty(const std::map<std::string, T>& m) { return m.empty(); }
  template <class T>
    requires requires(JsonWriter& r, T& t) { visit(r, t); }
  static bool empty(const T&) { return false; }

  Writer& w_;
};

// Parses `text` as one T (a visit()-able struct). Errors name `source`.
template <class T>
Result<T> parse_as(std::string_view text, std::string_view source) {
  BERTH_ASSIGN(auto doc, Document::parse(text, source));
  if (!YAJL_IS_OBJECT(doc.root()))
    return Error::invalid_spec(std::string(source) + ": expected a JSON object, got " + describe(doc.root()));
  JsonReader reader{std::string(source), doc.nul_marked()};
  T out{};
  reader.read(doc.root(), out);
  if (reader.failed()) return reader.take_error();
  return out;
}

// Serializes a visit()-able struct; pretty = tab-indented.
template <class T>
std::string serialize(const T& value, bool pretty = false) {
  Writer w(pretty);
  JsonWriter jw(w);
  jw.write(const_cast<T&>(value));  // visit() takes mutable refs; writing never modifies
  return w.str();
}

}  // namespace berth::json
