// A rank's steps tabulated from its rows of tiles (the block-cyclic mapping, ADR 0018): which plan
// times it runs, and per step how many of its CPUs send and receive faces across each mesh
// dimension, as runs of consecutive steps with the same counts.
#pragma once

#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <vector>

namespace tp::sim::detail {

/// `len` consecutive steps of a rank at consecutive plan times from `time`, with the same counts.
struct StepRun {
  std::int64_t first_step = 0;  ///< the rank's own step index of the first
  std::int64_t time = 0;        ///< the plan's time step of the first
  std::int64_t len = 0;
  bool full = false;  ///< some active tile is not the last along the mapping dimension
  std::vector<std::int64_t> senders;    ///< per factor: CPUs sending a face to another rank
  std::vector<std::int64_t> receivers;  ///< per factor: CPUs receiving a face from another rank
};

/// The steps of one rank as the executor runs them (exec's build_rank_layout: the plan times at
/// which the rank has tiles, in order, without the empty ones between cycles).
struct StepTable {
  std::vector<StepRun> runs;
  std::int64_t steps = 0;
  std::vector<std::int64_t> dst;  ///< per factor: the rank its faces go to (the wrap included)
  /// Per factor: the plan time of a sent face's receiving tile minus the sending tile's (the same
  /// for every face the rank sends across that factor: the mapping is periodic).
  std::vector<std::int64_t> gap;
  std::vector<std::int64_t> rows;  ///< per factor: the rank's CPU rows in one cycle

  /// The run holding step s (0 <= s < steps).
  [[nodiscard]] const StepRun& run_of(std::int64_t s) const;
  [[nodiscard]] std::int64_t time_of_step(std::int64_t s) const;
  /// The rank's step running at plan time t (the rank must have tiles at t).
  [[nodiscard]] std::int64_t step_of_time(std::int64_t t) const;
};

/// Builds the table of `rank` by enumerating its rows of tiles (not its tiles: O(rows log rows)).
/// `dim_of[f]` is the space dimension of mesh factor f; `faces[f]`: faces cross factor f (a
/// dependence reaches across it). Errc::internal when the schedule breaks the table's
/// assumptions (a row's tiles at consecutive times, one gap per factor).
Expected<StepTable> build_step_table(const plan::Plan& plan, std::int64_t rank,
                                     const std::vector<int>& dim_of,
                                     const std::vector<bool>& faces);

}  // namespace tp::sim::detail
