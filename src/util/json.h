// JSON through yajl: a parsed tree (yajl_tree) with depth and size guards, and a writer
// (yajl_gen) that prints compact or tab-indented output (runc's `spec` indents with tabs).
#pragma once

#include <yajl/yajl_tree.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "berth/result.h"

typedef struct yajl_gen_t* yajl_gen;

namespace berth::json {

// Nesting deeper than this is refused before yajl sees it: yajl_tree_free recurses.
inline constexpr int kMaxDepth = 512;

class Document {
 public:
  Document() = default;
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;
  Document(Document&& o) noexcept : root_(o.root_) { o.root_ = nullptr; }
  Document& operator=(Document&& o) noexcept;
  ~Document();

  // Errors are one line: "<source>: invalid JSON: <yajl's reason>".
  static Result<Document> parse(std::string_view text, std::string_view source);
  yajl_val root() const { return root_; }

 private:
  explicit Document(yajl_val root) : root_(root) {}
  yajl_val root_ = nullptr;
};

// Readable name of a node's JSON type for error messages: "a string", "an object"...
std::string describe(yajl_val v);

class Writer {
 public:
  // pretty: beautified with `indent` per level (runc writes config.json with tabs and
  // features with four spaces).
  explicit Writer(bool pretty = false, const char* indent = "\t");
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view k);
  void string(std::string_view s);
  void integer(int64_t v);
  void uinteger(uint64_t v);
  void boolean(bool b);
  void null();
  // The text so far (a trailing newline is added when pretty).
  std::string str() const;

 private:
  yajl_gen g_;
  bool pretty_;
};

}  // namespace berth::json
