// Calibration probes (`tilepipe calibrate`): a kernel's cost per point at given tile shapes, and
// the transport's send start, notification latency and transfer time by message size.
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace tp::exec {

namespace detail {
/// The extents of a probe's row of tiles: `cross` in the other dimensions, along `along` a
/// multiple of max_height with at least 2 tiles and `points` points.
template <int D>
Point<D> row_of_tiles(const Point<D>& cross, int along, Index max_height, Index points) {
  TP_EXPECTS(along >= 0 && along < D && max_height >= 1);
  Index cross_points = 1;
  for (int d = 0; d < D; ++d) {
    if (d != along) cross_points *= cross[d];
  }
  const Index tall =
      std::max<Index>(2, (points + cross_points * max_height - 1) / (cross_points * max_height));
  Point<D> n = cross;
  n[along] = tall * max_height;
  return n;
}

/// Calls tile(box, t) for t = 0..tiles-1, box the t-th tile of height z of `row` along `along`
/// from its low corner, where tiles = row's extent along `along` / z (>= 1); returns tiles.
template <int D, class F>
Index walk_row(Box<D> row, int along, Index z, F&& tile) {
  const Index tiles = row.extent(along) / z;
  TP_EXPECTS(z >= 1 && tiles >= 1);
  const Index lo = row.lo[along];
  for (Index t = 0; t < tiles; ++t) {
    row.lo[along] = lo + t * z;
    row.hi[along] = row.lo[along] + z;
    tile(static_cast<const Box<D>&>(row), t);
  }
  return tiles;
}
}  // namespace detail

/// Measures a resident kernel's cost per point on tiles of one cross-section and any height,
/// computed one after another along dimension `along` through a slab of at least `slab_points`
/// points, the way a rank walks its row of tiles (so tiles stream from memory as in a real run).
/// One probe serves every height up to max_height; callers interleave pass() over shapes and
/// repeat it, so that a burst of load on a shared machine touches one pass of many shapes rather
/// than every pass of one shape.
template <ResidentKernel K>
class TileCostProbe {
 public:
  static constexpr int D = K::dims;
  using T = typename K::value_type;

  /// The slab's extents (the interior; the kernel must accept them): `cross` in the other
  /// dimensions, along `along` a multiple of max_height with at least 2 tiles and slab_points.
  static Point<D> row_size(const Point<D>& cross, int along, Index max_height, Index slab_points) {
    return detail::row_of_tiles<D>(cross, along, max_height, slab_points);
  }

  /// Allocates the slab, fills its halo and touches every page once (not timed). `kernel` must
  /// accept a space of `size` (it is copied).
  TileCostProbe(const K& kernel, const Point<D>& size, int along) : kernel_(kernel), along_(along) {
    for (int d = 0; d < D; ++d) {
      TP_EXPECTS(size[d] >= 1);
      space_.lo[d] = 1;
      space_.hi[d] = 1 + size[d];
      bounds_.lo[d] = 1 - halo_width<K>(d);
      bounds_.hi[d] = space_.hi[d];
    }
    storage_.resize(static_cast<std::size_t>(bounds_.volume()));
    fill_halo(kernel_, view(), space_);
    kernel_.compute_tile(space_, view());
  }

  /// One timed pass with tiles of height z (1 <= z <= the slab's length): seconds per point.
  double pass(Index z) {
    using Clock = std::chrono::steady_clock;
    Index cross_points = 1;
    for (int d = 0; d < D; ++d) {
      if (d != along_) cross_points *= space_.extent(d);
    }
    const auto a = Clock::now();
    const Index tiles = detail::walk_row(
        space_, along_, z, [&](const Box<D>& box, Index) { kernel_.compute_tile(box, view()); });
    const double s = std::chrono::duration<double>(Clock::now() - a).count();
    return s / static_cast<double>(tiles * z * cross_points);
  }

 private:
  [[nodiscard]] SlabView<T, D> view() { return SlabView<T, D>(storage_.data(), bounds_); }
  K kernel_;
  int along_;
  Box<D> space_;
  Box<D> bounds_;
  std::vector<T> storage_;
};

/// Measures a frontier kernel's cost per point on tiles of one cross-section and any height, the
/// way a rank walks its row of tiles: tiles follow each other along dimension `along` from the
/// space's low corner, each taking the face along `along` that the one before it wrote (the first
/// one the kernel's boundary face) and the kernel's boundary faces in the other dimensions. Only
/// compute_tile is timed. The kernel keeps no array, so the slab of TileCostProbe is the row's
/// length here: tiles stream through the faces as in a real run.
template <FrontierKernel K>
class FrontierTileCostProbe {
 public:
  static constexpr int D = K::dims;
  using F = typename K::face_type;

  /// The space's extents (the kernel must accept them): `cross` in the other dimensions, along
  /// `along` a multiple of max_height with at least 2 tiles and `points` points.
  static Point<D> row_size(const Point<D>& cross, int along, Index max_height, Index points) {
    return detail::row_of_tiles<D>(cross, along, max_height, points);
  }

  /// `kernel` must accept a space of `size` (it is copied) and hold every tile of a pass. The
  /// row starts at `origin` (default the space's low corner, every coordinate 1): a kernel whose
  /// space's corners lie outside its loop nest (a time loop's skewed space) times its tiles
  /// inside it.
  FrontierTileCostProbe(const K& kernel, const Point<D>& size, int along)
      : FrontierTileCostProbe(kernel, size, along, ones()) {}
  FrontierTileCostProbe(const K& kernel, const Point<D>& size, int along, const Point<D>& origin)
      : kernel_(kernel), along_(along), size_(size), origin_(origin) {
    for (int d = 0; d < D; ++d) TP_EXPECTS(size[d] >= 1 && origin[d] >= 1);
    TP_EXPECTS(along >= 0 && along < D);
  }

  /// One pass with tiles of height z (1 <= z <= the extent along `along`): seconds per point.
  double pass(Index z) {
    using Clock = std::chrono::steady_clock;
    TP_EXPECTS(z >= 1 && z <= size_[along_]);
    Box<D> row;
    for (int d = 0; d < D; ++d) {
      row.lo[d] = origin_[d];
      row.hi[d] = origin_[d] + size_[d];
    }
    Box<D> first = row;
    first.hi[along_] = row.lo[along_] + z;
    for (int d = 0; d < D; ++d) {
      const auto n = kernel_.face_size(d, first);
      for (auto* v : {&in_[d], &out_[d]}) v->resize(std::max(v->size(), n));
    }
    double seconds = 0;
    Index points = 0;
    detail::walk_row(row, along_, z, [&](const Box<D>& box, Index t) {
      FaceSet<const F, D> in;
      FaceSet<F, D> out;
      for (int d = 0; d < D; ++d) {
        const auto n = kernel_.face_size(d, box);
        if (d != along_ || t == 0) kernel_.boundary_face(d, box, std::span<F>(in_[d].data(), n));
        in[d] = std::span<const F>(in_[d].data(), n);
        out[d] = std::span<F>(out_[d].data(), n);
      }
      const auto a = Clock::now();
      static_cast<void>(kernel_.compute_tile(box, in, out));
      seconds += std::chrono::duration<double>(Clock::now() - a).count();
      // A kernel whose boxes hold points outside its loop nest (a time loop's skewed space)
      // says how many it computes; the others are not work.
      if constexpr (requires(const K& k) {
                      { k.computed_points(box) } -> std::convertible_to<Index>;
                    }) {
        points += kernel_.computed_points(box);
      } else {
        points += box.volume();
      }
      std::swap(in_[along_], out_[along_]);  // the next tile's face along `along`
    });
    return points > 0 ? seconds / static_cast<double>(points) : 0.0;
  }

 private:
  K kernel_;
  int along_;
  Point<D> size_;
  Point<D> origin_;

  static Point<D> ones() noexcept {
    Point<D> p{};
    for (int d = 0; d < D; ++d) p[d] = 1;
    return p;
  }
  std::array<std::vector<F>, D> in_;
  std::array<std::vector<F>, D> out_;
};

namespace detail {
template <class K>
struct CostProbeOf;
template <ResidentKernel K>
struct CostProbeOf<K> {
  using type = TileCostProbe<K>;
};
template <FrontierKernel K>
struct CostProbeOf<K> {
  using type = FrontierTileCostProbe<K>;
};
}  // namespace detail

/// The cost probe of kernel K: TileCostProbe for a resident kernel, FrontierTileCostProbe for a
/// frontier one (both built from row_size(...), the kernel and `along`; pass(z) times a pass).
template <Kernel K>
using CostProbeOf = typename detail::CostProbeOf<K>::type;

/// How `time_round_trips` runs: batches of round trips between ranks 0 and 1.
struct RoundTripOptions {
  int tag = 0;          ///< a user tag (>= 0) no other traffic uses meanwhile
  Index batches = 1;    ///< timed batches (>= 1)
  Index per_batch = 1;  ///< round trips per batch (>= 1)
  /// false: blocking send and recv on both ranks (the latency a user's code sees). true: rank 0
  /// posts the receive first and times its isend call (the CPU cost of starting a send).
  bool nonblocking = false;
  /// Called on every rank after each batch (nullptr: nothing), e.g. a reference probe that must
  /// run on the same cores right after the messages.
  std::function<Status(Index batch)> after_batch;
};

/// Per batch, on ranks 0 and 1: the one-way time of a message (batch time / (2 per_batch)) and,
/// when nonblocking, rank 0's mean isend call time; empty on other ranks.
struct RoundTripTimes {
  std::vector<double> one_way_s;
  std::vector<double> isend_s;
};

/// The one ping-pong of tilepipe (pingpong and calibrate): rank 0 sends `out`, rank 1 answers
/// into `in` and back; other ranks only run `after_batch`. Collective over the world; no barrier
/// inside. Errors: a transport failure or a peer that died.
Expected<RoundTripTimes> time_round_trips(comm::World& world, std::span<std::byte> out,
                                          std::span<std::byte> in, const RoundTripOptions& opts);

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

/// The copy of a face into memory that no cache holds, as a rank packs a face into its
/// neighbour's slab (docs/model.md, "The copy of a face"): blocks of `block` bytes from one buffer
/// (which stays in cache, as a face just computed does) to consecutive places of a shared memory
/// mapping of `region` bytes (shared memory, as a slab that direct faces reach is), cycling over
/// it. Several ranks measuring at once share the memory bandwidth as the ranks of a run do.
class ColdCopyProbe {
 public:
  /// Maps the region and touches every page once (not timed). Errors: the mapping failed.
  /// Preconditions: block >= 1, region >= block.
  static Expected<ColdCopyProbe> make(std::size_t block, std::size_t region);
  ColdCopyProbe(ColdCopyProbe&& o) noexcept;
  ColdCopyProbe& operator=(ColdCopyProbe&&) = delete;
  ColdCopyProbe(const ColdCopyProbe&) = delete;
  ColdCopyProbe& operator=(const ColdCopyProbe&) = delete;
  ~ColdCopyProbe();

  /// One timed pass over the region: wall seconds per byte copied.
  double pass();
  /// Bytes one pass copies.
  [[nodiscard]] std::size_t pass_bytes() const noexcept { return region_ / block_ * block_; }

 private:
  ColdCopyProbe(std::byte* dst, std::size_t block, std::size_t region)
      : dst_(dst), block_(block), region_(region), src_(block) {}
  std::byte* dst_ = nullptr;
  std::size_t block_ = 0;
  std::size_t region_ = 0;
  std::vector<std::byte> src_;
};

}  // namespace tp::exec
