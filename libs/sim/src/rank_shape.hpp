// The shape of one rank's share of a plan, in closed form: how many of its CPUs are active, send
// and receive at each of its steps, without enumerating tiles (the simulator's per-step counts).
#pragma once

#include <tilepipe/plan/plan.hpp>

#include <cstdint>
#include <vector>

namespace tp::sim::detail {

/// Counts of CPU grid coordinates by the sum of their coordinates (the hyperplane offset o =
/// sum c_f, which is also the subtile skew of vertical grouping), for a CPU grid of `rows` rows
/// per non-mapping dimension, overall and with one dimension left out.
class RankShape {
 public:
  explicit RankShape(std::vector<std::int64_t> rows);

  [[nodiscard]] const std::vector<std::int64_t>& rows() const noexcept { return rows_; }
  /// D = sum (rows_f - 1): the largest offset.
  [[nodiscard]] std::int64_t depth() const noexcept { return depth_; }
  /// CPUs (of every row) with offset in [lo, hi].
  [[nodiscard]] std::int64_t cpus_with_offset(std::int64_t lo, std::int64_t hi) const {
    return range(all_, lo, hi);
  }
  /// CPUs whose coordinates other than f sum to a value in [lo, hi] (c_f fixed elsewhere).
  [[nodiscard]] std::int64_t others_with_offset(int f, std::int64_t lo, std::int64_t hi) const {
    return range(others_[static_cast<std::size_t>(f)], lo, hi);
  }
  /// The product of the rows of every dimension but f.
  [[nodiscard]] std::int64_t others(int f) const {
    return others_[static_cast<std::size_t>(f)].back();
  }

 private:
  /// prefix[x] = count with sum < x; counts with sum in [lo, hi] clamped to the table.
  static std::int64_t range(const std::vector<std::int64_t>& prefix, std::int64_t lo,
                            std::int64_t hi);
  static std::vector<std::int64_t> prefix_counts(const std::vector<std::int64_t>& rows, int skip);

  std::vector<std::int64_t> rows_;
  std::int64_t depth_ = 0;
  std::vector<std::int64_t> all_;
  std::vector<std::vector<std::int64_t>> others_;
};

}  // namespace tp::sim::detail
