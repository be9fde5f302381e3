// Machine parameters: the linear link cost and the tile compute time interpolated by tile size.
#include <tilepipe/model/machine.hpp>
#include <tilepipe/support/assert.hpp>

namespace tp::model {

std::string_view to_string(SendMode mode) {
  switch (mode) {
    case SendMode::queued:
      return "queued";
    case SendMode::serial:
      return "serial";
    case SendMode::parallel:
      return "parallel";
  }
  return "?";
}

std::string_view to_string(Topology topology) {
  return topology == Topology::torus ? "torus" : "full-bisection";
}

Seconds LinkCost::time_for(std::int64_t bytes) const {
  TP_EXPECTS(bytes >= 0 && bandwidth_bytes_per_s > 0);
  if (bytes == 0) return Seconds{0};
  return latency + Seconds{static_cast<double>(bytes) / bandwidth_bytes_per_s};
}

Seconds ComputeCost::tile_time(std::int64_t tile_points) const {
  TP_EXPECTS(tile_points >= 1);
  const double g = static_cast<double>(tile_points);
  if (samples.empty()) return t_comp1 * g;
  if (tile_points <= samples.front().tile_points) return samples.front().t_comp1 * g;
  if (tile_points >= samples.back().tile_points) return samples.back().t_comp1 * g;
  // Linear in g between the tile times c_j = g_j t_comp1_j of the two enclosing samples.
  std::size_t j = 1;
  while (samples[j].tile_points < tile_points) ++j;
  const auto& a = samples[j - 1];
  const auto& b = samples[j];
  const double ga = static_cast<double>(a.tile_points);
  const double gb = static_cast<double>(b.tile_points);
  const Seconds ca = a.t_comp1 * ga;
  const Seconds cb = b.t_comp1 * gb;
  return ca + (cb - ca) * ((g - ga) / (gb - ga));
}

const ComputeCost& Machine::compute_for(std::string_view kernel) const {
  if (auto it = kernels.find(kernel); it != kernels.end()) return it->second;
  return compute;
}

}  // namespace tp::model
