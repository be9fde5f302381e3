// Overflow-checked 64-bit integer arithmetic and floor/ceil division for index math.
#pragma once

#include <tilepipe/support/assert.hpp>

#include <cstdint>
#include <optional>

namespace tp {

/// a * b, or nullopt when the product does not fit in int64_t.
constexpr std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a + b, or nullopt when the sum does not fit in int64_t.
constexpr std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// floor(a / b) for b > 0 (rounds toward minus infinity, unlike the built-in division).
constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  TP_EXPECTS(b > 0);
  const std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/// ceil(a / b) for a >= 0, b > 0.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
  TP_EXPECTS(a >= 0 && b > 0);
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace tp
