// tp::Expected<T>: a value or an Error (a small stand-in for C++23 std::expected).
#pragma once

#include <tilepipe/support/assert.hpp>
#include <tilepipe/support/error.hpp>

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace tp {

/// Wraps an Error so that it converts into any Expected<T>.
struct Unexpected {
  Error error;
};

/// Builds an Unexpected from an error code and a message.
inline Unexpected fail(Errc code, std::string message) {
  return Unexpected{Error{code, std::move(message)}};
}

/// Builds an Unexpected raised on rank `rank` (Error::at).
inline Unexpected fail_at(int rank, Errc code, std::string message) {
  return Unexpected{Error::at(rank, code, std::move(message))};
}

/// A T or an Error. Accessing the wrong alternative is a bug (TP_ASSERT).
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}         // NOLINT: implicit
  Expected(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}  // NOLINT

  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    TP_ASSERT(has_value());
    return std::get<0>(v_);
  }
  const T& value() const& {
    TP_ASSERT(has_value());
    return std::get<0>(v_);
  }
  T&& value() && {
    TP_ASSERT(has_value());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  [[nodiscard]] const Error& error() const {
    TP_ASSERT(!has_value());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

/// Expected<void>: success or an Error. Success constructs no Error (hot paths return a Status
/// per message).
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Unexpected u) : err_(std::move(u.error)) {}  // NOLINT: implicit

  [[nodiscard]] bool has_value() const noexcept { return !err_.has_value(); }
  explicit operator bool() const noexcept { return !err_.has_value(); }
  [[nodiscard]] const Error& error() const {
    TP_ASSERT(err_.has_value());
    return *err_;
  }

 private:
  std::optional<Error> err_;
};

using Status = Expected<void>;

}  // namespace tp

/// Evaluates an Expected expression; on error returns it from the enclosing function.
#define TP_TRY(expr)                                                      \
  do {                                                                    \
    auto&& tp_try_result_ = (expr);                                       \
    if (!tp_try_result_) return ::tp::Unexpected{tp_try_result_.error()}; \
  } while (0)
