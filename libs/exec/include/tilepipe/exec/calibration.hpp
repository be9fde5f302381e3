// Calibration probes (`tilepipe calibrate`): a kernel's cost per point at given tile shapes, and
// the transport's send start, notification latency and transfer time by message size.
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tp::exec {

/// A resident kernel's measured cost per point for one tile shape.
struct TileCost {
  std::int64_t tile_points = 0;  ///< points of one tile
  double t_comp1_s = 0;          ///< seconds per point (median of the passes)
};

/// How the compute probe streams tiles through memory.
struct ComputeProbeOptions {
  /// Points the probe's slab holds at least (4 bytes each for wave kernels: 16 Mi points is 64 MiB,
  /// twice this machine's L3), so that tiles stream from memory as in a real run.
  std::int64_t slab_points = std::int64_t{1} << 24;
  /// Passes over the slab; the median pass counts.
  int passes = 3;
};

/// Measures the kernel's cost per point on tiles with the extents `tile` (one per dimension),
/// computed one after another along dimension `along` through a slab of at least
/// opts.slab_points points (at least 2 tiles), the way a rank walks its row of tiles. `kernel`
/// must accept the slab's box (its size >= the slab's extents). The first pass warms the pages.
/// Cost: about (opts.passes + 1) x slab points x t_comp1.
template <ResidentKernel K>
TileCost measure_tile_cost(const K& kernel, const Point<K::dims>& tile, int along,
                           const ComputeProbeOptions& opts) {
  constexpr int D = K::dims;
  using T = typename K::value_type;
  using Clock = std::chrono::steady_clock;
  TP_EXPECTS(along >= 0 && along < D && opts.passes >= 1);
  Index points = 1;
  for (int d = 0; d < D; ++d) {
    TP_EXPECTS(tile[d] >= 1);
    points *= tile[d];
  }
  const Index tiles = std::max<Index>(2, (opts.slab_points + points - 1) / points);
  Box<D> space;
  Box<D> bounds;
  for (int d = 0; d < D; ++d) {
    space.lo[d] = 1;
    space.hi[d] = 1 + tile[d] * (d == along ? tiles : 1);
    bounds.lo[d] = 1 - halo_width<K>(d);
    bounds.hi[d] = space.hi[d];
  }
  std::vector<T> storage(static_cast<std::size_t>(bounds.volume()));
  const SlabView<T, D> slab(storage.data(), bounds);
  fill_halo(kernel, slab, space);
  std::vector<double> per_point;
  for (int pass = 0; pass <= opts.passes; ++pass) {
    const auto a = Clock::now();
    for (Index t = 0; t < tiles; ++t) {
      Box<D> box = space;
      box.lo[along] = 1 + t * tile[along];
      box.hi[along] = box.lo[along] + tile[along];
      kernel.compute_tile(box, slab);
    }
    const double s = std::chrono::duration<double>(Clock::now() - a).count();
    if (pass > 0) per_point.push_back(s / static_cast<double>(points * tiles));
  }
  std::sort(per_point.begin(), per_point.end());
  return TileCost{points, per_point[per_point.size() / 2]};
}

/// What the communication probe measured between ranks 0 and 1 (meaningful on rank 0).
struct CommProbeResult {
  /// Per probed size: bytes and the one-way transfer time (half the median round trip of a
  /// ping-pong of that size), seconds.
  std::vector<std::pair<std::int64_t, double>> one_way_s;
  /// Per probed size: the median time of the isend call itself (the CPU cost of starting it).
  std::vector<std::pair<std::int64_t, double>> isend_s;
  /// One-way latency of a 8-byte message in the world's sync mode: how long a waiting rank takes
  /// to learn that data landed (seconds).
  double notify_s = 0;
};

/// What the communication probe does.
struct CommProbeOptions {
  std::vector<std::int64_t> sizes;  ///< message sizes in bytes (>= 1) for one_way_s and isend_s
  int round_trips = 30;  ///< per size (>= 3), fewer for large sizes (at most 64 MiB moved per
                         ///< size, at least 3); the median counts
};

/// Collective over the world (>= 2 ranks): ranks 0 and 1 ping-pong every size (sizes ascending),
/// then 8-byte messages for the notification latency; other ranks only join the barriers.
/// Errors: a transport failure or a peer that died.
Expected<CommProbeResult> probe_comm(comm::World& world, const CommProbeOptions& opts);

/// Seconds one synchronization of `threads` threads of one process takes (t_sync_in of seed 002
/// formula (6)): the median of batches of barrier rounds. threads >= 2.
double measure_thread_sync_s(int threads);

}  // namespace tp::exec
