// The compute probes of the built-in resident kernels for calibration: a kernel's cost per point
// on tiles of one cross-section, streamed from memory as a rank walks its row of tiles.
#pragma once

#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace tp::kernels {

/// The probe of `kernel` (wave2d, wave3d or wave4d) for tiles of cross-section `cross` (one extent
/// per dimension; the one along `along` is ignored) at heights 1..max_height, through a slab of at
/// least `slab_points` points (allocated and filled now, not timed): a function of the tile height
/// that runs one timed pass and returns seconds per point. Errors: another kernel, a cross-section
/// of another rank, an extent < 1.
Expected<std::function<double(std::int64_t height)>> wave_cost_probe(
    std::string_view kernel, const std::vector<std::int64_t>& cross, int along,
    std::int64_t max_height, std::int64_t slab_points);

}  // namespace tp::kernels
