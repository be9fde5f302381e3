// Square rational matrices: tiling H and P = H^-1, grouping H^G and P^G (seeds 000 2.4, 002 4.1).
#pragma once

#include <tilepipe/plan/rational.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tp::plan {

/// An n x n matrix of Rationals, row-major.
class RationalMatrix {
 public:
  RationalMatrix() = default;
  /// The n x n zero matrix.
  explicit RationalMatrix(int n) : n_(n), a_(static_cast<std::size_t>(n * n)) {}
  static RationalMatrix identity(int n);
  /// diag(d_1, ..., d_n).
  static RationalMatrix diagonal(const std::vector<Rational>& d);

  [[nodiscard]] int size() const noexcept { return n_; }
  Rational& at(int r, int c) { return a_[static_cast<std::size_t>(r * n_ + c)]; }
  [[nodiscard]] const Rational& at(int r, int c) const {
    return a_[static_cast<std::size_t>(r * n_ + c)];
  }

  /// The inverse, or an error when the matrix is singular or entries overflow 64 bits.
  [[nodiscard]] Expected<RationalMatrix> inverse() const;
  /// The determinant (exact), or nullopt on overflow.
  [[nodiscard]] std::optional<Rational> determinant() const;
  /// M x for an integer vector x (x.size() == n); aborts on overflow (use checked_apply where
  /// M or x come from input).
  [[nodiscard]] std::vector<Rational> apply(const std::vector<std::int64_t>& x) const;
  /// M x, or nullopt when a product or sum overflows 64 bits.
  [[nodiscard]] std::optional<std::vector<Rational>> checked_apply(
      const std::vector<std::int64_t>& x) const;
  /// floor(M x) component-wise: the tile (or group) that x belongs to; aborts on overflow.
  [[nodiscard]] std::vector<std::int64_t> apply_floor(const std::vector<std::int64_t>& x) const;
  /// floor(M x), or nullopt on overflow.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> checked_apply_floor(
      const std::vector<std::int64_t>& x) const;
  /// True when every entry off the diagonal is zero.
  [[nodiscard]] bool is_diagonal() const;
  /// "[[1/4, 0], [0, 1/8]]".
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const RationalMatrix&, const RationalMatrix&) = default;

 private:
  int n_ = 0;
  std::vector<Rational> a_;
};

/// Parses rows separated by ';' and entries by ',': "1/4,0;0,1/8". Checks squareness.
Expected<RationalMatrix> parse_rational_matrix(std::string_view text, std::string_view what);

}  // namespace tp::plan
