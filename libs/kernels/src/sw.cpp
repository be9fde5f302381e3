// The sw tile function and the sequential Gotoh reference.
#include <tilepipe/kernels/sw.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

// The 8-row vector strips use GCC vector extensions compiled for AVX2, chosen at run time.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TP_SW_AVX2 1
#endif

namespace tp::kernels {

Expected<SwKernel> SwKernel::make(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                  std::span<const std::uint8_t> target, GapCosts gaps) {
  if (query.empty() || target.empty()) {
    return fail(Errc::invalid_argument, "sw: the query and the target must not be empty");
  }
  if (gaps.open < 0 || gaps.open > ScoreMatrix::max_entry || gaps.extend < 0 ||
      gaps.extend > ScoreMatrix::max_entry) {
    return fail(Errc::invalid_argument,
                fmt::format("sw: gap costs must lie in [0, {}] (open {}, extend {})",
                            ScoreMatrix::max_entry, gaps.open, gaps.extend));
  }
  const auto shorter = static_cast<std::int64_t>(std::min(query.size(), target.size()));
  if (shorter * std::max(matrix.max_score(), 1) > (std::int64_t{1} << 30)) {
    return fail(Errc::out_of_range, "sw: sequences too long for 32-bit scores with this matrix");
  }
  for (const std::uint8_t c : query) TP_EXPECTS(c < matrix.size());
  for (const std::uint8_t c : target) TP_EXPECTS(c < matrix.size());
  SwKernel k(matrix, query, target, gaps);
#ifdef TP_SW_AVX2
  k.avx2_ = __builtin_cpu_supports("avx2") != 0;
#endif
  return k;
}

void SwKernel::boundary_face(int k, const exec::Box<2>& box,
                             std::span<face_type> face) const noexcept {
  // Face 0: H (w+1 values) then F; face 1: H (h values) then E.
  const std::size_t h_count = k == 0 ? static_cast<std::size_t>(box.extent(1)) + 1
                                     : static_cast<std::size_t>(box.extent(0));
  std::fill(face.begin(), face.begin() + static_cast<std::ptrdiff_t>(h_count), 0);
  std::fill(face.begin() + static_cast<std::ptrdiff_t>(h_count), face.end(), minus_infinity);
}

namespace {

// One tile's pointers into its faces and its inputs (see the face layout in sw.hpp).
struct Tile {
  std::int32_t* hrow;          // H of the row above the next row to compute, from column c0-1
  std::int32_t* frow;          // F of that row, from column c0
  const std::int32_t* h_left;  // H of column c0-1, rows r0 .. r1-1
  const std::int32_t* e_left;  // E of column c0-1
  std::int32_t* h_right;       // H of column c1-1
  std::int32_t* e_right;       // E of column c1-1
  const std::uint8_t* t;       // target residues of columns c0 .. c1-1
  const std::uint8_t* q;       // query residues of rows r0 .. r1-1
  const std::int32_t* scores;  // the matrix, row-major
  std::size_t alphabet;
  exec::Index w;
  std::int32_t open;
  std::int32_t extend;
  exec::Index i0;  // 1-based query position of row r0
  exec::Index j0;  // 1-based target position of column c0
};

// Rows [r, r_end) one after the other: the scalar recurrence, one cell per iteration.
void scalar_rows(const Tile& k, exec::Index r, exec::Index r_end, SwResult& best) noexcept {
  std::int32_t* hrow = k.hrow;
  std::int32_t* frow = k.frow;
  for (; r < r_end; ++r) {
    const std::int32_t* srow = k.scores + k.q[r] * k.alphabet;
    std::int32_t diag = hrow[0];
    std::int32_t left = k.h_left[r];
    std::int32_t e = k.e_left[r];
    hrow[0] = left;
    // The row's maximum without a branch per cell; its first position is found afterwards in
    // hrow, which now holds the row's H values, only when it beats the tile's best.
    std::int32_t row_best = 0;
    for (exec::Index c = 0; c < k.w; ++c) {
      // Only e and cell depend on the previous cell; the rest is off the critical path.
      const std::int32_t up = hrow[c + 1];
      const std::int32_t f = std::max(up - k.open, frow[c] - k.extend);
      const std::int32_t a = std::max(std::max(diag + srow[k.t[c]], 0), f);
      e = std::max(left - k.open, e - k.extend);
      const std::int32_t cell = std::max(a, e);
      diag = up;
      hrow[c + 1] = cell;
      frow[c] = f;
      left = cell;
      row_best = std::max(row_best, cell);
    }
    k.h_right[r] = left;
    k.e_right[r] = e;
    if (row_best > best.score) {
      exec::Index c = 0;
      while (hrow[c + 1] != row_best) ++c;
      best = SwResult{row_best, k.i0 + r, k.j0 + c};
    }
  }
}

#ifdef TP_SW_AVX2
// Eight rows at once, one per lane, lane l lagging l columns behind lane 0 (an anti-diagonal of
// the strip per step): lane l at step s computes column s - l, taking its upper neighbour from
// lane l-1's previous step. All vector operations are lane-wise except the one-lane shifts.
// Compiled for AVX2 only; SwKernel::make selects it when the CPU has AVX2.
constexpr int lanes = 8;
using V = std::int32_t __attribute__((vector_size(lanes * sizeof(std::int32_t))));

[[gnu::target("avx2")]] inline V splat(std::int32_t x) noexcept {
  return V{} + x;
}
[[gnu::target("avx2")]] inline V vmax(V a, V b) noexcept {
  return a > b ? a : b;
}
// Lane l gets lane l-1 of v; lane 0 gets x.
[[gnu::target("avx2")]] inline V shift_in(V v, std::int32_t x) noexcept {
  return __builtin_shuffle(v, splat(x), V{lanes, 0, 1, 2, 3, 4, 5, 6});
}

[[gnu::target("avx2")]] void vector_strip(const Tile& k, exec::Index r, SwResult& best) noexcept {
  constexpr exec::Index block = 64;  // steps whose substitution scores are gathered at once
  const V lane_id{0, 1, 2, 3, 4, 5, 6, 7};
  const V open = splat(k.open), extend = splat(k.extend), zero = splat(0);
  const std::int32_t* srow[lanes];
  V hcur, e, fcur = splat(SwKernel::minus_infinity), up_prev = splat(0);
  for (int l = 0; l < lanes; ++l) {
    srow[l] = k.scores + k.q[r + l] * k.alphabet;
    hcur[l] = k.h_left[r + l];
    e[l] = k.e_left[r + l];
  }
  up_prev[0] = k.hrow[0];
  V best_h = zero, best_c = zero;
  const exec::Index steps = k.w + lanes - 1;
  alignas(32) std::int32_t prof[block][lanes];
  for (exec::Index s0 = 0; s0 < steps; s0 += block) {
    const exec::Index n = std::min(block, steps - s0);
    if (s0 - (lanes - 1) >= 0 && s0 + n <= k.w) {  // every lane inside the tile: no tests
      for (int l = 0; l < lanes; ++l) {
        const std::uint8_t* t = k.t + (s0 - l);
        for (exec::Index b = 0; b < n; ++b) prof[b][l] = srow[l][t[b]];
      }
    } else {
      for (int l = 0; l < lanes; ++l) {
        for (exec::Index b = 0; b < n; ++b) {
          const exec::Index c = s0 + b - l;
          prof[b][l] = (c >= 0 && c < k.w) ? srow[l][k.t[c]] : 0;
        }
      }
    }
    for (exec::Index b = 0; b < n; ++b) {
      const exec::Index s = s0 + b;
      const V up = shift_in(hcur, s < k.w ? k.hrow[s + 1] : 0);
      const V fup = shift_in(fcur, s < k.w ? k.frow[s] : SwKernel::minus_infinity);
      V p;
      __builtin_memcpy(&p, prof[b], sizeof p);
      const V f = vmax(up - open, fup - extend);
      const V a = vmax(vmax(up_prev + p, zero), f);
      const V e_new = vmax(hcur - open, e - extend);
      const V h = vmax(a, e_new);
      up_prev = up;
      const V c = splat(static_cast<std::int32_t>(s)) - lane_id;
      const V valid = (c >= 0) & (c < splat(static_cast<std::int32_t>(k.w)));
      hcur = valid ? h : hcur;
      e = valid ? e_new : e;
      fcur = valid ? f : fcur;
      const V better = valid & (h > best_h);
      best_h = better ? h : best_h;
      best_c = better ? c : best_c;
      if (s >= lanes - 1) {  // the last lane finished column s - 7: the strip's bottom row
        k.hrow[s - lanes + 2] = h[lanes - 1];
        k.frow[s - lanes + 1] = f[lanes - 1];
      }
      if (s >= k.w - 1) {  // lane s - w + 1 finished the tile's last column
        const auto l = static_cast<int>(s - k.w + 1);
        k.h_right[r + l] = h[l];
        k.e_right[r + l] = e_new[l];
      }
    }
  }
  k.hrow[0] = k.h_left[r + lanes - 1];
  for (int l = 0; l < lanes; ++l) {
    if (best_h[l] > best.score) best = SwResult{best_h[l], k.i0 + r + l, k.j0 + best_c[l]};
  }
}
#endif

}  // namespace

SwResult SwKernel::compute_tile(const exec::Box<2>& box,
                                const exec::FaceSet<const face_type, 2>& in,
                                const exec::FaceSet<face_type, 2>& out) const noexcept {
  const exec::Index w = box.extent(1);
  const exec::Index h = box.extent(0);
  std::copy(in[0].begin(), in[0].end(), out[0].begin());
  Tile k;
  k.hrow = out[0].data();
  k.frow = k.hrow + w + 1;
  k.h_left = in[1].data();
  k.e_left = k.h_left + h;
  k.h_right = out[1].data();
  k.e_right = k.h_right + h;
  k.t = target_.data() + (box.lo[1] - 1);
  k.q = query_.data() + (box.lo[0] - 1);
  k.scores = matrix_->scores().data();
  k.alphabet = static_cast<std::size_t>(matrix_->size());
  k.w = w;
  k.open = gaps_.open;
  k.extend = gaps_.extend;
  k.i0 = box.lo[0];
  k.j0 = box.lo[1];
  SwResult best;
  exec::Index r = 0;
#ifdef TP_SW_AVX2
  if (avx2_) {
    for (; r + lanes <= h; r += lanes) vector_strip(k, r, best);
  }
#endif
  scalar_rows(k, r, h, best);
  return best;
}

SwResult sw_sequential(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                       std::span<const std::uint8_t> target, GapCosts gaps) {
  const std::size_t m = target.size();
  std::vector<std::int32_t> hrow(m + 1, 0), frow(m + 1, SwKernel::minus_infinity);
  SwResult best;
  for (std::size_t i = 1; i <= query.size(); ++i) {
    std::int32_t diag = 0, left = 0, e = SwKernel::minus_infinity;
    for (std::size_t j = 1; j <= m; ++j) {
      e = std::max(left - gaps.open, e - gaps.extend);
      frow[j] = std::max(hrow[j] - gaps.open, frow[j] - gaps.extend);
      const std::int32_t cell =
          std::max({diag + matrix.score(query[i - 1], target[j - 1]), 0, e, frow[j]});
      diag = hrow[j];
      hrow[j] = cell;
      left = cell;
      if (cell > best.score) {
        best = SwResult{cell, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)};
      }
    }
  }
  return best;
}

}  // namespace tp::kernels
