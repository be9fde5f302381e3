// The iteration space J^n = {j : 1 <= j_d <= N_d} and its uniform dependence matrix D.
#pragma once

#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tp::plan {

/// Smallest and largest number of loop dimensions tilepipe plans.
inline constexpr int min_dims = 2;
inline constexpr int max_dims = 6;

/// An integer vector of one entry per dimension (a point, a tile coordinate or a dependence).
using Index = std::vector<std::int64_t>;

/// "(1, 0, 1)".
std::string to_string(const Index& v);

/// J^n: iterations 1..N_d in each of n = 2..6 dimensions; the point count fits in 64 bits.
class IterationSpace {
 public:
  /// Validates n, every extent >= 1 and the product of extents < 2^63.
  static Expected<IterationSpace> make(Index extents);

  [[nodiscard]] int dims() const noexcept { return static_cast<int>(extents_.size()); }
  [[nodiscard]] const Index& extents() const noexcept { return extents_; }
  [[nodiscard]] std::int64_t extent(int d) const { return extents_[static_cast<std::size_t>(d)]; }
  /// Number of iteration points, prod N_d.
  [[nodiscard]] std::int64_t points() const noexcept { return points_; }
  /// True when 1 <= j_d <= N_d for every d.
  [[nodiscard]] bool contains(const Index& j) const;

 private:
  Index extents_;
  std::int64_t points_ = 0;
};

/// D = [d_1 | ... | d_q]: uniform dependence vectors, each non-zero and of dimension n.
class DependenceMatrix {
 public:
  /// Validates that every vector has n entries and is not all zeros.
  static Expected<DependenceMatrix> make(int dims, std::vector<Index> vectors);
  /// Parses "1,0,0;0,1,0;0,0,1" (vectors separated by ';', entries by ',').
  static Expected<DependenceMatrix> parse(std::string_view text);
  /// The n unit vectors e_1..e_n (wave kernels, seed 000's 3-D loop).
  static DependenceMatrix unit(int dims);

  [[nodiscard]] int dims() const noexcept { return dims_; }
  [[nodiscard]] const std::vector<Index>& vectors() const noexcept { return vectors_; }
  /// "1,0;0,1;1,1", the format parse() reads.
  [[nodiscard]] std::string to_string() const;

 private:
  int dims_ = 0;
  std::vector<Index> vectors_;
};

}  // namespace tp::plan
