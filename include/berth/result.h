// berth::Result<T> — the shape of std::expected<T, Error> (GCC 12 has no <expected>), plus
// the BERTH_TRY / BERTH_ASSIGN macros used everywhere instead of exceptions.
#pragma once

#include <cassert>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "berth/error.h"

namespace berth {

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit
  template <class U, class = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                              !std::is_same_v<std::decay_t<U>, Error> &&
                                              !std::is_same_v<std::decay_t<U>, T>>>
  Result(U&& value) : v_(std::in_place_index<0>, T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  Error& error() & { assert(!ok()); return std::get<1>(v_); }
  const Error& error() const& { assert(!ok()); return std::get<1>(v_); }
  Error&& error() && { assert(!ok()); return std::get<1>(std::move(v_)); }

  // Adds outer context on failure only; the string is not copied on success.
  Result&& context(std::string_view outer) && {
    if (!ok()) std::get<1>(v_).context(outer);
    return std::move(*this);
  }
  template <class F, class = std::enable_if_t<std::is_invocable_v<F>>>
  Result&& with_context(F&& make) && {
    if (!ok()) std::get<1>(v_).context(make());
    return std::move(*this);
  }

 private:
  std::variant<T, Error> v_;
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
