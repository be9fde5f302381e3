// The classic pipelined 2-D recurrence A[i][j] = A[i-1][j] + A[i][j-1] - A[i-1][j-1] as a user's
// resident kernel (examples/02_recurrence, and bench/recurrence against a hand-written MPI code).
#pragma once

#include <tilepipe/run.hpp>

#include <bit>
#include <cstdint>

namespace recurrence {

using tp::exec::Box;
using tp::exec::Index;
using tp::exec::Point;
using tp::exec::SlabView;

/// The boundary A[i][0], A[0][j] = ((7 i + 13 j) mod 101) / 101 (not linear, so that every value
/// depends on the order of its roundings); the result is the sum of the values' bit patterns mod
/// 2^64 (exact in any order, so it is the same whatever the tiling).
struct Recurrence {
  static constexpr int dims = 2;
  static constexpr tp::exec::Storage storage = tp::exec::Storage::resident;
  using value_type = double;
  using result_type = std::uint64_t;
  static constexpr std::array<tp::exec::Dependence<2>, 3> deps{{{1, 0}, {0, 1}, {1, 1}}};

  static result_type combine(result_type a, result_type b) { return a + b; }

  value_type boundary_value(const Point<2>& p) const { return boundary(p[0], p[1]); }
  static double boundary(Index i, Index j) {
    return static_cast<double>((7 * i + 13 * j) % 101) / 101.0;
  }

  void compute_tile(const Box<2>& box, const SlabView<value_type, 2>& slab) const {
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      double* row = slab.at(first);
      const double* up = row - slab.stride(0);
      for (Index j = 0; j < box.extent(1); ++j) row[j] = up[j] + row[j - 1] - up[j - 1];
    });
  }

  result_type tile_result(const Box<2>& box, const SlabView<const value_type, 2>& slab) const {
    result_type sum = 0;
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      for (Index j = 0; j < box.extent(1); ++j)
        sum += std::bit_cast<std::uint64_t>(slab.at(first)[j]);
    });
    return sum;
  }
};

static_assert(tp::exec::ResidentKernel<Recurrence>);

}  // namespace recurrence
