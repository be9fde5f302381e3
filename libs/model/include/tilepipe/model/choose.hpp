// Automatic choice of the tile height, schedule and grouping that minimize the predicted time.
#pragma once

#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/model/machine.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tp::model {

/// A plan request where some choices are left to the model.
struct ChoiceRequest {
  plan::PlanRequest base;      ///< everything else; tile_kind must be height when auto_tile
  bool auto_tile = false;      ///< choose the tile height along the mapping dimension
  bool auto_schedule = false;  ///< choose blocking or overlap
  bool auto_grouping = false;  ///< choose hyperplane or vertical grouping
  /// Choose the block-cyclic factors (PlanRequest::cyclic, one per non-mapping dimension) among
  /// cyclic_candidates(); base.cyclic is ignored then.
  bool auto_cyclic = false;
  ModelOptions options;  ///< kernel, comm_thread, subtiles (vertical candidates only)
};

/// The chosen plan request and its prediction.
struct Choice {
  plan::PlanRequest request;     ///< the request with the chosen height, schedule and grouping
  Prediction prediction;         ///< of the plan Plan::make(request) gives
  bool chosen_by_model = false;  ///< false when nothing was left to the model
  std::int64_t evaluated = 0;    ///< plans predicted during the search
  std::string reason;            ///< one line: what was chosen among what, and the runner-up
};

/// Most cyclic factor vectors choose() tries with auto_cyclic, and the largest factor tried.
inline constexpr std::int64_t max_cyclic_candidates = 64;
inline constexpr std::int64_t max_cyclic_candidate_factor = 8;

/// The cyclic factor vectors tried for a space of `dims` dimensions (dims - 1 factors each), in
/// lexicographic order from all ones: every factor 1..c with c the largest whole number with
/// c <= max_cyclic_candidate_factor and c^(dims - 1) <= max_cyclic_candidates (8 for 2-D and
/// 3-D spaces, 4 for 4-D, 2 for 5-D to 7-D). Empty for dims < 2.
std::vector<plan::Index> cyclic_candidates(int dims);

/// The largest candidate list candidate_heights() enumerates exhaustively.
inline constexpr std::size_t max_exhaustive_heights = 20000;

/// Candidate tile heights for a mapping dimension of `extent` points, ascending, all >= min_height:
/// the smallest height giving each distinct tile count ceil(extent / z) (at most 2 sqrt(extent)
/// of them; exact, see docs/model.md). Past max_exhaustive_heights, about that many tile counts
/// spaced geometrically instead (choose() refines around the best).
std::vector<std::int64_t> candidate_heights(std::int64_t extent, std::int64_t min_height);

/// Minimizes the predicted time (Prediction::total) over the choices left open (the tile height
/// over candidate_heights, then exhaustively around the best when the list was sampled; the
/// schedule over blocking/overlap; the grouping over hyperplane/vertical; the cyclic factors over
/// cyclic_candidates, those the planner refuses skipped). Ties go to the smaller height, to
/// overlap, hyperplane and to the smaller cyclic factors (lexicographically). Errors: auto_tile
/// with a tile that is not a height, no legal candidate, or the errors of Plan::make and predict
/// for a fully given request.
Expected<Choice> choose(const ChoiceRequest& request, const Machine& machine);

}  // namespace tp::model
