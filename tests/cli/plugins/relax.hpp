// relax1d, a test plugin's kernel with a time loop and a negative dependence: T sweeps of the
// in-place relaxation a[i] = (a[i-1] + a[i+1] + a[i]) / 3 for i = 1..N (a[i-1] of this sweep,
// a[i+1] and a[i] of the previous one). Its loop nest (t, i) has the dependences (0,1), (1,-1),
// (1,0) (`original_deps`); it computes in the planner's skew (t, i) -> (t, i + t), where they are
// (0,1), (1,0), (1,1) (`deps`), as a frontier kernel whose tiles keep two rows of their footprint
// (storage folded over time), as sor2d does (docs/adr/0005), and plain_loop is its reference.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

namespace relax {

using tp::exec::Box;
using tp::exec::Index;

/// a[i] before the first sweep (0 <= i <= n + 1; 0 outside, never read).
inline double initial(Index i, Index n) {
  if (i < 0 || i > n + 1) return 0.0;
  if (i == 0) return 1.0;
  if (i == n + 1) return -0.5;
  return static_cast<double>(i % 7) * 0.125;
}

/// One point's update, the same expression in the kernel and the plain loop.
inline double update(double left, double right, double self) {
  return (left + right + self) / 3.0;
}

/// Point i's checksum term.
inline std::uint64_t term(Index i, double v) {
  std::uint64_t h =
      std::bit_cast<std::uint64_t>(v) + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

/// The plain loop: a[0..n+1] after `sweeps` sweeps.
inline std::vector<double> plain_loop(Index n, Index sweeps) {
  std::vector<double> a(static_cast<std::size_t>(n + 2));
  for (Index i = 0; i <= n + 1; ++i) a[static_cast<std::size_t>(i)] = initial(i, n);
  for (Index t = 1; t <= sweeps; ++t) {
    for (std::size_t i = 1; i <= static_cast<std::size_t>(n); ++i)
      a[i] = update(a[i - 1], a[i + 1], a[i]);
  }
  return a;
}

/// The checksum of the interior of a plain loop's array.
inline std::uint64_t checksum(const std::vector<double>& a) {
  std::uint64_t sum = 0;
  for (std::size_t i = 1; i + 1 < a.size(); ++i) sum += term(static_cast<Index>(i), a[i]);
  return sum;
}

struct Relax {
  static constexpr int dims = 2;
  static constexpr tp::exec::Storage storage = tp::exec::Storage::frontier;
  static constexpr bool time_loop = true;
  using face_type = double;
  using result_type = std::uint64_t;
  static constexpr std::array<tp::exec::Dependence<2>, 3> original_deps{{{0, 1}, {1, -1}, {1, 0}}};
  static constexpr std::array<tp::exec::Dependence<2>, 3> deps{{{0, 1}, {1, 0}, {1, 1}}};
  static constexpr std::array<tp::exec::ParamSpec, 1> params{{
      {"iterations", tp::exec::ParamType::integer, "1", "sweeps T over the array (>= 1)"},
  }};

  Index n = 1;
  Index iterations = 1;

  static tp::Expected<Relax> make(const tp::plan::Index& size, const tp::exec::ParamValues& p) {
    if (p.integer("iterations") < 1) {
      return tp::fail(tp::Errc::invalid_argument, "iterations must be >= 1");
    }
    return Relax{size[0], p.integer("iterations")};
  }
  static result_type combine(result_type a, result_type b) { return a + b; }

  /// Executor point (t, x) is sweep t of grid point i = x + 1 - t; outside the sweeps (t = 0, or
  /// i not in 1..n) it holds a's initial value.
  [[nodiscard]] double outside(Index t, Index x) const { return initial(x + 1 - t, n); }

  /// Face k: the layer below the box along k over the other extent and its low halo.
  [[nodiscard]] std::size_t face_size(int k, const Box<2>& box) const {
    return static_cast<std::size_t>(box.extent(1 - k) + 1);
  }

  void boundary_face(int k, const Box<2>& box, std::span<double> face) const {
    std::size_t at = 0;
    if (k == 0) {
      for (Index x = box.lo[1] - 1; x < box.hi[1]; ++x) face[at++] = outside(box.lo[0] - 1, x);
    } else {
      for (Index t = box.lo[0] - 1; t < box.hi[0]; ++t) face[at++] = outside(t, box.lo[1] - 1);
    }
  }

  /// Sweep by sweep over two rows (column 0 the low halo); passes on the halo it received.
  result_type compute_tile(const Box<2>& box, const tp::exec::FaceSet<const double, 2>& in,
                           const tp::exec::FaceSet<double, 2>& out) const {
    const Index w = box.extent(1);
    const auto width = static_cast<std::size_t>(w + 1);
    thread_local std::vector<double> rows;
    if (rows.size() < 2 * width) rows.resize(2 * width);
    double* prev = rows.data();
    double* cur = rows.data() + width;
    std::copy(in[0].begin(), in[0].begin() + static_cast<std::ptrdiff_t>(width), prev);
    out[1][0] = prev[w];
    for (Index tau = 0; tau < box.extent(0); ++tau) {
      const Index t = box.lo[0] + tau;
      cur[0] = in[1][static_cast<std::size_t>(tau + 1)];
      for (Index c = 1; c <= w; ++c) {
        const Index i = box.lo[1] + c - t;
        cur[c] = i >= 1 && i <= n ? update(cur[c - 1], prev[c], prev[c - 1]) : initial(i, n);
      }
      out[1][static_cast<std::size_t>(tau + 1)] = cur[w];
      std::swap(prev, cur);
    }
    std::copy(prev, prev + width, out[0].begin());
    result_type sum = 0;
    if (box.hi[0] - 1 != iterations) return sum;
    for (Index c = 1; c <= w; ++c) {
      const Index i = box.lo[1] + c - iterations;
      if (i >= 1 && i <= n) sum += term(i, prev[c]);
    }
    return sum;
  }
};

}  // namespace relax
