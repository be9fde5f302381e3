// The single-process tile runner: M threads walk the hyperplanes of a rectangular tiling.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/rect_tiling.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace tp::exec {

namespace detail {

template <int D>
std::string tile_name(const Point<D>& c) {
  std::string s = "(";
  for (int d = 0; d < D; ++d) s += (d ? ", " : "") + std::to_string(c[d]);
  return s + ")";
}

/// Runs tile(c) for every tile, hyperplane by hyperplane (tiles of one step spread round-robin
/// over the threads, a barrier per step); a throwing tile stops the run with an Error.
template <int D, class TileFn>
Status run_hyperplanes(const RectTiling<D>& tiling, int threads, TileFn&& tile) {
  const auto groups = tiling.groups();
  std::string failure;
  try {
    run_steps(threads, tiling.steps(), [&](int t, Index s) {
      const auto& g = groups[static_cast<std::size_t>(s)];
      for (std::size_t i = static_cast<std::size_t>(t); i < g.size();
           i += static_cast<std::size_t>(threads)) {
        try {
          tile(t, s, g[i]);
        } catch (const std::exception& e) {
          throw std::runtime_error("failed in tile " + tile_name<D>(g[i]) + ": " + e.what());
        }
      }
    });
  } catch (const std::system_error& e) {  // a thread that could not start (run_steps)
    return fail(Errc::system, e.what());
  } catch (const std::exception& e) {
    return fail(Errc::internal, std::string("kernel ") + e.what());
  }
  return {};
}

}  // namespace detail

/// Runs a resident kernel over `tiling` on `threads` threads in wavefront order, updating `slab`
/// in place, then reduces tile_result over all tiles. The slab must hold the space and its halo
/// (fill_halo sets the halo). Returns the result, or an Error naming the tile whose kernel threw.
template <ResidentKernel K>
Expected<typename K::result_type> run_local(const K& kernel,
                                            const SlabView<typename K::value_type, K::dims>& slab,
                                            const RectTiling<K::dims>& tiling, int threads) {
  constexpr int D = K::dims;
  using R = typename K::result_type;
  TP_EXPECTS(threads >= 1);
  Box<D> needed = tiling.space();
  for (int d = 0; d < D; ++d) needed.lo[d] -= halo_width<K>(d);
  TP_EXPECTS(slab.bounds().contains(needed));
  TP_TRY(detail::run_hyperplanes<D>(tiling, threads, [&](int, Index, const Point<D>& c) {
    kernel.compute_tile(tiling.box_of(c), slab);
  }));
  std::vector<R> partial(static_cast<std::size_t>(threads));
  const SlabView<const typename K::value_type, D> cslab = slab;
  TP_TRY(detail::run_hyperplanes<D>(tiling, threads, [&](int t, Index, const Point<D>& c) {
    auto& p = partial[static_cast<std::size_t>(t)];
    p = K::combine(p, kernel.tile_result(tiling.box_of(c), cslab));
  }));
  R total{};
  for (const R& p : partial) total = K::combine(total, p);
  return total;
}

/// Runs a frontier kernel over `tiling` on `threads` threads in wavefront order. Faces live in
/// double-buffered slots, one per row of tiles along each dimension (memory O(faces)); a tile at
/// the low end of dimension k gets a face from boundary_face. Returns the combined result.
template <FrontierKernel K>
Expected<typename K::result_type> run_local(const K& kernel, const RectTiling<K::dims>& tiling,
                                            int threads) {
  constexpr int D = K::dims;
  using F = typename K::face_type;
  using R = typename K::result_type;
  TP_EXPECTS(threads >= 1);
  // Slot of the face crossing dimension k for tile c: c's coordinates without c[k], row-major.
  std::array<std::size_t, D> slot_size{};
  std::array<Index, D> slots{};
  for (int k = 0; k < D; ++k) {
    slots[k] = 1;
    for (int d = 0; d < D; ++d) slots[k] *= d == k ? 1 : tiling.count(d);
    // face_size does not decrease as extents grow, so tile 0 (the largest) bounds every face.
    slot_size[k] = kernel.face_size(k, tiling.box_of(Point<D>{}));
  }
  std::array<std::vector<F>, D> store;
  for (int k = 0; k < D; ++k) {
    store[k].resize(2 * static_cast<std::size_t>(slots[k]) * slot_size[k]);
  }
  std::vector<std::array<std::vector<F>, D>> scratch(static_cast<std::size_t>(threads));
  for (auto& s : scratch) {
    for (int k = 0; k < D; ++k) s[k].resize(slot_size[k]);
  }
  auto slot = [&](int k, const Point<D>& c, Index parity) {
    Index i = 0;
    for (int d = 0; d < D; ++d) {
      if (d != k) i = i * tiling.count(d) + c[d];
    }
    return store[k].data() + (static_cast<std::size_t>(parity * slots[k] + i)) * slot_size[k];
  };
  std::vector<R> partial(static_cast<std::size_t>(threads));
  TP_TRY(detail::run_hyperplanes<D>(tiling, threads, [&](int t, Index s, const Point<D>& c) {
    const Box<D> box = tiling.box_of(c);
    FaceSet<const F, D> in;
    FaceSet<F, D> out;
    for (int k = 0; k < D; ++k) {
      const std::size_t n = kernel.face_size(k, box);
      TP_ASSERT(n <= slot_size[k]);
      if (c[k] == 0) {
        const std::span<F> b(scratch[static_cast<std::size_t>(t)][k].data(), n);
        kernel.boundary_face(k, box, b);
        in[k] = b;
      } else {
        in[k] = std::span<const F>(slot(k, c, (s - 1) & 1), n);
      }
      out[k] = std::span<F>(slot(k, c, s & 1), n);
    }
    auto& p = partial[static_cast<std::size_t>(t)];
    p = K::combine(p, kernel.compute_tile(box, in, out));
  }));
  R total{};
  for (const R& p : partial) total = K::combine(total, p);
  return total;
}

}  // namespace tp::exec
