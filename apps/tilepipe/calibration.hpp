// What calibrate and sweep share around runtime::calibrate: the built-in kernels' probes and
// shapes, the progress bar, the tile-height list.
#pragma once

#include <tilepipe/runtime/calibrate.hpp>
#include <tilepipe/runtime/kernel_registry.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tp::app {

/// A calibration of the built-in kernels (their probes) with a progress bar on stderr unless
/// `quiet`; the other fields keep runtime::CalibrateSpec's defaults.
runtime::CalibrateSpec builtin_calibration(bool quiet);

/// Routes the probes of kernel `entry` (a built-in kernel's or a --plugin's) to its own
/// tile-cost probe with `params` (its --param values: sweep3d's angles change its cost); other
/// kernels keep spec's probes. `entry` must outlive the spec.
void add_kernel_probe(runtime::CalibrateSpec& spec, const runtime::KernelEntry& entry,
                      const exec::ParamValues& params);

/// Fails unless `entry` has a tile-cost probe (every kernel made by make_entry has one):
/// `command` names who asks.
Status check_plugin_probe(const runtime::KernelEntry& entry, std::string_view command);

/// The generic shapes: wave2d 512 x z, wave3d 12 x 6 x z, wave4d 6 x 6 x 6 x z for tile
/// heights z from 64 to 65536 (fewer and smaller with `quick`).
std::vector<runtime::ComputeShape> default_shapes(bool quick);

/// Parses tile heights: "A:B" (A, 2A, 4A, ... up to B, and B itself), or a comma list "256,1024".
/// Errors (naming `flag`): not a number, a height < 1, an empty range (A > B), a height above
/// `extent` (the mapping dimension's extent), more than 64 heights.
Expected<std::vector<std::int64_t>> parse_height_list(const std::string& text, std::int64_t extent,
                                                      const std::string& flag);

}  // namespace tp::app
