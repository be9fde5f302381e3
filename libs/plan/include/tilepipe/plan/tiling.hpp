// The supernode (tiling) transformation r(j) = (floor(Hj), j - P floor(Hj)) (seed 000 2.4,
// seed 002 2.2), its legality (HD >= 0, |HD| < 1), the tile space J^S and the tile dependences D^S.
#pragma once

#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/plan/rational_matrix.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <vector>

namespace tp::plan {

/// Most iteration points (or points of one tile) enumerated for a non-rectangular H.
inline constexpr std::int64_t enumeration_limit = std::int64_t{1} << 24;

/// A tiling H with P = H^-1. Rectangular tilings are H = diag(1/w_1, ..., 1/w_n).
/// Tile coordinates are taken relative to the first iteration (1, ..., 1): tile_of(j) =
/// floor(H (j - 1)), so that tile 0 is the first complete tile.
class Tiling {
 public:
  /// Rectangular tiles of extents w_d >= 1.
  static Expected<Tiling> rectangular(Index tile_extents);
  /// A general tiling matrix H (rows = normals of the tile hyperplanes); must be non-singular.
  static Expected<Tiling> general(RationalMatrix h);

  [[nodiscard]] int dims() const noexcept { return h_.size(); }
  [[nodiscard]] bool is_rectangular() const noexcept { return !extents_.empty(); }
  [[nodiscard]] const RationalMatrix& h() const noexcept { return h_; }
  [[nodiscard]] const RationalMatrix& p() const noexcept { return p_; }
  /// w_d of a rectangular tiling (TP_EXPECTS(is_rectangular())).
  [[nodiscard]] const Index& tile_extents() const;
  /// The tile grain g = |det P|: points in a complete tile.
  [[nodiscard]] Rational grain() const noexcept { return grain_; }
  /// floor(H (j - 1)): the tile of iteration point j.
  [[nodiscard]] Index tile_of(const Index& j) const;

 private:
  RationalMatrix h_;
  RationalMatrix p_;
  Index extents_;
  Rational grain_;
};

/// HD >= 0 (atomic tiles) and |HD| < 1 (dependences shorter than a tile side); the error names
/// the offending dependence vector, or the dimension whose tile side is too short.
Status check_legal(const Tiling& tiling, const DependenceMatrix& deps);

/// D^S = { floor(H(j0 + d)) - 0 : d in D, j0 in tile 0 } without the zero vector, sorted.
/// Entries are 0 or 1 for a legal tiling. Exact: per dimension for rectangular tilings, by
/// enumerating tile 0 otherwise (an error past enumeration_limit points).
Expected<std::vector<Index>> tile_dependences(const Tiling& tiling, const DependenceMatrix& deps);

/// J^S = { floor(H(j - 1)) : j in J^n }. A box for rectangular tilings; for a general H the
/// explicit set of tiles (enumerated from the points, at most enumeration_limit of them).
class TileSpace {
 public:
  static Expected<TileSpace> make(const IterationSpace& space, const Tiling& tiling);

  [[nodiscard]] int dims() const noexcept { return static_cast<int>(lower_.size()); }
  /// Bounding box of J^S, inclusive.
  [[nodiscard]] const Index& lower() const noexcept { return lower_; }
  [[nodiscard]] const Index& upper() const noexcept { return upper_; }
  /// u_d = upper_d - lower_d + 1: the number of tiles along d (bounding box).
  [[nodiscard]] Index counts() const;
  [[nodiscard]] bool is_box() const noexcept { return tiles_.empty(); }
  /// Number of tiles.
  [[nodiscard]] std::int64_t size() const noexcept { return size_; }
  [[nodiscard]] bool contains(const Index& tile) const;
  /// Calls f(tile) for every tile, in row-major order of the bounding box.
  template <class F>
  void for_each(F&& f) const;

 private:
  Index lower_;
  Index upper_;
  std::vector<Index> tiles_;  // sorted; empty for a box
  std::int64_t size_ = 0;
};

/// Iteration-point box [lo_d, hi_d] (1-based, inclusive) of a tile of a rectangular tiling,
/// clipped to the space: partial tiles at the upper boundaries.
struct PointBox {
  Index lo;
  Index hi;
};
PointBox tile_box(const IterationSpace& space, const Tiling& tiling, const Index& tile);

template <class F>
void TileSpace::for_each(F&& f) const {
  if (!is_box()) {
    for (const auto& t : tiles_) f(t);
    return;
  }
  Index t = lower_;
  const int n = dims();
  while (true) {
    f(static_cast<const Index&>(t));
    int d = n - 1;
    while (d >= 0 && t[static_cast<std::size_t>(d)] == upper_[static_cast<std::size_t>(d)]) {
      t[static_cast<std::size_t>(d)] = lower_[static_cast<std::size_t>(d)];
      --d;
    }
    if (d < 0) return;
    ++t[static_cast<std::size_t>(d)];
  }
}

}  // namespace tp::plan
