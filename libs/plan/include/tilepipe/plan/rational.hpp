// Exact rational numbers for tiling matrices H, P = H^-1 and grouping matrices (seed 002, 2.2).
#pragma once

#include <tilepipe/support/expected.hpp>

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tp::plan {

/// num/den in lowest terms with den > 0. Arithmetic is exact; operations that would overflow
/// 64 bits return nullopt through the checked_* functions, or abort through the operators.
class Rational {
 public:
  constexpr Rational() = default;
  constexpr Rational(std::int64_t n) : num_(n) {}  // NOLINT: integers convert implicitly
  /// n/d with d != 0 (TP_EXPECTS); reduced to lowest terms.
  Rational(std::int64_t n, std::int64_t d);

  [[nodiscard]] constexpr std::int64_t num() const noexcept { return num_; }
  [[nodiscard]] constexpr std::int64_t den() const noexcept { return den_; }
  [[nodiscard]] constexpr bool is_zero() const noexcept { return num_ == 0; }
  [[nodiscard]] constexpr bool is_integer() const noexcept { return den_ == 1; }
  /// The largest integer <= *this.
  [[nodiscard]] std::int64_t floor() const noexcept;
  [[nodiscard]] std::string to_string() const;

  friend std::optional<Rational> checked_add(Rational a, Rational b);
  friend std::optional<Rational> checked_mul(Rational a, Rational b);
  friend std::optional<Rational> checked_div(Rational a, Rational b);

  friend Rational operator+(Rational a, Rational b);
  friend Rational operator-(Rational a, Rational b);
  friend Rational operator*(Rational a, Rational b);
  friend Rational operator/(Rational a, Rational b);
  friend Rational operator-(Rational a) { return Rational(-a.num_, a.den_); }

  friend bool operator==(Rational a, Rational b) = default;
  friend std::strong_ordering operator<=>(Rational a, Rational b);

 private:
  std::int64_t num_ = 0;
  std::int64_t den_ = 1;
};

/// Parses "3", "-1/4", "0.25" (a decimal is read exactly); `what` names the value in errors.
Expected<Rational> parse_rational(std::string_view text, std::string_view what);

}  // namespace tp::plan
