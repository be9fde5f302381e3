// What calibrate and sweep share around runtime::calibrate (calibration.hpp).
#include "calibration.hpp"

#include "progress_line.hpp"

#include <tilepipe/kernels/cost_probes.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace tp::app {

runtime::CalibrateSpec builtin_calibration(bool quiet) {
  runtime::CalibrateSpec spec;
  spec.probes = [](const runtime::ComputeShape& shape, std::int64_t max_height,
                   std::int64_t slab_points) -> Expected<runtime::TileCostPass> {
    return kernels::builtin_cost_probe(shape.kernel, shape.tile, shape.along, max_height,
                                       slab_points);
  };
  if (quiet) return spec;
  // A bar redrawn in place on a terminal, a line per stage otherwise.
  spec.progress = [](int done, int total, std::string_view what) {
    draw_bar("calibrate", done, total, what, 40);
  };
  return spec;
}

void add_kernel_probe(runtime::CalibrateSpec& spec, const runtime::KernelEntry& entry,
                      const exec::ParamValues& params) {
  spec.probes = [others = spec.probes, e = &entry, params](
                    const runtime::ComputeShape& shape, std::int64_t max_height,
                    std::int64_t slab_points) -> Expected<runtime::TileCostPass> {
    if (shape.kernel != e->name) return others(shape, max_height, slab_points);
    TP_TRY(check_plugin_probe(*e, "calibration"));
    return e->cost_probe(shape.tile, shape.along, max_height, slab_points, params);
  };
}

Status check_plugin_probe(const runtime::KernelEntry& entry, std::string_view command) {
  if (entry.cost_probe != nullptr) return {};
  return fail(Errc::invalid_argument, "--kernel " + std::string(entry.name) +
                                          ": its plugin gives " + std::string(command) +
                                          " no tile-cost probe (build it with "
                                          "TILEPIPE_PLUGIN_KERNEL of this tilepipe)");
}

std::vector<runtime::ComputeShape> default_shapes(bool quick) {
  std::vector<runtime::ComputeShape> out;
  const std::vector<std::int64_t> heights =
      quick ? std::vector<std::int64_t>{64, 1024, 16384}
            : std::vector<std::int64_t>{64, 256, 1024, 4096, 16384, 65536};
  for (auto z : heights) out.push_back({"wave3d", {12, 6, z}, 2});
  for (auto z : heights) {
    if (z <= 16384) out.push_back({"wave2d", {512, z}, 1});
  }
  for (auto z : heights) {
    if (z <= 4096) out.push_back({"wave4d", {6, 6, 6, z}, 3});
  }
  return out;
}

Expected<std::vector<std::int64_t>> parse_height_list(const std::string& text, std::int64_t extent,
                                                      const std::string& flag) {
  constexpr std::size_t max_heights = 64;
  std::vector<std::int64_t> out;
  const auto check = [&](std::int64_t z) -> Status {
    if (z < 1) {
      return fail(Errc::invalid_argument,
                  flag + ": tile height " + std::to_string(z) + " must be >= 1");
    }
    if (z > extent) {
      return fail(Errc::invalid_argument, flag + ": tile height " + std::to_string(z) +
                                              " exceeds the extent " + std::to_string(extent) +
                                              " of the mapping dimension");
    }
    return {};
  };
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    auto a = parse_int(std::string_view(text).substr(0, colon), flag);
    if (!a) return Unexpected{a.error()};
    auto b = parse_int(std::string_view(text).substr(colon + 1), flag);
    if (!b) return Unexpected{b.error()};
    if (*a > *b) {
      return fail(Errc::invalid_argument, flag + ": the range " + text + " is empty (" +
                                              std::to_string(*a) + " > " + std::to_string(*b) +
                                              ")");
    }
    TP_TRY(check(*a));
    TP_TRY(check(*b));
    for (std::int64_t z = *a; z <= *b && out.size() <= max_heights; z *= 2) {
      out.push_back(z);
      if (z > *b / 2) break;
    }
    if (out.back() != *b) out.push_back(*b);
  } else {
    for (auto part : split(text, ',')) {
      auto z = parse_int(trim(part), flag);
      if (!z) return Unexpected{z.error()};
      TP_TRY(check(*z));
      out.push_back(*z);
      if (out.size() > max_heights) break;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  if (out.size() > max_heights) {
    return fail(Errc::invalid_argument, flag + ": more than " + std::to_string(max_heights) +
                                            " tile heights in '" + text + "'");
  }
  return out;
}

}  // namespace tp::app
