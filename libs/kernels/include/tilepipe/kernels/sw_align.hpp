// sw_align: one optimal local alignment (the traceback) in linear space: the score pass's end
// cell, a reverse score pass for the start, Myers-Miller for the path (docs/adr/0007).
#pragma once

#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tp::kernels {

/// A run of `length` alignment columns of one kind (SAM's letters, the target as the reference):
/// 'M' a query residue against a target residue (identical or not), 'I' a query residue against a
/// gap (inserted into the target), 'D' a target residue against a gap (deleted from the query).
struct SwOp {
  char op = 'M';
  std::int64_t length = 0;
  friend bool operator==(const SwOp&, const SwOp&) = default;
};

/// One optimal local alignment: its score, where it starts and ends (1-based, inclusive, as EMBOSS
/// water prints them) and its columns from start to end. When no pair scores above 0: score 0,
/// every position 0, no columns.
struct SwAlignment {
  std::int32_t score = 0;
  std::int64_t query_start = 0;
  std::int64_t query_end = 0;
  std::int64_t target_start = 0;
  std::int64_t target_end = 0;
  std::vector<SwOp> ops;
  friend bool operator==(const SwAlignment&, const SwAlignment&) = default;
};

/// Counts over an alignment's columns, as EMBOSS water (and BLAST's tabular output) count them.
struct SwAlignmentStats {
  std::int64_t length = 0;      ///< columns
  std::int64_t identity = 0;    ///< M columns of identical residues (an added U is none)
  std::int64_t similarity = 0;  ///< M columns where is_similar holds
  std::int64_t gaps = 0;        ///< I and D columns
  std::int64_t mismatches = 0;  ///< M columns that are not identities
  std::int64_t gap_opens = 0;   ///< runs of I or D columns
};

/// How the traceback computes; every choice gives the same alignment.
struct SwTracebackOptions {
  /// Threads of the reverse score pass and of Myers-Miller (its half passes and split boxes, each
  /// box on a thread with its own four rows of the box's width).
  int threads = 1;
  SwOptions sw;  ///< the reverse score pass's tile function
};

/// The cost of an I or D run of `length` columns: open + (length - 1) * min(open, extend), what
/// the score pass's recurrence charges (equal to water's open + (length - 1) * extend whenever
/// extend <= open).
std::int64_t gap_run_cost(GapCosts gaps, std::int64_t length) noexcept;

/// The CIGAR string of the columns ("12M2I30M"); "" for no columns.
std::string cigar(const SwAlignment& a);

/// The alignment's score recomputed from its columns: matrix scores of M columns minus
/// gap_run_cost of each I or D run. O(columns).
std::int64_t alignment_score(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                             std::span<const std::uint8_t> target, GapCosts gaps,
                             const SwAlignment& a);

/// Whether a column of residues a (query) and b (target) counts as similar as EMBOSS counts it
/// (ajalign.c, alignConsStats for two sequences): a positive score, and a positive score of a or b
/// against itself. (An identical pair of N, or of X, is an identity but not similar.)
bool is_similar(const ScoreMatrix& matrix, std::uint8_t a, std::uint8_t b) noexcept;

/// The column counts of an alignment (query and target encoded with `matrix`).
SwAlignmentStats alignment_stats(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                 std::span<const std::uint8_t> target, const SwAlignment& a);

/// One optimal local alignment ending at `end`, the score pass's result (SwKernel or
/// sw_sequential; the first maximum in row-major order). Tie rule (docs/adr/0007): among the
/// optimal alignments ending there, the one with the largest start (query_start, then
/// target_start); between those two cells, the path Myers-Miller's recursion chooses (middle query
/// row; the smallest target column, a crossing at a cell before a crossing inside a vertical gap;
/// in a one-row box the leftmost match, a
/// gap only if strictly better). The alignment begins and ends with M columns. Memory
/// O(n + m); time about three score passes over the box [1, end] (the reverse pass on the tile
/// function, the path's half passes in the ISA's striped int32 lanes where the costs fit them).
/// The recomputed score is asserted equal to `end.score`.
Expected<SwAlignment> sw_traceback(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                   std::span<const std::uint8_t> target, GapCosts gaps,
                                   const SwResult& end, const SwTracebackOptions& options = {});

/// A best global alignment of `query` and `target` (gaps at either end cost as anywhere else) in
/// O(n + m) memory by Myers and Miller's recursion, with the choices of sw_traceback. Its score is
/// alignment_score of the columns with both starts at 1. `isa`: the half passes' lanes (unset:
/// best_sw_isa()); every ISA gives the same columns.
std::vector<SwOp> sw_global_path(const ScoreMatrix& matrix, std::span<const std::uint8_t> query,
                                 std::span<const std::uint8_t> target, GapCosts gaps,
                                 int threads = 1, std::optional<SwIsa> isa = std::nullopt);

}  // namespace tp::kernels
