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

// U+10FFFF in UTF-8: what a \u0000 escape parses as (see Document::nul_marked).
inline constexpr std::string_view kNulMark = "\xF4\x8F\xBF\xBF";

class Document {
 public:
  Document() = default;
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;
  Document(Document&& o) noexcept : root_(o.root_), nul_marked_(o.nul_marked_) { o.root_ = nullptr; }
  Document& operator=(Document&& o) noexcept;
  ~Document();

  // Errors are one line: "<source>: invalid JSON: <yajl's reason>".
  static Result<Document> parse(std::string_view text, std::string_view source);
  yajl_val root() const { return root_; }
  // Whether the text had \u0000 escapes: yajl_tree would truncate such strings at the NUL,
  // so each was parsed as kNulMark instead (a string containing it came with a NUL).
  bool nul_marked() const { return nul_marked_; }

 private:
  explicit Document(yajl_val root) : root_(root) {}
  yajl_val root_ = nullptr;
  bool nul_marked_ = false;
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
