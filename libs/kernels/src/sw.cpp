// The sw tile function and the sequential Gotoh reference.
#include <tilepipe/kernels/sw.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

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
  return SwKernel(matrix, query, target, gaps);
}

void SwKernel::boundary_face(int k, const exec::Box<2>& box,
                             std::span<face_type> face) const noexcept {
  // Face 0: H (w+1 values) then F; face 1: H (h values) then E.
  const std::size_t h_count = k == 0 ? static_cast<std::size_t>(box.extent(1)) + 1
                                     : static_cast<std::size_t>(box.extent(0));
  std::fill(face.begin(), face.begin() + static_cast<std::ptrdiff_t>(h_count), 0);
  std::fill(face.begin() + static_cast<std::ptrdiff_t>(h_count), face.end(), minus_infinity);
}

SwResult SwKernel::compute_tile(const exec::Box<2>& box,
                                const exec::FaceSet<const face_type, 2>& in,
                                const exec::FaceSet<face_type, 2>& out) const noexcept {
  const exec::Index w = box.extent(1);
  const exec::Index h = box.extent(0);
  std::copy(in[0].begin(), in[0].end(), out[0].begin());
  std::int32_t* hrow = out[0].data();  // H[i-1 or i][c0-1 .. c1-1]
  std::int32_t* frow = hrow + w + 1;   // F[i-1 or i][c0 .. c1-1]
  const std::int32_t* h_left = in[1].data();
  const std::int32_t* e_left = h_left + h;
  std::int32_t* h_right = out[1].data();
  std::int32_t* e_right = h_right + h;
  const std::int32_t open = gaps_.open;
  const std::int32_t extend = gaps_.extend;
  const std::uint8_t* t = target_.data() + (box.lo[1] - 1);
  const std::int32_t* scores = matrix_->scores().data();
  const auto alphabet = static_cast<std::size_t>(matrix_->size());
  SwResult best;
  for (exec::Index r = 0; r < h; ++r) {
    const exec::Index i = box.lo[0] + r;
    const std::int32_t* srow = scores + query_[static_cast<std::size_t>(i - 1)] * alphabet;
    std::int32_t diag = hrow[0];
    std::int32_t left = h_left[r];
    std::int32_t e = e_left[r];
    hrow[0] = left;
    // The row's maximum without a branch per cell; its first position is found afterwards in
    // hrow, which now holds the row's H values, only when it beats the tile's best.
    std::int32_t row_best = 0;
    for (exec::Index c = 0; c < w; ++c) {
      // Only e and cell depend on the previous cell; the rest is off the critical path.
      const std::int32_t up = hrow[c + 1];
      const std::int32_t f = std::max(up - open, frow[c] - extend);
      const std::int32_t a = std::max(std::max(diag + srow[t[c]], 0), f);
      e = std::max(left - open, e - extend);
      const std::int32_t cell = std::max(a, e);
      diag = up;
      hrow[c + 1] = cell;
      frow[c] = f;
      left = cell;
      row_best = std::max(row_best, cell);
    }
    h_right[r] = left;
    e_right[r] = e;
    if (row_best > best.score) {
      exec::Index c = 0;
      while (hrow[c + 1] != row_best) ++c;
      best = SwResult{row_best, i, box.lo[1] + c};
    }
  }
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
