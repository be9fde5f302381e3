// A rectangular tiling of a box-shaped iteration space and its hyperplane (wavefront) groups.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/support/checked_math.hpp>
#include <tilepipe/support/expected.hpp>

#include <string>
#include <vector>

namespace tp::exec {

/// Tiles of extent `tile` covering `space` from space.lo; the last tile of a dimension may be
/// shorter. Tile coordinates c run over [0, count(d)); the hyperplane step of c is sum_d c_d,
/// and with dependences >= 0 the tiles of one step are independent.
template <int D>
class RectTiling {
 public:
  /// Validates: space non-empty, tile extents >= 1, tile count fits in memory-sized integers.
  static Expected<RectTiling> make(const Box<D>& space, const Point<D>& tile) {
    if (space.empty()) return fail(Errc::invalid_argument, "the iteration space is empty");
    Index tiles = 1;
    for (int d = 0; d < D; ++d) {
      if (tile[d] < 1) {
        return fail(Errc::invalid_argument, "tile size " + std::to_string(tile[d]) +
                                                " in dimension " + std::to_string(d + 1) +
                                                ": tile sizes must be >= 1");
      }
      const auto t = checked_mul(tiles, ceil_div(space.extent(d), tile[d]));
      if (!t || *t > (Index{1} << 40)) {
        return fail(Errc::out_of_range, "too many tiles (tile sizes too small for the space)");
      }
      tiles = *t;
    }
    return RectTiling(space, tile);
  }

  /// The tiled space.
  [[nodiscard]] const Box<D>& space() const noexcept { return space_; }
  /// The nominal tile extents.
  [[nodiscard]] const Point<D>& tile() const noexcept { return tile_; }
  /// Tiles along dimension d.
  [[nodiscard]] Index count(int d) const noexcept { return count_[d]; }
  /// All tiles.
  [[nodiscard]] Index tiles() const noexcept {
    Index n = 1;
    for (int d = 0; d < D; ++d) n *= count_[d];
    return n;
  }
  /// Hyperplane steps: sum_d (count(d) - 1) + 1.
  [[nodiscard]] Index steps() const noexcept {
    Index s = 1;
    for (int d = 0; d < D; ++d) s += count_[d] - 1;
    return s;
  }
  /// The iteration points of tile c (clipped to the space).
  [[nodiscard]] Box<D> box_of(const Point<D>& c) const noexcept {
    Box<D> b;
    for (int d = 0; d < D; ++d) {
      b.lo[d] = space_.lo[d] + c[d] * tile_[d];
      b.hi[d] = std::min(b.lo[d] + tile_[d], space_.hi[d]);
    }
    return b;
  }
  /// Tile coordinates grouped by hyperplane step: group s holds the tiles with sum_d c_d == s,
  /// in lexicographic order. O(tiles) time and memory.
  [[nodiscard]] std::vector<std::vector<Point<D>>> groups() const {
    std::vector<std::vector<Point<D>>> g(static_cast<std::size_t>(steps()));
    Point<D> c{};
    const Index n = tiles();
    for (Index t = 0; t < n; ++t) {
      Index s = 0;
      for (int d = 0; d < D; ++d) s += c[d];
      g[static_cast<std::size_t>(s)].push_back(c);
      for (int d = D - 1; d >= 0; --d) {
        if (++c[d] < count_[d]) break;
        c[d] = 0;
      }
    }
    return g;
  }

 private:
  RectTiling(const Box<D>& space, const Point<D>& tile) : space_(space), tile_(tile) {
    for (int d = 0; d < D; ++d) count_[d] = ceil_div(space.extent(d), tile[d]);
  }
  Box<D> space_;
  Point<D> tile_;
  Point<D> count_{};
};

}  // namespace tp::exec
