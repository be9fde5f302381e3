// sw_search: many Smith-Waterman pairs (queries against a database) on threads: one pair per
// thread for short pairs, long pairs tiled on every thread one after the other.
#pragma once

#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/sw_align.hpp>
#include <tilepipe/support/expected.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tp::kernels {

/// One pair of a search: query record `query` against database record `target` (indices).
struct SwPair {
  std::size_t query = 0;
  std::size_t target = 0;
};

/// The outcome of one pair: the score pass's best score and end, and the alignment unless the
/// search runs score-only.
struct SwPairResult {
  SwResult best;
  std::optional<SwAlignment> alignment;
};

/// How a search computes; every choice gives the same results.
struct SwSearchOptions {
  /// Pairs of at least this many cells (query length x target length) run one after the other,
  /// each tiled on all `threads` (the score pass's wavefront and the traceback's threads, as a
  /// single pair runs); smaller pairs run one per thread, taken in order from a shared counter.
  /// 2^24 cells: below, one pair's score pass and traceback take tens of milliseconds on one
  /// core, so whole pairs keep every thread busy with a short tail; above, a pair is long enough
  /// that its own tiles (and the traceback's split boxes, from 2^18 cells) give each thread work.
  static constexpr std::int64_t default_tiled_cells = std::int64_t{1} << 24;
  int threads = 1;
  std::int64_t tiled_cells = default_tiled_cells;
  bool traceback = true;  ///< false: score and end only (no alignment)
  SwOptions sw;           ///< the tile function
};

/// Aligns each of `pairs` (query and target indices into `queries` and `targets`, encoded with
/// `matrix`): results in the order of `pairs`, each the same as a single `tilepipe align` of the
/// pair gives (SwKernel's score and end, sw_traceback's alignment), whatever the thread count and
/// `tiled_cells`. An Error (a sequence SwKernel refuses) names no pair: the caller does.
/// Thread-safe; allocates O(threads x (n + m)) at a time.
Expected<std::vector<SwPairResult>> sw_search(const ScoreMatrix& matrix,
                                              std::span<const std::vector<std::uint8_t>> queries,
                                              std::span<const std::vector<std::uint8_t>> targets,
                                              GapCosts gaps, std::span<const SwPair> pairs,
                                              const SwSearchOptions& options);

}  // namespace tp::kernels
