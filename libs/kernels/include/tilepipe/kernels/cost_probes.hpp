// The compute probes of the built-in kernels for calibration: a kernel's cost per point on tiles
// of one cross-section, as a rank walks its row of tiles (exec::TileCostProbe for the kernels
// that keep their array, exec::FrontierTileCostProbe for those that pass faces).
#pragma once

#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace tp::kernels {

/// The probe of the built-in kernel `kernel` for tiles of cross-section `cross` (one extent per
/// dimension of the space the executor runs, the time loop first for sor2d/sor3d; the one along
/// `along` is ignored) at heights 1..max_height, through a slab (or a row) of at least
/// `slab_points` points allocated and filled now, not timed: a function of the tile height that
/// runs one timed pass and returns seconds per point. `params`: the kernel's --param values
/// (sweep3d's `angles` changes its cost; nullptr: the defaults). What each measures:
/// - wave2d/3d/4d, sweep3d (octant 0, first iteration, its p_0 added into the home sums as a
///   run's tiles do): tiles of the kernel's slab;
/// - sor2d/sor3d: tiles of the skewed space of T = the time extent of the row and a grid as wide
///   as the cross-section;
/// - sw: tiles of random protein sequences (uniform over the 20 amino acids) scored by BLOSUM62
///   with gaps 10/1 and the best SIMD tile function of this CPU: the cost of sequences whose
///   scores stay in 8-bit lanes (a pair of long similar sequences that needs wider lanes costs
///   more).
/// Errors: an unknown kernel, a cross-section of another rank, an extent < 1, bad parameters.
Expected<std::function<double(std::int64_t height)>> builtin_cost_probe(
    std::string_view kernel, const std::vector<std::int64_t>& cross, int along,
    std::int64_t max_height, std::int64_t slab_points, const exec::ParamValues* params = nullptr);

}  // namespace tp::kernels
