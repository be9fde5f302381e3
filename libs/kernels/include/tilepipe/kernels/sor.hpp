// sor2d/sor3d: T sweeps of in-place Gauss-Seidel/SOR (issue 13, exactly), run as a frontier
// kernel in the skewed space (t, i + t, j + t[, k + t]) where every dependence is non-negative.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/support/checked_math.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace tp::kernels {

/// Boundary coefficients: u = ((7*i + 13*j [+ 29*k]) mod 101) / 101.0 (double).
inline constexpr std::array<std::int64_t, 3> sor_boundary_coeffs{7, 13, 29};

/// The parameters of sor2d/sor3d as `--param name=value` gives them.
inline constexpr std::array<exec::ParamSpec, 2> sor_params{{
    {"iterations", exec::ParamType::integer, "1", "sweeps T over the grid (>= 1)"},
    {"omega", exec::ParamType::real, "1.0", "relaxation factor W, 0 < W < 2 (1: Gauss-Seidel)"},
}};

/// The value a point of the (N_1+2) x ... array holds before the first sweep: the boundary
/// formula where some index is 0 or N_s+1, 0.0 in the interior and (never read) outside.
template <int S>
double sor_initial_value(const Point<S>& o, const Point<S>& n) noexcept {
  bool boundary = false;
  std::int64_t sum = 0;
  for (int s = 0; s < S; ++s) {
    if (o[s] < 0 || o[s] > n[s] + 1) return 0.0;
    boundary = boundary || o[s] == 0 || o[s] == n[s] + 1;
    sum += sor_boundary_coeffs[static_cast<std::size_t>(s)] * o[s];
  }
  return boundary ? static_cast<double>(sum % 101) / 101.0 : 0.0;
}

/// One interior point's checksum term: splitmix64(lin * golden_gamma + bits(value)), lin the
/// row-major index in the (N_1+2) x ... array.
inline std::uint64_t sor_point_hash(std::uint64_t lin, double value) noexcept {
  return splitmix64(lin * golden_gamma + std::bit_cast<std::uint64_t>(value));
}

/// SOR over S = 2 or 3 spatial dimensions with a time dimension in front. The original loop nest
/// (t, x_1..x_S) has the dependences `original_deps` (components -1: the previous sweep's values
/// of the +e_s neighbours); the executor runs the skewed space y = (t, x_1 + t, ..., x_S + t),
/// shifted to start at 1 (`exec_size`), whose dependences `deps` are all >= 0. Storage folds
/// time: a tile keeps two planes of its own footprint, and only faces (one layer of the tile,
/// with its low halo in the other dimensions) travel, so memory is O(faces), never O(T x grid).
/// The result is the checksum of the interior after sweep T.
template <int S>
class Sor {
 public:
  static_assert(S == 2 || S == 3, "sor has 2 or 3 spatial dimensions");
  static constexpr int dims = S + 1;
  static constexpr exec::Storage storage = exec::Storage::frontier;
  using face_type = double;
  using result_type = std::uint64_t;
  /// The output array (exec::FrontierOutput): the interior N_1 x ... after sweep T, float64.
  using output_type = double;
  static constexpr int output_dims = S;
  static constexpr std::size_t ndeps = 2 * S + 1;
  /// Dimension 1 is the time loop, its extent the parameter "iterations" (runtime::make_entry).
  static constexpr bool time_loop = true;
  static constexpr std::array<exec::ParamSpec, 2> params = sor_params;
  /// In (t, x_1..x_S): e_s (this sweep's -e_s neighbour), e_0 - e_s (the previous sweep's +e_s
  /// neighbour), e_0 (the point's own previous value); flow, anti and output dependences of the
  /// in-place array alike.
  static constexpr std::array<exec::Dependence<dims>, ndeps> original_deps = [] {
    std::array<exec::Dependence<dims>, ndeps> v{};
    for (int s = 1; s <= S; ++s) {
      v[static_cast<std::size_t>(s - 1)][static_cast<std::size_t>(s)] = 1;
      auto& back = v[static_cast<std::size_t>(S + s - 1)];
      back[0] = 1;
      back[static_cast<std::size_t>(s)] = -1;
    }
    v[2 * S][0] = 1;
    return v;
  }();
  /// The skewing y_0 = t, y_s = x_s + t (rows of T; the planner's choice for original_deps).
  static constexpr std::array<std::array<int, dims>, dims> skew = [] {
    std::array<std::array<int, dims>, dims> m{};
    for (int r = 0; r < dims; ++r) {
      m[static_cast<std::size_t>(r)][static_cast<std::size_t>(r)] = 1;
      m[static_cast<std::size_t>(r)][0] = 1;
    }
    return m;
  }();
  /// T d for every original dependence: e_s, (1, 1..1 with 0 at s), (1, ..., 1).
  static constexpr std::array<exec::Dependence<dims>, ndeps> deps = [] {
    std::array<exec::Dependence<dims>, ndeps> v{};
    for (std::size_t q = 0; q < ndeps; ++q) {
      for (std::size_t r = 0; r < static_cast<std::size_t>(dims); ++r) {
        for (std::size_t c = 0; c < static_cast<std::size_t>(dims); ++c) {
          v[q][r] += skew[r][c] * original_deps[q][c];
        }
      }
    }
    return v;
  }();

  /// Checks N_s >= 1, 1 <= iterations, 0 < omega < 2, and that the skewed space and the planes
  /// fit in 64-bit byte offsets.
  static Expected<Sor> make(const Point<S>& n, std::int64_t iterations, double omega) {
    for (int s = 0; s < S; ++s) {
      if (n[s] < 1) {
        return fail(Errc::invalid_argument, "size " + std::to_string(n[s]) + " in dimension " +
                                                std::to_string(s + 1) + ": must be >= 1");
      }
    }
    if (iterations < 1) {
      return fail(Errc::invalid_argument,
                  "iterations " + std::to_string(iterations) + ": must be >= 1");
    }
    if (!(omega > 0.0 && omega < 2.0)) {
      std::array<char, 32> text{};
      const auto end = std::to_chars(text.data(), text.data() + text.size(), omega).ptr;
      return fail(Errc::invalid_argument, "omega " + std::string(text.data(), end) +
                                              ": must lie in (0, 2) for SOR to converge");
    }
    Index points = iterations;
    Index plane = 1;
    for (int s = 0; s < S; ++s) {
      const auto e = checked_add(n[s], iterations);  // skewed extent + 1
      const auto p = e ? checked_mul(points, *e) : std::nullopt;
      const auto q = e ? checked_mul(plane, *e + 2) : std::nullopt;
      if (!p || !q || !checked_mul(*q, Index{16})) {
        return fail(Errc::out_of_range, "the grid and its sweeps do not fit in 64-bit offsets");
      }
      points = *p;
      plane = *q;
    }
    return Sor(n, iterations, omega);
  }

  /// make() for a registry entry (runtime::make_entry): the grid N_1 x ... and the parameters
  /// iterations and omega.
  static Expected<Sor> make(const std::vector<Index>& size, const exec::ParamValues& p) {
    Point<S> n{};
    for (int s = 0; s < S; ++s) n[s] = size[static_cast<std::size_t>(s)];
    return make(n, p.integer("iterations"), p.real("omega"));
  }

  /// Sums two checksums modulo 2^64.
  static result_type combine(result_type a, result_type b) noexcept { return a + b; }

  [[nodiscard]] const Point<S>& size() const noexcept { return n_; }
  [[nodiscard]] std::int64_t iterations() const noexcept { return iterations_; }
  [[nodiscard]] double omega() const noexcept { return omega_; }
  /// The executor's space: T x (N_1 + T - 1) x ...: executor point x is the skewed point
  /// (x_0, x_1 + 1, ...), the original (t, i, ...) = (x_0, x_1 + 1 - x_0, ...).
  [[nodiscard]] Point<dims> exec_size() const noexcept {
    Point<dims> e{};
    e[0] = iterations_;
    for (int s = 0; s < S; ++s) e[s + 1] = n_[s] + iterations_ - 1;
    return e;
  }

  /// About the bytes the faces of a run take (the door's memory check, before any allocation):
  /// two layers of the skewed grid with its halo, (N_1 + T + 1) x ... doubles each, in double
  /// (no overflow).
  [[nodiscard]] double memory_bytes() const noexcept {
    double plane = sizeof(double);
    for (int s = 0; s < S; ++s) plane *= static_cast<double>(n_[s] + iterations_ + 1);
    return 2 * plane;
  }

  /// The points of `box` that are points of the loop nest, which a tile of this box computes
  /// (the others lie outside the sweeps: 1 <= x_0 <= T and x_0 <= x_s <= N_s + x_0 - 1).
  [[nodiscard]] Index computed_points(const Box<dims>& box) const noexcept {
    Index total = 0;
    const Index t_end = std::min<Index>(box.hi[0], iterations_ + 1);
    for (Index t = std::max<Index>(box.lo[0], 1); t < t_end; ++t) {
      Index plane = 1;
      for (int s = 0; s < S; ++s) {
        const Index lo = std::max<Index>(box.lo[s + 1], t);
        const Index hi = std::min<Index>(box.hi[s + 1], n_[s] + t);
        plane *= std::max<Index>(0, hi - lo);
      }
      total += plane;
    }
    return total;
  }

  /// The output array's extents: the interior N_1 x ... x N_S.
  [[nodiscard]] std::vector<Index> output_size() const { return {n_.begin(), n_.end()}; }

  /// The interior points (1-based) whose values after sweep T a tile with this box computes:
  /// those of its last plane when that is sweep T, none otherwise.
  [[nodiscard]] Box<S> output_box(const Box<dims>& box) const noexcept {
    Box<S> out;
    if (box.empty() || box.hi[0] - 1 != iterations_) return out;
    for (int s = 0; s < S; ++s) {
      out.lo[s] = std::max<Index>(box.lo[s + 1] + 1 - iterations_, 1);
      out.hi[s] = std::min<Index>(box.hi[s + 1] + 1 - iterations_, n_[s] + 1);
    }
    return out;
  }

  /// Elements of the face across dimension k: one layer of the box, with one more point (the
  /// low halo) in every other dimension: prod_{d != k} (extent_d + 1).
  [[nodiscard]] std::size_t face_size(int k, const Box<dims>& box) const noexcept {
    std::size_t n = 1;
    for (int d = 0; d < dims; ++d) {
      if (d != k) n *= static_cast<std::size_t>(box.extent(d) + 1);
    }
    return n;
  }

  /// The face entering a tile at the space's low end of dimension k: every point of it lies
  /// outside the sweeps, so it holds the array's initial value (boundary formula, interior 0.0).
  void boundary_face(int k, const Box<dims>& box, std::span<double> face) const noexcept {
    Box<dims> layer = halo_box(box);
    layer.hi[k] = layer.lo[k] + 1;
    std::size_t at = 0;
    for_each_point(layer, [&](const Point<dims>& x) { face[at++] = outside_value(x); });
  }

  /// Computes the box sweep by sweep (two planes of the box's footprint with their low halo,
  /// folded over time), reading in[k] and writing out[k]; returns the checksum terms of the
  /// interior points of sweep T in the box.
  result_type compute_tile(const Box<dims>& box, const exec::FaceSet<const double, dims>& in,
                           const exec::FaceSet<double, dims>& out) const {
    return compute(box, in, out, nullptr);
  }

  /// As compute_tile, and writes the values of output_box(box) after sweep T into `keep`.
  result_type compute_tile(const Box<dims>& box, const exec::FaceSet<const double, dims>& in,
                           const exec::FaceSet<double, dims>& out,
                           const exec::SlabView<double, S>& keep) const {
    return compute(box, in, out, &keep);
  }

 private:
  Sor(const Point<S>& n, std::int64_t iterations, double omega)
      : n_(n), iterations_(iterations), omega_(omega), c0_(1.0 - omega), c1_(omega / (2.0 * S)) {}

  result_type compute(const Box<dims>& box, const exec::FaceSet<const double, dims>& in,
                      const exec::FaceSet<double, dims>& out,
                      const exec::SlabView<double, S>* keep) const {
    if (box.empty()) return 0;
    const Box<dims> hb = halo_box(box);
    std::array<Index, S> ext{};  // plane extents (with halo)
    std::array<Index, S> st{};   // plane strides
    Index plane = 1;
    for (int s = S - 1; s >= 0; --s) {
      ext[s] = hb.extent(s + 1);
      st[s] = plane;
      plane *= ext[s];
    }
    thread_local std::vector<double> buffer;
    if (buffer.size() < static_cast<std::size_t>(2 * plane)) {
      buffer.resize(static_cast<std::size_t>(2 * plane));
    }
    double* prev = buffer.data();
    double* cur = buffer.data() + plane;
    std::memcpy(prev, in[0].data(), static_cast<std::size_t>(plane) * sizeof(double));
    const Index steps = box.extent(0);
    for (Index tau = 0; tau < steps; ++tau) {
      const Index x0 = box.lo[0] + tau;
      for (int s = 0; s < S; ++s) {
        const double* face = in[s + 1].data() + (tau + 1) * layer_elems(s, ext);
        for_each_in_layer(s, ext, st, 0, [&](Index off) { cur[off] = *face++; });
      }
      sweep_plane(box, x0, ext, st, prev, cur);
      for (int s = 0; s < S; ++s) {
        double* face = out[s + 1].data();
        if (tau == 0)
          for_each_in_layer(s, ext, st, ext[s] - 1, [&](Index off) { *face++ = prev[off]; });
        face = out[s + 1].data() + (tau + 1) * layer_elems(s, ext);
        for_each_in_layer(s, ext, st, ext[s] - 1, [&](Index off) { *face++ = cur[off]; });
      }
      std::swap(prev, cur);
    }
    std::memcpy(out[0].data(), prev, static_cast<std::size_t>(plane) * sizeof(double));
    if (box.hi[0] - 1 != iterations_) return 0;
    if (keep != nullptr) keep_plane(box, st, prev, *keep);
    return plane_checksum(box, ext, st, prev);
  }

  // The last plane's values of output_box(box) into `keep`, row by row (plane coordinate
  // l_s = o_s + T - box.lo[s+1], the inverse of plane_checksum's o_s).
  void keep_plane(const Box<dims>& box, const std::array<Index, S>& st, const double* plane,
                  const exec::SlabView<double, S>& keep) const noexcept {
    const Box<S> b = output_box(box);
    const auto row = static_cast<std::size_t>(b.extent(S - 1)) * sizeof(double);
    exec::for_each_row(b, [&](const Point<S>& o) {
      Index off = 0;
      for (int s = 0; s < S; ++s) off += (o[s] + iterations_ - box.lo[s + 1]) * st[s];
      std::memcpy(keep.at(o), plane + off, row);
    });
  }

  // The box with its low halo: lo - 1 in every dimension.
  static Box<dims> halo_box(const Box<dims>& box) noexcept {
    Box<dims> b = box;
    for (int d = 0; d < dims; ++d) b.lo[d] -= 1;
    return b;
  }

  template <class F>
  static void for_each_point(const Box<dims>& b, F&& f) {
    if (b.empty()) return;
    Point<dims> x = b.lo;
    for (;;) {
      f(x);
      int d = dims - 1;
      while (d >= 0 && ++x[d] == b.hi[d]) x[d] = b.lo[d], --d;
      if (d < 0) return;
    }
  }

  // The original grid point of executor point x.
  static Point<S> original(const Point<dims>& x) noexcept {
    Point<S> o{};
    for (int s = 0; s < S; ++s) o[s] = x[s + 1] + 1 - x[0];
    return o;
  }

  // A point outside the sweeps (t = 0, or a grid point not in the interior): its fixed value.
  [[nodiscard]] double outside_value(const Point<dims>& x) const noexcept {
    return sor_initial_value<S>(original(x), n_);
  }

  static Index layer_elems(int s, const std::array<Index, S>& ext) noexcept {
    Index n = 1;
    for (int r = 0; r < S; ++r) n *= r == s ? 1 : ext[r];
    return n;
  }

  // Calls f(offset) for the plane's layer l_s = at, the other coordinates row-major.
  template <class F>
  static void for_each_in_layer(int s, const std::array<Index, S>& ext,
                                const std::array<Index, S>& st, Index at, F&& f) noexcept {
    std::array<Index, S> l{};
    l[s] = at;
    for (;;) {
      Index off = 0;
      for (int r = 0; r < S; ++r) off += l[r] * st[r];
      f(off);
      int r = S - 1;
      while (r >= 0 && (r == s || ++l[r] == ext[r])) {
        if (r != s) l[r] = 0;
        --r;
      }
      if (r < 0) return;
    }
  }

  // Sweep x0 over the box's footprint: plane coordinates l_s in [1, ext_s) (0 is the halo),
  // executor coordinate x_s = box.lo[s+1] - 1 + l_s, original o_s = x_s + 1 - x0. Rows along the
  // last dimension whose outer coordinates are interior run `strip` at a time, row l lagging l
  // points behind row 0 (its -e_{S-2} neighbour in this sweep is then ready): independent
  // dependence chains the CPU overlaps, each point the reference's expression of the same inputs.
  void sweep_plane(const Box<dims>& box, Index x0, const std::array<Index, S>& ext,
                   const std::array<Index, S>& st, const double* prev, double* cur) const noexcept {
    Row r;
    Index all = 0;
    for (int q = 0; q < S; ++q) all += st[q];
    for (int q = 0; q < S; ++q) {
      r.new_nb[q] = st[q];
      r.old_nb[q] = all - st[q];
    }
    r.self = all;
    r.len = ext[S - 1] - 1;
    r.first = box.lo[S] + 1 - x0;  // o_last of plane column 1 (row index c = 0)
    r.c_lo = std::clamp<Index>(1 - r.first, 0, r.len);
    r.c_hi = std::clamp<Index>(n_[S - 1] + 1 - r.first, r.c_lo, r.len);
    const Index rows = ext[S - 2] - 1;
    const Index row_stride = st[S - 2];
    // The outer coordinates: none for S = 2, l_0 for S = 3.
    const Index outer_count = S == 2 ? 1 : ext[0] - 1;
    for (Index outer = 0; outer < outer_count; ++outer) {
      Point<S> o{};
      Index off = 1;  // plane column 1
      bool outer_interior = true, outer_on_grid = true;
      if constexpr (S == 3) {
        o[0] = box.lo[1] + (outer + 1) - x0;
        off += (outer + 1) * st[0];
        outer_interior = o[0] >= 1 && o[0] <= n_[0];
        outer_on_grid = o[0] >= 0 && o[0] <= n_[0] + 1;
      }
      const auto row_o = [&](Index l) { return box.lo[S - 1] + l - x0; };  // o_{S-2} of row l
      const auto interior = [&](Index l) {
        return outer_interior && row_o(l) >= 1 && row_o(l) <= n_[S - 2];
      };
      Index l = 1;
      while (l <= rows) {
        Point<S> ol = o;
        ol[S - 2] = row_o(l);
        double* row = cur + off + l * row_stride;
        const double* p = prev + off + l * row_stride;
        if (!interior(l)) {
          const bool on_grid = outer_on_grid && ol[S - 2] >= 0 && ol[S - 2] <= n_[S - 2] + 1;
          for (Index c = 0; c < r.len; ++c) {
            ol[S - 1] = r.first + c;
            row[c] = on_grid ? sor_initial_value<S>(ol, n_) : 0.0;
          }
          ++l;
          continue;
        }
        Index k = 1;
        while (k < strip && l + k <= rows && interior(l + k)) ++k;
        for (Index m = 0; m < k; ++m) {
          Point<S> om = ol;
          om[S - 2] += m;
          fill_edges(r, om, row + m * row_stride);
        }
        if (k == strip) {
          strip_rows(r, row, p, row_stride);
          l += strip;
        } else {
          single_row(r, row, p);
          ++l;
        }
      }
    }
  }

  static constexpr int strip = 4;  // rows in flight

  // What every row of one sweep shares: neighbour offsets, length, the interior columns.
  struct Row {
    std::array<Index, S> new_nb{};  ///< this sweep's -e_s neighbours: row[c - new_nb[s]]
    std::array<Index, S> old_nb{};  ///< the previous sweep's +e_s neighbours: p[c - old_nb[s]]
    Index self = 0;                 ///< the point's previous value: p[c - self]
    Index len = 0;
    Index first = 0;
    Index c_lo = 0, c_hi = 0;  ///< interior columns [c_lo, c_hi)
  };

  // The columns of an interior row outside the grid's interior: initial values.
  void fill_edges(const Row& r, Point<S> o, double* row) const noexcept {
    for (Index c = 0; c < r.c_lo; ++c) {
      o[S - 1] = r.first + c;
      row[c] = sor_initial_value<S>(o, n_);
    }
    for (Index c = r.c_hi; c < r.len; ++c) {
      o[S - 1] = r.first + c;
      row[c] = sor_initial_value<S>(o, n_);
    }
  }

  // One point: s = ((-e_1 + ... + -e_S) + +e_1 + ... + +e_S) left to right, the -e_S term being
  // `left` (carried in a register), then c0 * old + c1 * s; each operation rounded to double.
  double point(const Row& r, const double* q, const double* p, double left) const noexcept {
    double sum = q[-r.new_nb[0]];
    for (int s = 1; s < S - 1; ++s) sum = sum + q[-r.new_nb[s]];
    sum = sum + left;
    for (int s = 0; s < S; ++s) sum = sum + p[-r.old_nb[s]];
    return c0_ * p[-r.self] + c1_ * sum;
  }

  void single_row(const Row& r, double* row, const double* p) const noexcept {
    double left = row[r.c_lo - 1];
    for (Index c = r.c_lo; c < r.c_hi; ++c) row[c] = left = point(r, row + c, p + c, left);
  }

  // `strip` interior rows from `row`, row m at column s - m in step s.
  void strip_rows(const Row& r, double* row, const double* p, Index stride) const noexcept {
    std::array<double, strip> left;
    for (int m = 0; m < strip; ++m) left[m] = row[m * stride + r.c_lo - 1];
    const auto step = [&](int m, Index c) {
      double* q = row + m * stride + c;
      *q = left[m] = point(r, q, p + m * stride + c, left[m]);
    };
    const Index lo = r.c_lo, hi = r.c_hi;
    Index s = lo;
    for (; s < std::min(lo + strip - 1, hi + strip - 1); ++s) {  // ramp up
      for (int m = 0; m < strip; ++m) {
        if (s - m >= lo && s - m < hi) step(m, s - m);
      }
    }
    for (; s < hi; ++s) {  // every row has a column
      for (int m = 0; m < strip; ++m) step(m, s - m);
    }
    for (; s < hi + strip - 1; ++s) {  // drain
      for (int m = 0; m < strip; ++m) {
        if (s - m >= lo && s - m < hi) step(m, s - m);
      }
    }
  }

  // The checksum terms of the interior points of the last plane (sweep T).
  result_type plane_checksum(const Box<dims>& box, const std::array<Index, S>& ext,
                             const std::array<Index, S>& st, const double* plane) const noexcept {
    std::array<Index, S> lin_stride{};
    Index m = 1;
    for (int s = S - 1; s >= 0; --s) lin_stride[s] = m, m *= n_[s] + 2;
    const Index x0 = box.hi[0] - 1;
    std::uint64_t sum = 0;
    std::array<Index, S> l{};
    for (auto& v : l) v = 1;
    for (;;) {
      bool interior = true;
      std::uint64_t lin = 0;
      Index off = 0;
      for (int s = 0; s < S; ++s) {
        const Index o = box.lo[s + 1] - 1 + l[s] + 1 - x0;
        interior = interior && o >= 1 && o <= n_[s];
        lin += static_cast<std::uint64_t>(o * lin_stride[s]);
        off += l[s] * st[s];
      }
      if (interior) sum += sor_point_hash(lin, plane[off]);
      int s = S - 1;
      while (s >= 0 && ++l[s] == ext[s]) l[s] = 1, --s;
      if (s < 0) return sum;
    }
  }

  Point<S> n_;
  std::int64_t iterations_;
  double omega_;
  double c0_;
  double c1_;
};

/// The whole (N_1+2) x ... array after T sweeps of the plain loop (issue 13's definition).
std::vector<double> sor2d_reference(Index n1, Index n2, std::int64_t iterations, double omega);
/// As sor2d_reference with three spatial loops.
std::vector<double> sor3d_reference(Index n1, Index n2, Index n3, std::int64_t iterations,
                                    double omega);
/// The checksum of a whole reference array: its interior points' terms, summed mod 2^64.
std::uint64_t sor_reference_checksum(const std::vector<double>& a, const std::vector<Index>& n);

}  // namespace tp::kernels
