// The built-in kernels' compute probes (cost_probes.hpp) on exec::TileCostProbe.
#include <tilepipe/exec/calibration.hpp>
#include <tilepipe/kernels/cost_probes.hpp>
#include <tilepipe/kernels/wave.hpp>

#include <algorithm>
#include <memory>
#include <string>

namespace tp::kernels {
namespace {

template <int D>
Expected<std::function<double(std::int64_t)>> make_probe(const std::vector<std::int64_t>& cross,
                                                         int along, std::int64_t max_height,
                                                         std::int64_t slab_points) {
  Point<D> c{};
  for (int d = 0; d < D; ++d) c[d] = d == along ? 1 : cross[static_cast<std::size_t>(d)];
  using Probe = exec::TileCostProbe<Wave<D>>;
  const auto n = Probe::slab_size(c, along, max_height, std::max<std::int64_t>(1, slab_points));
  auto kernel = Wave<D>::make(n);
  if (!kernel) return Unexpected{kernel.error()};
  auto probe = std::make_shared<Probe>(*kernel, n, along);
  return std::function<double(std::int64_t)>([probe](std::int64_t z) { return probe->pass(z); });
}

}  // namespace

Expected<std::function<double(std::int64_t height)>> wave_cost_probe(
    std::string_view kernel, const std::vector<std::int64_t>& cross, int along,
    std::int64_t max_height, std::int64_t slab_points) {
  const auto dims = static_cast<int>(cross.size());
  const bool known = (kernel == "wave2d" && dims == 2) || (kernel == "wave3d" && dims == 3) ||
                     (kernel == "wave4d" && dims == 4);
  if (!known || along < 0 || along >= dims || max_height < 1 ||
      std::any_of(cross.begin(), cross.end(), [](std::int64_t w) { return w < 1; })) {
    return fail(Errc::invalid_argument, "no compute probe for " + std::string(kernel) +
                                            " tiles of " + std::to_string(dims) +
                                            " dimensions (wave2d, wave3d and wave4d have one)");
  }
  switch (dims) {
    case 2:
      return make_probe<2>(cross, along, max_height, slab_points);
    case 3:
      return make_probe<3>(cross, along, max_height, slab_points);
    default:
      return make_probe<4>(cross, along, max_height, slab_points);
  }
}

}  // namespace tp::kernels
