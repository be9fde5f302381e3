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
  ModelOptions options;        ///< kernel, comm_thread, subtiles (vertical candidates only)
};

/// The chosen plan request and its prediction.
struct Choice {
  plan::PlanRequest request;     ///< the request with the chosen height, schedule and grouping
  Prediction prediction;         ///< of the plan Plan::make(request) gives
  bool chosen_by_model = false;  ///< false when nothing was left to the model
  std::int64_t evaluated = 0;    ///< plans predicted during the search
  std::string reason;            ///< one line: what was chosen among what, and the runner-up
};

/// The largest candidate list candidate_heights() enumerates exhaustively.
inline constexpr std::size_t max_exhaustive_heights = 20000;

/// Candidate tile heights for a mapping dimension of `extent` points, ascending, all >= min_height:
/// the smallest height giving each distinct tile count ceil(extent / z) (at most 2 sqrt(extent)
/// of them; exact, see docs/model.md). Past max_exhaustive_heights, about that many tile counts
/// spaced geometrically instead (choose() refines around the best).
std::vector<std::int64_t> candidate_heights(std::int64_t extent, std::int64_t min_height);

/// Minimizes the predicted time over the choices left open (the tile height over
/// candidate_heights, then exhaustively around the best when the list was sampled; the schedule
/// over blocking/overlap; the grouping over hyperplane/vertical). Ties go to the smaller height
/// and to overlap, hyperplane. Errors: auto_tile with a tile that is not a height, no legal
/// candidate, or the errors of Plan::make and predict for a fully given request.
Expected<Choice> choose(const ChoiceRequest& request, const Machine& machine);

}  // namespace tp::model
