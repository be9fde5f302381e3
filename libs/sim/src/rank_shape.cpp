// Offset histograms of a rank's CPU grid (sums of coordinates), as prefix sums.
#include "rank_shape.hpp"

#include <tilepipe/support/assert.hpp>

#include <algorithm>

namespace tp::sim::detail {

RankShape::RankShape(std::vector<std::int64_t> rows) : rows_(std::move(rows)) {
  for (auto r : rows_) {
    TP_EXPECTS(r >= 1);
    depth_ += r - 1;
  }
  all_ = prefix_counts(rows_, -1);
  for (int f = 0; f < static_cast<int>(rows_.size()); ++f) {
    others_.push_back(prefix_counts(rows_, f));
  }
}

std::vector<std::int64_t> RankShape::prefix_counts(const std::vector<std::int64_t>& rows,
                                                   int skip) {
  // Convolution of the uniform counts 1..1 (rows_f of them) over the dimensions kept.
  std::vector<std::int64_t> hist{1};
  for (int f = 0; f < static_cast<int>(rows.size()); ++f) {
    if (f == skip) continue;
    const auto r = rows[static_cast<std::size_t>(f)];
    std::vector<std::int64_t> next(hist.size() + static_cast<std::size_t>(r) - 1, 0);
    for (std::size_t a = 0; a < hist.size(); ++a) {
      for (std::int64_t c = 0; c < r; ++c) next[a + static_cast<std::size_t>(c)] += hist[a];
    }
    hist = std::move(next);
  }
  std::vector<std::int64_t> prefix(hist.size() + 1, 0);
  for (std::size_t x = 0; x < hist.size(); ++x) prefix[x + 1] = prefix[x] + hist[x];
  return prefix;
}

std::int64_t RankShape::range(const std::vector<std::int64_t>& prefix, std::int64_t lo,
                              std::int64_t hi) {
  const auto top = static_cast<std::int64_t>(prefix.size()) - 1;
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min<std::int64_t>(hi, top - 1);
  if (hi < lo) return 0;
  return prefix[static_cast<std::size_t>(hi + 1)] - prefix[static_cast<std::size_t>(lo)];
}

}  // namespace tp::sim::detail
