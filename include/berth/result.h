// berth::Result<T> — the shape of std::expected<T, Error> (GCC 12 has no <expected>), plus
// the BERTH_TRY / BERTH_ASSIGN macros used everywhere instead of exceptions.
#pragma once

#include <cassert>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <new>

#include "berth/error.h"

namespace berth {

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : ok_(true) { new (&value_) T(std::move(value)); }  // NOLINT: implicit
  Result(Error error) : ok_(false) { new (&error_) Error(std::move(error)); }  // NOLINT: implicit
  template <class U, class = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                              !std::is_same_v<std::decay_t<U>, Error> &&
                                              !std::is_same_v<std::decay_t<U>, T>>>
  Result(U&& value) : ok_(true) {  // NOLINT: implicit
    new (&value_) T(std::forward<U>(value));
  }
  Result(Result&& o) noexcept : ok_(o.ok_) {
    if (ok_) new (&value_) T(std::move(o.value_));
    else new (&error_) Error(std::move(o.error_));
  }
  Result(const Result& o) : ok_(o.ok_) {
    if (ok_) new (&value_) T(o.value_);
    else new (&error_) Error(o.error_);
  }
  Result& operator=(Result&& o) noexcept {
    if (this != &o) {
      destroy();
      ok_ = o.ok_;
      if (ok_) new (&value_) T(std::move(o.value_));
      else new (&error_) Error(std::move(o.error_));
    }
    return *this;
  }
  Result& operator=(const Result&) = delete;
  ~Result() { destroy(); }

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return value_; }
  const T& value() const& { assert(ok()); return value_; }
  T&& value() && { assert(ok()); return std::move(value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  Error& error() & { assert(!ok()); return error_; }
  const Error& error() const& { assert(!ok()); return error_; }
  Error&& error() && { assert(!ok()); return std::move(error_); }

  // Adds outer context on failure only; the string is not copied on success.
  Result&& context(std::string_view outer) && {
    if (!ok_) error_.context(outer);
    return std::move(*this);
  }
  template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
  Result&& with_context(F&& make) && {
    if (!ok_) error_.context(make());
    return std::move(*this);
  }

 private:
  void destroy() {
    if (ok_) value_.~T();
    else error_.~Error();
  }
  // A tagged union rather than std::variant: GCC 12 reports false maybe-uninitialized
  // warnings through variant/optional moves.
  union {
    T value_;
    Error error_;
  };
  bool ok_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : e_(std::move(error)), failed_(true) {}  // NOLINT: implicit

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  void value() const { assert(ok()); }

  Error& error() & { assert(!ok()); return e_; }
  const Error& error() const& { assert(!ok()); return e_; }
  Error&& error() && { assert(!ok()); return std::move(e_); }

  Result&& context(std::string_view outer) && {
    if (failed_) e_.context(outer);
    return std::move(*this);
  }
  template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
  Result&& with_context(F&& make) && {
    if (failed_) e_.context(make());
    return std::move(*this);
  }

 private:
  // A plain member, not std::optional: GCC 12 warns falsely (maybe-uninitialized) on
  // moves of optional<Error>.
  Error e_;
  bool failed_ = false;
};

using Status = Result<void>;
inline Status ok() { return {}; }

// Keeps only success or the error of a Result<T>.
template <class T>
Status to_status(Result<T>&& r) {
  if (r) return {};
  return std::move(r).error();
}

}  // namespace berth

#define BERTH_CONCAT_INNER(a, b) a##b
#define BERTH_CONCAT(a, b) BERTH_CONCAT_INNER(a, b)

// BERTH_TRY(expr): return the error of a failed Result, else go on (value discarded).
#define BERTH_TRY(expr)                                        \
  do {                                                         \
    auto berth_try_result_ = (expr);                           \
    if (!berth_try_result_) return std::move(berth_try_result_).error(); \
  } while (0)

// BERTH_ASSIGN(auto fd, open_x()): declare/assign from a Result, returning its error.
#define BERTH_ASSIGN(lhs, expr) BERTH_ASSIGN_IMPL(BERTH_CONCAT(berth_assign_, __LINE__), lhs, expr)
#define BERTH_ASSIGN_IMPL(tmp, lhs, expr)          \
  auto tmp = (expr);                               \
  if (!tmp) return std::move(tmp).error();         \
  lhs = std::move(tmp).value()
