// Fitting machine parameters from calibration measurements: the linear link cost and t_comp1 by
// tile size (what `tilepipe calibrate` writes into a machine file, docs/model.md "Calibration").
#pragma once

#include <tilepipe/model/machine.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <vector>

namespace tp::model {

/// One measured transfer: a message of `bytes` bytes took `time` one way.
struct TransferSample {
  std::int64_t bytes = 0;  ///< >= 0
  Seconds time{0};         ///< > 0
};

/// The median of `values` (the upper middle one for an even count). Precondition: not empty.
double median(std::vector<double> values);

/// Fits time = latency + bytes / bandwidth by least squares on the relative error (weights
/// 1 / time^2, so that small and large messages count alike). A negative intercept is clamped to
/// latency 0 and the slope refitted through the origin. Errors: fewer than 2 distinct sizes, a
/// time that is not > 0 and finite, or a fitted slope <= 0 (time not growing with size).
Expected<LinkCost> fit_link_cost(const std::vector<TransferSample>& samples);

/// Turns raw per-tile-shape measurements into valid machine-file samples: grouped by tile_points
/// (the median t_comp1 of a group), sorted by tile_points, and with the tile time g t_comp1(g)
/// made non-decreasing (a tile measured faster than a smaller one is given the smaller one's
/// tile time: the running maximum; the model's search relies on it). Errors: no sample, a
/// tile_points < 1, a t_comp1 that is not > 0 and finite.
Expected<std::vector<ComputeSample>> compute_samples_from(std::vector<ComputeSample> raw);

/// A kernel's compute cost from its valid samples: t_comp1 = the median of the samples' t_comp1
/// (used where a file has no samples), element_bytes as given. Errors as compute_samples_from.
Expected<ComputeCost> compute_cost_from(std::vector<ComputeSample> raw, std::int64_t element_bytes);

}  // namespace tp::model
