// Tiling matrices, legality, tile dependences D^S and the tile space J^S.
#include <tilepipe/plan/tiling.hpp>
#include <tilepipe/support/checked_math.hpp>

#include <algorithm>
#include <set>

namespace tp::plan {

namespace {

Index minus_one(const Index& j) {
  Index x = j;
  for (auto& v : x) --v;
  return x;
}

// Calls f(x) for every integer x in the box [lo, hi] (inclusive), row-major.
template <class F>
void for_each_in_box(const Index& lo, const Index& hi, F&& f) {
  Index x = lo;
  const int n = static_cast<int>(lo.size());
  for (int d = 0; d < n; ++d) {
    if (lo[static_cast<std::size_t>(d)] > hi[static_cast<std::size_t>(d)]) return;
  }
  while (true) {
    f(static_cast<const Index&>(x));
    int d = n - 1;
    while (d >= 0 && x[static_cast<std::size_t>(d)] == hi[static_cast<std::size_t>(d)]) {
      x[static_cast<std::size_t>(d)] = lo[static_cast<std::size_t>(d)];
      --d;
    }
    if (d < 0) return;
    ++x[static_cast<std::size_t>(d)];
  }
}

std::int64_t box_volume(const Index& lo, const Index& hi) {
  std::int64_t v = 1;
  for (std::size_t d = 0; d < lo.size(); ++d) {
    auto p = checked_mul(v, hi[d] - lo[d] + 1);
    if (!p) return INT64_MAX;
    v = *p;
  }
  return v;
}

}  // namespace

Expected<Tiling> Tiling::rectangular(Index tile_extents) {
  const int n = static_cast<int>(tile_extents.size());
  std::vector<Rational> diag;
  for (int d = 0; d < n; ++d) {
    const std::int64_t w = tile_extents[static_cast<std::size_t>(d)];
    if (w < 1) {
      return fail(Errc::invalid_argument, "tile size " + std::to_string(w) + " in dimension " +
                                              std::to_string(d + 1) + ": tile sizes must be >= 1");
    }
    diag.emplace_back(1, w);
  }
  Tiling t;
  t.h_ = RationalMatrix::diagonal(diag);
  std::vector<Rational> pdiag;
  Rational grain = 1;
  for (auto w : tile_extents) {
    pdiag.emplace_back(w);
    auto g = checked_mul(grain, Rational(w));
    if (!g)
      return fail(Errc::out_of_range, "tile " + to_string(tile_extents) + " overflows 64 bits");
    grain = *g;
  }
  t.p_ = RationalMatrix::diagonal(pdiag);
  t.extents_ = std::move(tile_extents);
  t.grain_ = grain;
  return t;
}

Expected<Tiling> Tiling::general(RationalMatrix h) {
  auto p = h.inverse();
  if (!p) return Unexpected{p.error()};
  auto det = p->determinant();
  if (!det) return fail(Errc::out_of_range, "tiling matrix: det(P) overflows 64 bits");
  Tiling t;
  t.h_ = std::move(h);
  t.p_ = std::move(*p);
  t.grain_ = *det < Rational(0) ? -*det : *det;
  // A diagonal H whose entries are 1/w is the rectangular tiling: keep the fast paths.
  if (t.h_.is_diagonal()) {
    Index w;
    for (int d = 0; d < t.h_.size(); ++d) {
      const Rational e = t.h_.at(d, d);
      if (e.num() != 1) return t;
      w.push_back(e.den());
    }
    t.extents_ = std::move(w);
  }
  return t;
}

const Index& Tiling::tile_extents() const {
  TP_EXPECTS(is_rectangular());
  return extents_;
}

Index Tiling::tile_of(const Index& j) const {
  if (is_rectangular()) {
    Index t(j.size());
    for (std::size_t d = 0; d < j.size(); ++d) t[d] = floor_div(j[d] - 1, extents_[d]);
    return t;
  }
  return h_.apply_floor(minus_one(j));
}

Status check_legal(const Tiling& tiling, const DependenceMatrix& deps) {
  if (deps.dims() != tiling.dims()) {
    return fail(Errc::invalid_argument, "the dependences have " + std::to_string(deps.dims()) +
                                            " dimensions but the tiling has " +
                                            std::to_string(tiling.dims()));
  }
  for (const auto& d : deps.vectors()) {
    const auto hd = tiling.h().checked_apply(d);
    if (!hd) {
      // |(H d)_k| beyond 2^63 is far from the [0, 1) legality asks for: say so, with the cause.
      return fail(Errc::out_of_range, "tiling matrix: H d overflows 64 bits for dependence " +
                                          to_string(d) + " (entries of H too large)");
    }
    for (int k = 0; k < tiling.dims(); ++k) {
      const Rational v = (*hd)[static_cast<std::size_t>(k)];
      if (v < Rational(0)) {
        return fail(Errc::illegal_tiling,
                    "illegal tiling: dependence " + to_string(d) + " has (H d)_" +
                        std::to_string(k + 1) + " = " + v.to_string() +
                        " < 0 (HD >= 0 fails, tiles would not be atomic): the space must be "
                        "skewed first");
      }
      if (v >= Rational(1)) {
        std::string side =
            tiling.is_rectangular()
                ? "tile size " + std::to_string(tiling.tile_extents()[static_cast<std::size_t>(k)])
                : "(H d)_" + std::to_string(k + 1) + " = " + v.to_string();
        return fail(Errc::illegal_tiling, "illegal tiling: dependence " + to_string(d) +
                                              " is not shorter than the tile side in dimension " +
                                              std::to_string(k + 1) + " (" + side +
                                              "; |HD| < 1 fails)");
      }
    }
  }
  return {};
}

Expected<std::vector<Index>> tile_dependences(const Tiling& tiling, const DependenceMatrix& deps) {
  TP_TRY(check_legal(tiling, deps));
  const int n = tiling.dims();
  std::set<Index> out;
  if (tiling.is_rectangular()) {
    // Per dimension: component k of floor(H(j0 + d)) is 1 for some j0 in tile 0 iff d_k > 0, and
    // 0 for some j0 (legality: d_k < w_k). A box, so every combination occurs.
    for (const auto& d : deps.vectors()) {
      std::vector<int> positive;
      for (int k = 0; k < n; ++k) {
        if (d[static_cast<std::size_t>(k)] > 0) positive.push_back(k);
      }
      const std::size_t combos = std::size_t{1} << positive.size();
      for (std::size_t mask = 1; mask < combos; ++mask) {
        Index ds(static_cast<std::size_t>(n), 0);
        for (std::size_t b = 0; b < positive.size(); ++b) {
          if (mask & (std::size_t{1} << b)) ds[static_cast<std::size_t>(positive[b])] = 1;
        }
        out.insert(ds);
      }
    }
    return std::vector<Index>(out.begin(), out.end());
  }
  // General H: tile 0 is P [0,1)^n; bound it by the images of the unit cube's vertices.
  const char* overflow =
      "tiling matrix: the tiles' coordinates overflow 64 bits (entries of H or "
      "H^-1 too large)";
  Index lo(static_cast<std::size_t>(n), INT64_MAX);
  Index hi(static_cast<std::size_t>(n), INT64_MIN);
  for (std::size_t mask = 0; mask < (std::size_t{1} << n); ++mask) {
    Index y(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) y[static_cast<std::size_t>(k)] = (mask >> k) & 1U;
    const auto x = tiling.p().checked_apply(y);
    if (!x) return fail(Errc::out_of_range, overflow);
    for (std::size_t k = 0; k < x->size(); ++k) {
      if ((*x)[k].floor() == INT64_MAX) return fail(Errc::out_of_range, overflow);
      lo[k] = std::min(lo[k], (*x)[k].floor());
      hi[k] = std::max(hi[k], (*x)[k].floor() + 1);
    }
  }
  if (box_volume(lo, hi) > enumeration_limit) {
    return fail(Errc::out_of_range,
                "tiling matrix: tile 0 spans more than " + std::to_string(enumeration_limit) +
                    " candidate points; use rectangular tiles or a smaller H^-1");
  }
  const Index zero(static_cast<std::size_t>(n), 0);
  bool overflowed = false;
  for_each_in_box(lo, hi, [&](const Index& j0) {
    if (overflowed) return;
    const auto t0 = tiling.h().checked_apply_floor(j0);
    if (!t0 || *t0 != zero) {
      overflowed = !t0;
      return;
    }
    for (const auto& d : deps.vectors()) {
      Index x = j0;
      for (int k = 0; k < n; ++k) {
        auto xk = checked_add(x[static_cast<std::size_t>(k)], d[static_cast<std::size_t>(k)]);
        if (!xk) {
          overflowed = true;
          return;
        }
        x[static_cast<std::size_t>(k)] = *xk;
      }
      auto ds = tiling.h().checked_apply_floor(x);
      if (!ds) {
        overflowed = true;
        return;
      }
      if (*ds != zero) out.insert(std::move(*ds));
    }
  });
  if (overflowed) return fail(Errc::out_of_range, overflow);
  return std::vector<Index>(out.begin(), out.end());
}

Expected<TileSpace> TileSpace::make(const IterationSpace& space, const Tiling& tiling) {
  const int n = space.dims();
  if (tiling.dims() != n) {
    return fail(Errc::invalid_argument, "the tile has " + std::to_string(tiling.dims()) +
                                            " dimensions but the iteration space has " +
                                            std::to_string(n));
  }
  TileSpace ts;
  if (tiling.is_rectangular()) {
    ts.lower_.assign(static_cast<std::size_t>(n), 0);
    ts.upper_.resize(static_cast<std::size_t>(n));
    std::int64_t count = 1;
    for (int d = 0; d < n; ++d) {
      const auto u = ceil_div(space.extent(d), tiling.tile_extents()[static_cast<std::size_t>(d)]);
      ts.upper_[static_cast<std::size_t>(d)] = u - 1;
      count *= u;  // <= points, which fits
    }
    ts.size_ = count;
    return ts;
  }
  if (space.points() > enumeration_limit) {
    return fail(Errc::out_of_range,
                "a non-rectangular tiling matrix needs the tile space enumerated: at most " +
                    std::to_string(enumeration_limit) + " iteration points (this space has " +
                    std::to_string(space.points()) + ")");
  }
  std::set<Index> tiles;
  const Index ones(static_cast<std::size_t>(n), 1);
  bool overflowed = false;
  for_each_in_box(ones, space.extents(), [&](const Index& j) {
    if (overflowed) return;
    auto t = tiling.h().checked_apply_floor(minus_one(j));
    if (t) {
      tiles.insert(std::move(*t));
    } else {
      overflowed = true;
    }
  });
  if (overflowed) {
    return fail(Errc::out_of_range,
                "tiling matrix: the tiles' coordinates overflow 64 bits (entries of H too large)");
  }
  ts.lower_ = *tiles.begin();
  ts.upper_ = *tiles.begin();
  for (const auto& t : tiles) {
    for (int d = 0; d < n; ++d) {
      const auto k = static_cast<std::size_t>(d);
      ts.lower_[k] = std::min(ts.lower_[k], t[k]);
      ts.upper_[k] = std::max(ts.upper_[k], t[k]);
    }
  }
  ts.tiles_.assign(tiles.begin(), tiles.end());
  ts.size_ = static_cast<std::int64_t>(ts.tiles_.size());
  if (ts.size_ == box_volume(ts.lower_, ts.upper_)) ts.tiles_.clear();  // it is a full box
  return ts;
}

Index TileSpace::counts() const {
  Index u(lower_.size());
  for (std::size_t d = 0; d < u.size(); ++d) u[d] = upper_[d] - lower_[d] + 1;
  return u;
}

bool TileSpace::contains(const Index& tile) const {
  if (tile.size() != lower_.size()) return false;
  for (std::size_t d = 0; d < tile.size(); ++d) {
    if (tile[d] < lower_[d] || tile[d] > upper_[d]) return false;
  }
  return is_box() || std::binary_search(tiles_.begin(), tiles_.end(), tile);
}

PointBox tile_box(const IterationSpace& space, const Tiling& tiling, const Index& tile) {
  TP_EXPECTS(tiling.is_rectangular());
  PointBox b{Index(tile.size()), Index(tile.size())};
  for (std::size_t d = 0; d < tile.size(); ++d) {
    const std::int64_t w = tiling.tile_extents()[d];
    b.lo[d] = 1 + tile[d] * w;
    b.hi[d] = std::min(space.extents()[d], (tile[d] + 1) * w);
  }
  return b;
}

}  // namespace tp::plan
