// The built-in kernels' compute probes (cost_probes.hpp) on exec::TileCostProbe and
// exec::FrontierTileCostProbe (exec::CostProbeOf).
#include <tilepipe/exec/calibration.hpp>
#include <tilepipe/kernels/cost_probes.hpp>
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sor.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/sweep3d.hpp>
#include <tilepipe/kernels/wave.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>

namespace tp::kernels {
namespace {

using Probe = std::function<double(std::int64_t)>;

template <int D>
Point<D> cross_point(const std::vector<std::int64_t>& cross, int along) {
  Point<D> c{};
  for (int d = 0; d < D; ++d) c[d] = d == along ? 1 : cross[static_cast<std::size_t>(d)];
  return c;
}

// The kernel's exec probe (exec::CostProbeOf) over a row of at least slab_points points.
// make(n) gives the kernel for a space of extents n, or a shared owner of it (its member
// `kernel`) and of what it refers to (sw's sequences), kept alive with the probe.
template <class K, class Make>
Expected<Probe> row_probe(const std::vector<std::int64_t>& cross, int along,
                          std::int64_t max_height, std::int64_t slab_points, Make make) {
  using P = exec::CostProbeOf<K>;
  const auto n = P::row_size(cross_point<K::dims>(cross, along), along, max_height,
                             std::max<std::int64_t>(1, slab_points));
  auto made = make(n);
  if (!made) return Unexpected{made.error()};
  if constexpr (std::is_same_v<std::decay_t<decltype(*made)>, K>) {
    auto probe = std::make_shared<P>(*made, n, along);
    return Probe([probe](std::int64_t z) { return probe->pass(z); });
  } else {
    auto owner = std::move(*made);
    auto probe = std::make_shared<P>(*owner->kernel, n, along);
    return Probe([probe, owner](std::int64_t z) { return probe->pass(z); });
  }
}

// sor in the executor's (skewed) space of extents e: T = e_0 sweeps. The row of tiles starts at
// x_s = T in the skewed dimensions, over a grid of N_s = e_s + T - 1, so that every point of it
// is a point of the loop nest (t <= x_s <= N_s + t - 1), as in the interior tiles of a run; the
// probe also counts only the points its tiles compute (Sor::computed_points). Before 2026-11-27
// the row started at the space's low corner over N_s = e_s - T + 1: a row as long as the time
// extent held one grid row, 0.15 ns per counted point against the runs' 0.95.
template <int S>
Expected<Probe> sor_probe(const std::vector<std::int64_t>& cross, int along,
                          std::int64_t max_height, std::int64_t slab_points) {
  using P = exec::FrontierTileCostProbe<Sor<S>>;
  const auto e = P::row_size(cross_point<S + 1>(cross, along), along, max_height,
                             std::max<std::int64_t>(1, slab_points));
  Point<S> n{};
  Point<S + 1> origin{};
  origin[0] = 1;
  for (int s = 0; s < S; ++s) {
    n[s] = e[s + 1] + e[0] - 1;
    origin[s + 1] = e[0];
  }
  auto k = Sor<S>::make(n, e[0], 1.5);
  if (!k) return Unexpected{k.error()};
  auto probe = std::make_shared<P>(*k, e, along, origin);
  return Probe([probe](std::int64_t z) { return probe->pass(z); });
}

// sw over random protein sequences of the tiles' lengths (BLOSUM62, gaps 10/1).
Expected<Probe> sw_probe(const std::vector<std::int64_t>& cross, int along, std::int64_t max_height,
                         std::int64_t slab_points) {
  struct Made {
    std::vector<std::uint8_t> query;
    std::vector<std::uint8_t> target;
    std::optional<SwKernel> kernel;  // refers to query and target
  };
  return row_probe<SwKernel>(
      cross, along, max_height, slab_points,
      [](const Point<2>& n) -> Expected<std::shared_ptr<Made>> {
        const ScoreMatrix& matrix = ScoreMatrix::blosum62();
        std::mt19937_64 random(14);
        const auto sequence = [&](std::int64_t length) -> Expected<std::vector<std::uint8_t>> {
          static constexpr std::string_view amino = "ACDEFGHIKLMNPQRSTVWY";
          std::string letters(static_cast<std::size_t>(length), 'A');
          for (auto& c : letters) c = amino[random() % amino.size()];
          return matrix.encode(letters, "the calibration's random sequence");
        };
        auto query = sequence(n[0]);
        if (!query) return Unexpected{query.error()};
        auto target = sequence(n[1]);
        if (!target) return Unexpected{target.error()};
        auto made = std::make_shared<Made>();
        made->query = std::move(*query);
        made->target = std::move(*target);
        auto k = SwKernel::make(matrix, made->query, made->target, GapCosts{10, 1});
        if (!k) return Unexpected{k.error()};
        made->kernel.emplace(std::move(*k));
        return made;
      });
}

}  // namespace

Expected<Probe> builtin_cost_probe(std::string_view kernel, const std::vector<std::int64_t>& cross,
                                   int along, std::int64_t max_height, std::int64_t slab_points,
                                   const exec::ParamValues* params) {
  const auto dims = static_cast<int>(cross.size());
  const auto expect = [&](int d) { return dims == d; };
  const bool known = (kernel == "wave2d" && expect(2)) || (kernel == "wave3d" && expect(3)) ||
                     (kernel == "wave4d" && expect(4)) || (kernel == "sweep3d" && expect(3)) ||
                     (kernel == "sor2d" && expect(3)) || (kernel == "sor3d" && expect(4)) ||
                     (kernel == "sw" && expect(2));
  if (!known || along < 0 || along >= dims || max_height < 1 ||
      std::any_of(cross.begin(), cross.end(), [](std::int64_t w) { return w < 1; })) {
    return fail(Errc::invalid_argument,
                "no compute probe for " + std::string(kernel) + " tiles of " +
                    std::to_string(dims) +
                    " dimensions (wave2d, wave3d, wave4d, sweep3d, sor2d, sor3d and sw have one)");
  }
  if (kernel == "wave2d") {
    return row_probe<Wave<2>>(cross, along, max_height, slab_points,
                              [](const Point<2>& n) { return Wave<2>::make(n); });
  }
  if (kernel == "wave3d") {
    return row_probe<Wave<3>>(cross, along, max_height, slab_points,
                              [](const Point<3>& n) { return Wave<3>::make(n); });
  }
  if (kernel == "wave4d") {
    return row_probe<Wave<4>>(cross, along, max_height, slab_points,
                              [](const Point<4>& n) { return Wave<4>::make(n); });
  }
  if (kernel == "sweep3d") {
    Sweep3dParams p;
    if (params != nullptr) p = sweep3d_params_of(*params);
    p.iterations = 1;
    // Octants one at a time over the probe's slab: octant 0 (towards increasing k) and octant
    // 4 (decreasing k), each pass timing both on the same slab and taking the mean: half of a
    // run's points sweep towards decreasing k (octants 4-7; paired, the second half), and there
    // a short tile costs up to twice as much per point (its rows add into the home sums
    // backwards; ADR 0034). Its tiles add p_o into the home sums, as every tile of a run does
    // (sweep_alone).
    p.paired = 0;
    std::optional<Sweep3d> made;
    Box<3> space{};
    auto probe = row_probe<Sweep3d>(cross, along, max_height, slab_points,
                                    [&](const Point<3>& n) -> Expected<Sweep3d> {
                                      auto k = Sweep3d::make(n, p);
                                      if (!k) return k;
                                      space = Box<3>{{1, 1, 1}, {1 + n[0], 1 + n[1], 1 + n[2]}};
                                      made.emplace(*k);  // shares the probe's kernel's state
                                      return k;
                                    });
    if (!probe) return probe;
    return Probe([pass = std::move(*probe), k = std::move(*made), space](std::int64_t z) {
      k.sweep_alone(space, 0);
      const double forward = pass(z);
      k.sweep_alone(space, 4);
      const double backward = pass(z);
      return 0.5 * (forward + backward);
    });
  }
  if (kernel == "sor2d") return sor_probe<2>(cross, along, max_height, slab_points);
  if (kernel == "sor3d") return sor_probe<3>(cross, along, max_height, slab_points);
  return sw_probe(cross, along, max_height, slab_points);
}

}  // namespace tp::kernels
