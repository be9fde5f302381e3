// Measurements a rank takes before its run: face transfer time, tile compute time (alpha).
#pragma once

#include <tilepipe/exec/pipeline_tasks.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace tp::exec {

template <int D>
Expected<double> measure_face_transfer(comm::World& world, const RankLayout<D>& layout,
                                       std::size_t elem_bytes) {
  using Clock = std::chrono::steady_clock;
  constexpr int tag = comm::max_tag;
  constexpr int reps = 7;
  std::vector<std::vector<std::byte>> in(layout.recv_lines.size());
  std::vector<std::vector<std::byte>> out(layout.send_lines.size());
  for (std::size_t l = 0; l < in.size(); ++l)
    in[l].resize(layout.recv_lines[l].max_elems * elem_bytes);
  for (std::size_t l = 0; l < out.size(); ++l)
    out[l].resize(layout.send_lines[l].max_elems * elem_bytes);
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    if (auto b = world.barrier(); !b) return Unexpected{b.error()};
    const auto a = Clock::now();
    std::vector<comm::Request> reqs;
    for (std::size_t l = 0; l < in.size(); ++l) {
      auto q = world.irecv(layout.recv_lines[l].peer, tag, in[l]);
      if (!q) return Unexpected{q.error()};
      reqs.push_back(std::move(*q));
    }
    for (std::size_t l = 0; l < out.size(); ++l) {
      auto q = world.isend(layout.send_lines[l].peer, tag, out[l]);
      if (!q) return Unexpected{q.error()};
      reqs.push_back(std::move(*q));
    }
    for (auto& q : reqs) {
      if (auto w = world.wait(q); !w) return Unexpected{w.error()};
    }
    if (!in.empty()) {
      times.push_back(std::chrono::duration<double>(Clock::now() - a).count() /
                      static_cast<double>(in.size()));
    }
  }
  if (auto b = world.barrier(); !b) return Unexpected{b.error()};
  if (times.empty()) return 0.0;
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

template <ResidentKernel K>
double measure_tile_seconds(const K& kernel, const Box<K::dims>& box) {
  constexpr int D = K::dims;
  using T = typename K::value_type;
  Box<D> tile;
  Box<D> bounds;
  for (int d = 0; d < D; ++d) {
    tile.lo[d] = 1;
    tile.hi[d] = 1 + box.extent(d);
    bounds.lo[d] = 1 - halo_width<K>(d);
    bounds.hi[d] = tile.hi[d];
  }
  std::vector<T> scratch(static_cast<std::size_t>(bounds.volume()));
  const SlabView<T, D> slab(scratch.data(), bounds);
  fill_halo(kernel, slab, tile);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto a = std::chrono::steady_clock::now();
    kernel.compute_tile(tile, slab);
    best =
        std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  return best;
}

}  // namespace tp::exec
