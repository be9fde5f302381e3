// sweep3d: the tile function, the between-sweeps exchange and the plain loop (issue 13).
#include <tilepipe/exec/box_exchange.hpp>
#include <tilepipe/exec/pipeline.hpp>
#include <tilepipe/kernels/sweep3d.hpp>
#include <tilepipe/support/assert.hpp>
#include <tilepipe/support/checked_math.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace tp::kernels {

namespace {

std::size_t sz(Index v) {
  return static_cast<std::size_t>(v);
}

// The tag of the exchange between sweeps (no face is in flight then; array_output's tag is
// max_tag, faces use small ones).
constexpr int exchange_tag = comm::max_tag - 1;

std::string real_text(double v) {
  return fmt::format("{}", v);
}

}  // namespace

static_assert(exec::ResidentKernel<Sweep3d>);
// The executor calls both hooks (a signature that does not match would silently not be called).
static_assert(exec::detail::StartHook<Sweep3d> && exec::detail::SweepHook<Sweep3d> &&
              exec::detail::MirrorHook<Sweep3d>);

Sweep3dParams sweep3d_params_of(const exec::ParamValues& values) {
  Sweep3dParams p;
  p.sigma_t = values.real("sigma_t");
  p.source = values.real("source");
  p.angles = values.integer("angles");
  p.iterations = values.integer("iterations");
  p.c = values.real("c");
  p.paired = values.integer("paired");
  p.mirror_from = values.integer("mirror_from");
  return p;
}

Sweep3dQuadrature sweep3d_quadrature(std::int64_t angles) {
  TP_EXPECTS(angles == 1 || angles == 3);
  Sweep3dQuadrature q;
  if (angles == 1) {
    const double mu = 1.0 / std::sqrt(3.0);
    q.count = 1;
    q.mu[0] = {mu, mu, mu};
    q.weight = 1.0 / 8.0;
  } else {
    const double mu1 = 0.3500212;
    const double mu2 = 0.8688903;
    q.count = 3;
    q.mu[0] = {mu1, mu1, mu2};
    q.mu[1] = {mu1, mu2, mu1};
    q.mu[2] = {mu2, mu1, mu1};
    q.weight = 1.0 / 24.0;
  }
  return q;
}

Expected<Sweep3d> Sweep3d::make(const Point<3>& n, const Sweep3dParams& p) {
  if (p.mirror_from < 0) {
    return fail(Errc::invalid_argument, "mirror_from " + std::to_string(p.mirror_from) +
                                            ": must be >= 0 (0: never mirror)");
  }
  if (p.paired != 0 && p.paired != 1) {
    return fail(Errc::invalid_argument,
                "paired " + std::to_string(p.paired) +
                    ": must be 1 (octants o and o | 4 in one sweep) or 0 (one after another)");
  }
  Index cells = 1;
  Index slab = 1;
  for (int d = 0; d < 3; ++d) {
    if (n[d] < 1) {
      return fail(Errc::invalid_argument, "size " + std::to_string(n[d]) + " in dimension " +
                                              std::to_string(d + 1) + ": must be >= 1");
    }
    const auto c = checked_mul(cells, n[d]);
    // Paired: 2K points along k.
    const auto extent = d == 2 && p.paired != 0 ? checked_mul(n[d], Index{2}) : n[d];
    const auto side = extent ? checked_add(*extent, 1) : std::nullopt;
    const auto s = side ? checked_mul(slab, *side) : std::nullopt;
    if (!c || !s) return fail(Errc::out_of_range, "the grid does not fit in 64-bit offsets");
    cells = *c;
    slab = *s;
  }
  // The executor's slab, the kept output and the ranks' doubles per cell (state_bytes).
  const auto slab_bytes = checked_mul(slab, Index{sizeof(Sweep3dCell)});
  const auto out_bytes = slab_bytes ? checked_add(*slab_bytes, *slab_bytes) : std::nullopt;
  const auto grid_bytes = checked_mul(cells, Index{10 * sizeof(double)});
  if (!out_bytes || !grid_bytes || !checked_add(*out_bytes, *grid_bytes)) {
    return fail(Errc::out_of_range, "the grid's arrays do not fit in 64-bit byte offsets");
  }
  if (p.angles != 1 && p.angles != 3) {
    return fail(Errc::invalid_argument,
                "angles " + std::to_string(p.angles) + ": must be 1 (S2) or 3 (S4)");
  }
  if (p.iterations < 1 || p.iterations > sweep3d_max_iterations) {
    return fail(Errc::invalid_argument, "iterations " + std::to_string(p.iterations) +
                                            ": must be between 1 and " +
                                            std::to_string(sweep3d_max_iterations));
  }
  if (!(std::isfinite(p.sigma_t) && p.sigma_t > 0.0)) {
    return fail(Errc::invalid_argument,
                "sigma_t " + real_text(p.sigma_t) + ": must be a finite number > 0");
  }
  if (!(std::isfinite(p.source) && p.source >= 0.0)) {
    return fail(Errc::invalid_argument,
                "source " + real_text(p.source) + ": must be a finite number >= 0");
  }
  if (!(std::isfinite(p.c) && p.c >= 0.0)) {
    return fail(Errc::invalid_argument, "c " + real_text(p.c) + ": must be a finite number >= 0");
  }
  return Sweep3d(n, p);
}

Sweep3d::Sweep3d(const Point<3>& n, const Sweep3dParams& p)
    : n_(n), p_(p), q_(sweep3d_quadrature(p.angles)), state_(std::make_shared<State>()) {
  for (int m = 0; m < q_.count; ++m) {
    for (int d = 0; d < 3; ++d) two_mu_[m][d] = 2.0 * q_.mu[m][d];
    den_[m] = ((p.sigma_t + two_mu_[m][0]) + two_mu_[m][1]) + two_mu_[m][2];
  }
  first_source_ = p.source + p.c * 0.0;
}

double Sweep3d::state_bytes() const noexcept {
  const double cells =
      static_cast<double>(n_[0]) * static_cast<double>(n_[1]) * static_cast<double>(n_[2]);
  return cells * sizeof(double) * (p_.paired != 0 ? 10 : 4);
}

Box<3> Sweep3d::half_of(const Box<3>& b, Index h) const noexcept {
  Box<3> r = b;
  r.lo[2] = std::max(b.lo[2], 1 + h * n_[2]) - h * n_[2];
  r.hi[2] = std::max(r.lo[2], std::min(b.hi[2], 1 + (h + 1) * n_[2]) - h * n_[2]);
  return r;
}

Box<3> Sweep3d::lift(const Box<3>& b, Index h) const noexcept {
  Box<3> r = b;
  r.lo[2] += h * n_[2];
  r.hi[2] += h * n_[2];
  return r;
}

Index Sweep3d::cell_index(const Point<3>& x, int octant) const noexcept {
  Index lin = 0;
  for (int d = 0; d < 3; ++d) {
    const Index c = ((octant >> d) & 1) != 0 ? n_[d] - x[d] : x[d] - 1;
    lin = lin * n_[d] + c;
  }
  return lin;
}

Point<3> Sweep3d::reflect(const Point<3>& x, int octant) const noexcept {
  Point<3> y = x;
  for (int d = 0; d < 3; ++d) {
    if (((octant >> d) & 1) != 0) y[d] = n_[d] + 1 - x[d];
  }
  return y;
}

Box<3> Sweep3d::reflect(const Box<3>& b, int octant) const noexcept {
  Box<3> r = b;
  for (int d = 0; d < 3; ++d) {
    if (((octant >> d) & 1) != 0) {
      r.lo[d] = n_[d] + 2 - b.hi[d];
      r.hi[d] = n_[d] + 2 - b.lo[d];
    }
  }
  return r;
}

namespace {

Box<3> intersect(const Box<3>& a, const Box<3>& b) {
  Box<3> r;
  for (int d = 0; d < 3; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
  }
  return r;
}

// Whether b lies in a.
bool contains(const Box<3>& a, const Box<3>& b) {
  for (int d = 0; d < 3; ++d) {
    if (b.lo[d] < a.lo[d] || b.hi[d] > a.hi[d]) return false;
  }
  return true;
}

// The row-major offset of x in b.
Index offset_in(const Box<3>& b, const Point<3>& x) {
  return ((x[0] - b.lo[0]) * b.extent(1) + (x[1] - b.lo[1])) * b.extent(2) + (x[2] - b.lo[2]);
}

// The offsets [a, b) of the points of `clip` in the row of `len` points along k from `first`
// (clip's extent along k lies in the row's, or clip misses the row); [len, len) when it misses.
std::pair<Index, Index> row_range(const Box<3>& clip, const Point<3>& first, Index len) {
  if (clip.empty() || first[0] < clip.lo[0] || first[0] >= clip.hi[0] || first[1] < clip.lo[1] ||
      first[1] >= clip.hi[1]) {
    return {len, len};
  }
  return {clip.lo[2] - first[2], clip.hi[2] - first[2]};
}

}  // namespace

void Sweep3d::compute_tile(const Box<3>& box,
                           const exec::SlabView<Sweep3dCell, 3>& slab) const noexcept {
  if (box.empty()) return;
  const State& st = *state_;
  const Index si = slab.stride(0);
  const Index sj = slab.stride(1);
  const int per = sweeps_per_iteration();
  // The box of the points this rank sweeps that holds the tile (one per cycle of a block-cyclic
  // plan; the played rank's in a mirrored sweep, ADR 0024), once the boxes are known; the home
  // cells of the paired box of mine are the "local" ones below.
  std::size_t q = 0;
  while (q < st.swept.size() && !contains(st.swept[q], box)) ++q;
  const bool known = q < st.swept.size() && q < st.home.size();
  const Box<3> my_home = known ? st.home[q] : Box<3>{};
  const Index home_at = known ? st.home_at[q] : 0;
  if (st.sweep == per * p_.iterations) {  // the final sweep: phi into every cell, at home
    const Box<3> first_half = half_of(box, 0);
    const Index len = first_half.extent(2);
    exec::for_each_row(first_half, [&](const Point<3>& first) {
      Sweep3dCell* row = slab.at(first);
      const double* phi = st.sum.data() + home_at + offset_in(my_home, first);
      for (Index k = 0; k < len; ++k) row[k].value = phi[k];
    });
    return;
  }
  const bool first_iteration = st.sweep < per;
  const int count = q_.count;
  const double w = q_.weight;
  static constexpr Sweep3dCell vacuum{};
  // Sweeps the points [k0, k1) of a row, `left` the upstream cell along k of the first.
  const auto sweep_cells = [&](Sweep3dCell* row, const Sweep3dCell* up_i, const Sweep3dCell* up_j,
                               Index k0, Index k1, const Sweep3dCell* left, auto&& source_of) {
    for (Index k = k0; k < k1; ++k) {
      const double src = source_of(k);
      Sweep3dCell& out = row[k];
      double p = 0.0;
      for (int m = 0; m < count; ++m) {
        const double in_x = up_i[k].flux[sz(3 * m)];
        const double in_y = up_j[k].flux[sz(3 * m + 1)];
        const double in_z = left->flux[sz(3 * m + 2)];
        const auto& c = two_mu_[sz(m)];
        const double psi = (((src + c[0] * in_x) + c[1] * in_y) + c[2] * in_z) / den_[sz(m)];
        out.flux[sz(3 * m)] = 2.0 * psi - in_x;
        out.flux[sz(3 * m + 1)] = 2.0 * psi - in_y;
        out.flux[sz(3 * m + 2)] = 2.0 * psi - in_z;
        p = p + w * psi;
      }
      out.value = p;
      left = &out;
    }
  };
  // Each half of the space (one, unless paired) is its own octant's sweep.
  for (Index h = 0; h < halves(); ++h) {
    const Box<3> part = lift(half_of(box, h), h);
    if (part.empty()) continue;
    const Index len = part.extent(2);
    // The points whose cells are at home in the paired box of mine (known from before_sweeps
    // on): their p_o is added into the home sums here, by the thread that computes them, rather
    // than one thread in after_sweep (one value per cell and octant, the octants in order,
    // exactly as there; paired, p_4..p_7 are kept for after_sweep to add after p_3), and from
    // the second iteration on their source Q + C * phi_prev is computed here from the previous
    // iteration's phi at home (`prev`); only the other points' sources come through `source`.
    const int octant = octant_of(st.sweep, h);
    const Box<3> local =
        st.fused && known ? intersect(part, lift(reflect(my_home, octant), h)) : Box<3>{};
    const Index back = ((octant >> 2) & 1) != 0 ? -1 : 1;
    // An iteration's first octant starts every home sum: all its cells are at home (no
    // reflection).
    const bool start_sums = octant == 0;
    const bool keep = p_.paired != 0 && octant >= 4;
    double* sums = keep ? state_->later[sz(octant - 4)].data() : state_->sum.data();
    // Octant 7's points whose cells' phi this sweep finishes (State::folded).
    const Box<3> fold = st.fused && known && octant == 7 && p_.paired != 0
                            ? intersect(part, lift(reflect(st.folded[q], octant), h))
                            : Box<3>{};
    // The second half's first points along k start from vacuum (the point below is the other
    // octant's).
    const bool from_vacuum = h == 1 && part.lo[2] == n_[2] + 1;
    exec::for_each_row(part, [&](const Point<3>& first) {
      Sweep3dCell* row = slab.at(first);
      const Sweep3dCell* up_i = row - si;
      const Sweep3dCell* up_j = row - sj;
      const auto left = [&](Index k) { return k == 0 && from_vacuum ? &vacuum : row + k - 1; };
      // The row's points at home here: [a, b) (row offsets), their cells from `home` on.
      const std::pair<Index, Index> at_home = row_range(local, first, len);
      const Index a = at_home.first;
      const Index b = at_home.second;
      Index home = 0;
      if (a < b) {
        Point<3> x = first;
        x[2] = local.lo[2] - h * n_[2];
        home = home_at + offset_in(my_home, reflect(x, octant));
      }
      if (first_iteration) {
        sweep_cells(row, up_i, up_j, 0, len, left(0), [&](Index) { return first_source_; });
      } else {
        const double* source = st.source.data() + st.swept_at[q] + offset_in(st.swept[q], first);
        const auto received = [&](Index k) { return source[k]; };
        const double* prev = st.prev.data();
        sweep_cells(row, up_i, up_j, 0, a, left(0), received);
        sweep_cells(row, up_i, up_j, a, b, left(a),
                    [&](Index k) { return p_.source + p_.c * prev[home + (k - a) * back]; });
        sweep_cells(row, up_i, up_j, b, len, left(b), received);
      }
      double* at = sums + home;
      if (keep) {
        // [fa, fb) within [a, b): phi = (((sum + p_4) + p_5) + p_6) + p_7 (p_3 is in the sum).
        const auto [fa, fb] = row_range(fold, first, len);
        for (Index k = a; k < b; ++k, at += back) {
          if (k >= fa && k < fb) {
            const auto y = static_cast<std::size_t>(at - sums);
            double& s = state_->sum[y];
            s = (((s + state_->later[0][y]) + state_->later[1][y]) + state_->later[2][y]) +
                row[k].value;
          } else {
            *at = row[k].value;
          }
        }
      } else {
        for (Index k = a; k < b; ++k, at += back) {
          *at = (start_sums ? 0.0 : *at) + row[k].value;
        }
      }
    });
  }
}

Sweep3d::result_type Sweep3d::tile_result(
    const Box<3>& box, const exec::SlabView<const Sweep3dCell, 3>& slab) const noexcept {
  std::uint64_t sum = 0;
  const Box<3> first_half = half_of(box, 0);  // paired: the second half holds no phi
  const Index len = first_half.extent(2);
  exec::for_each_row(first_half, [&](const Point<3>& first) {
    const Sweep3dCell* row = slab.at(first);
    const auto lin = static_cast<std::uint64_t>(cell_index(first, 0));
    for (Index k = 0; k < len; ++k) {
      sum += sweep3d_point_hash(lin + static_cast<std::uint64_t>(k), row[k].value);
    }
  });
  return sum;
}

namespace {

// Calls f(first, n, y, step) for every row (along dimension 3) of `part`, a box of executor
// points: `first` its first point, n its length, y the offset in `home` of the reflection of
// `first` along the octant's dimensions and step (+1 or -1) that of each next point's.
template <class F>
void for_each_reflected_row(const Box<3>& part, const Box<3>& home, const Point<3>& n, int octant,
                            F&& f) {
  if (part.empty()) return;
  const Index len = part.extent(2);
  const bool back = ((octant >> 2) & 1) != 0;
  exec::for_each_row(part, [&](const Point<3>& first) {
    Point<3> y = first;
    for (int d = 0; d < 3; ++d) {
      if (((octant >> d) & 1) != 0) y[d] = n[d] + 1 - first[d];
    }
    f(first, len, offset_in(home, y), back ? Index{-1} : Index{1});
  });
}

}  // namespace

unsigned Sweep3d::mirror(int sweep) const noexcept {
  if (!p_.mirrored()) return 0;  // below mirror_from (0: never): the exchange between sweeps
  if (sweep >= sweeps_per_iteration() * p_.iterations) return 0;  // the final sweep: at home
  // Paired, a sweep's halves differ along k (the space is not the grid's reflection there).
  return static_cast<unsigned>(octant_of(sweep, 0)) & (p_.paired != 0 ? 3U : 7U);
}

void Sweep3d::mirror_roles(unsigned mask, std::span<const int> plays) const {
  if (mask < state_->plays.size()) state_->plays[mask].assign(plays.begin(), plays.end());
}

std::span<const Box<3>> Sweep3d::swept_by(std::size_t r, int sweep) const {
  const State& st = *state_;
  const auto& plays = st.plays[mirror(sweep)];
  const std::size_t role = plays.empty() ? r : static_cast<std::size_t>(plays[r]);
  return std::span<const Box<3>>(st.parts).subspan(st.first_part[role],
                                                   st.first_part[role + 1] - st.first_part[role]);
}

void Sweep3d::sweep_boxes(std::size_t me, int sweep) const {
  State& st = *state_;
  const auto boxes = swept_by(me, sweep);
  st.swept.assign(boxes.begin(), boxes.end());
  st.swept_at.clear();
  Index points = 0;
  for (const Box<3>& b : st.swept) {
    st.swept_at.push_back(points);
    points += b.volume();
  }
}

Status Sweep3d::learn_boxes(std::span<const Box<3>> owned, comm::World& world) const {
  auto lists = exec::all_box_lists<3>(world, owned, exchange_tag);
  if (!lists) return Unexpected{lists.error()};
  set_boxes(*lists, static_cast<std::size_t>(world.rank()));
  return {};
}

void Sweep3d::sweep_alone(const Box<3>& space, int sweep) const {
  TP_EXPECTS(sweep >= 0 && sweep < sweeps_per_iteration() * p_.iterations);
  set_boxes({{space}}, 0);
  sweep_boxes(0, sweep);
  state_->sweep = sweep;
  state_->fused = true;
}

void Sweep3d::set_boxes(const std::vector<std::vector<Box<3>>>& lists, std::size_t me) const {
  State& st = *state_;
  st.parts.clear();
  st.first_part.assign(1, 0);
  for (const auto& l : lists) {
    st.parts.insert(st.parts.end(), l.begin(), l.end());
    st.first_part.push_back(st.parts.size());
  }
  st.mine.assign(lists[me].begin(), lists[me].end());
  // Octants 3 and 7 run in sweep 3 (paired): over the boxes of its role (ADR 0024).
  const auto third = swept_by(me, 3);
  st.home.clear();
  st.home_at.clear();
  st.folded.clear();
  Index cells = 0;
  for (std::size_t q = 0; q < st.mine.size(); ++q) {
    st.home.push_back(half_of(st.mine[q], 0));
    st.home_at.push_back(cells);
    cells += st.home.back().volume();
    st.folded.push_back(q < third.size()
                            ? intersect(intersect(st.home.back(), reflect(half_of(third[q], 0), 3)),
                                        reflect(half_of(third[q], 1), 7))
                            : Box<3>{});
  }
  st.to.resize(lists.size());
  st.from.resize(lists.size());
  st.sum.resize(sz(cells));
  if (p_.paired != 0) {
    for (auto& l : st.later) l.resize(sz(cells));
  }
  st.learned = true;
}

Status Sweep3d::before_sweeps(const exec::RankSlab<Sweep3dCell, 3>&, std::span<const Box<3>> owned,
                              comm::World& world) const {
  TP_TRY(learn_boxes(owned, world));
  sweep_boxes(static_cast<std::size_t>(world.rank()), 0);  // sweep 0 is never mirrored
  // Octant 0 starts every sum in the sweep (all its cells are at home where they are swept).
  state_->fused = true;
  return {};
}

// Between sweeps every part (a box of a rank's points, with its home cells) trades with every
// other part, its own rank's other boxes included (those values stay in the rank: to[me] becomes
// from[me]). The points a rank swept, and those it sweeps next, are the boxes of the rank it plays
// in that sweep (swept_by, ADR 0024: its own unless the sweep is mirrored; a block-cyclic plan is
// never mirrored); box q of them is paired with box q of its own (the sweep itself handles the
// cells at home there). A buffer to rank r holds, per box q of the sender's (outer) and box p of
// r's (inner), per half, the rows of their common box; r reads them in the same order (its
// sender's box outer).
Status Sweep3d::after_sweep(int done, const exec::RankSlab<Sweep3dCell, 3>& slab,
                            std::span<const Box<3>> owned, comm::World& world) const {
  State& st = *state_;
  const int finished = done - 1;
  const int per = sweeps_per_iteration();
  st.sweep = done;
  if (finished >= per * p_.iterations) return {};
  if (!st.learned) TP_TRY(learn_boxes(owned, world));
  const std::size_t ranks = st.first_part.size() - 1;
  const auto me = static_cast<std::size_t>(world.rank());
  // Rank r's own boxes (their first halves: its homes).
  const auto parts_of = [&](std::size_t r) {
    return std::span<const Box<3>>(st.parts).subspan(st.first_part[r],
                                                     st.first_part[r + 1] - st.first_part[r]);
  };
  // The boxes this rank swept (its role's in that sweep): those the executor ran here.
  const auto swept = swept_by(me, finished);
  TP_ASSERT(std::ranges::equal(swept, owned));
  const std::size_t homes = st.home.size();
  auto& to = st.to;
  auto& from = st.from;
  const Index halves_n = halves();
  // The slab's element of grid point x of half h.
  const auto at = [&](Point<3> x, Index h) {
    x[2] += h * n_[2];
    return slab.at(x);
  };
  const auto count_moved = [&] {
    for (std::size_t r = 0; r < ranks; ++r) {
      if (r != me) st.moved += static_cast<std::int64_t>(to[r].size());
    }
  };
  // After the first sweep the sweeps add the p_o of the cells at home in the paired box of mine
  // themselves (fused); the sums are started by each iteration's first octant.
  const bool fused = st.fused;
  if (!fused) st.sum.assign(st.sum.size(), 0.0);
  // p_o of this rank's points to their cells' homes: to part p of rank r, per half h, the points
  // of swept box q whose cells lie in p's home box (half_h(S_q) ∩ R_o(H_p)), row-major; each
  // home adds (or, paired, keeps p_4..p_7 of) what it gets at its cells (one value per cell and
  // octant, the octants in order). The buffers keep their capacity from sweep to sweep.
  for (std::size_t r = 0; r < ranks; ++r) {
    to[r].clear();
    from[r].clear();
    const auto theirs = parts_of(r);
    Index expect = 0;
    for (std::size_t q = 0; q < swept.size(); ++q) {
      for (std::size_t p = 0; p < theirs.size(); ++p) {
        if (r == me && p == q) continue;  // the sweep itself, or below
        for (Index h = 0; h < halves_n; ++h) {
          const int octant = octant_of(finished, h);
          const Box<3> part =
              intersect(half_of(swept[q], h), reflect(half_of(theirs[p], 0), octant));
          exec::for_each_row(part, [&](const Point<3>& first) {
            const Sweep3dCell* row = at(first, h);
            for (Index k = 0; k < part.extent(2); ++k) to[r].push_back(row[k].value);
          });
        }
      }
    }
    const auto their_swept = swept_by(r, finished);
    for (std::size_t p = 0; p < their_swept.size(); ++p) {
      for (std::size_t q = 0; q < homes; ++q) {
        if (r == me && p == q) continue;
        for (Index h = 0; h < halves_n; ++h) {
          const int octant = octant_of(finished, h);
          expect += intersect(half_of(their_swept[p], h), reflect(st.home[q], octant)).volume();
        }
      }
    }
    from[r].resize(sz(expect));
  }
  count_moved();
  TP_TRY(exec::exchange_values<double>(world, to, from, exchange_tag));
  from[me].swap(to[me]);  // between this rank's own boxes (the same order on both sides)
  // What a home does with p_o of one of its cells (y its offset in `sum`).
  const auto take = [&](int octant) {
    const bool keep = p_.paired != 0 && octant >= 4;
    double* into = keep ? st.later[sz(octant - 4)].data() : st.sum.data();
    return [into, keep](Index y, double v) { into[y] = keep ? v : into[y] + v; };
  };
  if (!fused) {
    for (std::size_t q = 0; q < std::min(swept.size(), homes); ++q) {
      for (Index h = 0; h < halves_n; ++h) {
        const int octant = octant_of(finished, h);
        const auto put = take(octant);
        for_each_reflected_row(intersect(half_of(swept[q], h), reflect(st.home[q], octant)),
                               st.home[q], n_, octant,
                               [&](const Point<3>& first, Index len, Index y, Index step) {
                                 const Sweep3dCell* row = at(first, h);
                                 y += st.home_at[q];
                                 for (Index k = 0; k < len; ++k, y += step) put(y, row[k].value);
                               });
      }
    }
  }
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto their_swept = swept_by(r, finished);
    const double* in = from[r].data();
    for (std::size_t p = 0; p < their_swept.size(); ++p) {
      for (std::size_t q = 0; q < homes; ++q) {
        if (r == me && p == q) continue;
        for (Index h = 0; h < halves_n; ++h) {
          const int octant = octant_of(finished, h);
          const auto put = take(octant);
          for_each_reflected_row(intersect(half_of(their_swept[p], h), reflect(st.home[q], octant)),
                                 st.home[q], n_, octant,
                                 [&](const Point<3>&, Index len, Index y, Index step) {
                                   y += st.home_at[q];
                                   for (Index k = 0; k < len; ++k, y += step) put(y, *in++);
                                 });
        }
      }
    }
  }
  st.fused = true;
  const bool last_of_iteration = finished % per == per - 1;
  if (p_.paired != 0 && last_of_iteration) {
    // p_3 is in every sum: phi = (((sum + p_4) + p_5) + p_6) + p_7, the order, for the
    // home cells the sweep did not finish (State::folded).
    double* sum = st.sum.data();
    const double* p4 = st.later[0].data();
    const double* p5 = st.later[1].data();
    const double* p6 = st.later[2].data();
    const double* p7 = st.later[3].data();
    for (std::size_t q = 0; q < homes; ++q) {
      const Box<3>& home = st.home[q];
      const Box<3>& folded = st.folded[q];
      const Index len = home.extent(2);
      exec::for_each_row(home, [&](const Point<3>& first) {
        const auto [fa, fb] = row_range(folded, first, len);  // finished by the sweep
        const Index y0 = st.home_at[q] + offset_in(home, first);
        for (Index k = 0; k < len; ++k) {
          if (k >= fa && k < fb) continue;
          const auto c = sz(y0 + k);
          sum[c] = (((sum[c] + p4[c]) + p5[c]) + p6[c]) + p7[c];
        }
      });
    }
  }
  const int next = done;
  sweep_boxes(me, next);                       // the boxes this rank sweeps next (State::swept)
  if (next >= per * p_.iterations) return {};  // the final sweep writes the sums (phi)
  if (last_of_iteration) {  // phi of the iteration becomes prev; the next octant 0 starts sums
    st.prev.swap(st.sum);
    st.sum.resize(st.prev.size());
  }
  if (next < per) return {};  // the first iteration's source is Q + C * 0.0 everywhere
  // The sources of the next sweep's cells from their homes: to box p that rank r sweeps next,
  // per half h, Q + C * phi_prev of the home cells of box q of mine that p's points sweep
  // (H_q ∩ R_o(half_h(S_p))), row-major; r puts each at its point. The cells at home in the
  // paired box of the sweeping rank's own are computed by the sweep from prev (compute_tile).
  const std::span<const Box<3>> coming(st.swept);
  for (std::size_t r = 0; r < ranks; ++r) {
    to[r].clear();
    from[r].clear();
    const auto their_next = swept_by(r, next);
    Index expect = 0;
    for (std::size_t q = 0; q < homes; ++q) {
      for (std::size_t p = 0; p < their_next.size(); ++p) {
        if (r == me && p == q) continue;
        for (Index h = 0; h < halves_n; ++h) {
          const int o = octant_of(next, h);
          const Box<3> part = intersect(st.home[q], reflect(half_of(their_next[p], h), o));
          exec::for_each_row(part, [&](const Point<3>& first) {
            const double* row = st.prev.data() + st.home_at[q] + offset_in(st.home[q], first);
            for (Index k = 0; k < part.extent(2); ++k) to[r].push_back(p_.source + p_.c * row[k]);
          });
        }
      }
    }
    const auto theirs = parts_of(r);
    for (std::size_t p = 0; p < theirs.size(); ++p) {
      for (std::size_t q = 0; q < coming.size(); ++q) {
        if (r == me && p == q) continue;
        for (Index h = 0; h < halves_n; ++h) {
          const int o = octant_of(next, h);
          expect += intersect(half_of(theirs[p], 0), reflect(half_of(coming[q], h), o)).volume();
        }
      }
    }
    from[r].resize(sz(expect));
  }
  count_moved();
  TP_TRY(exec::exchange_values<double>(world, to, from, exchange_tag));
  from[me].swap(to[me]);
  Index points = 0;
  for (const Box<3>& m : coming) points += m.volume();
  st.source.resize(sz(points));
  double* source = st.source.data();
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto theirs = parts_of(r);
    const double* in = from[r].data();
    for (std::size_t p = 0; p < theirs.size(); ++p) {
      for (std::size_t q = 0; q < coming.size(); ++q) {
        if (r == me && p == q) continue;
        for (Index h = 0; h < halves_n; ++h) {
          const int o = octant_of(next, h);
          // Offsets in box q of half h's points, as grid points.
          Box<3> points_q = coming[q];
          points_q.lo[2] -= h * n_[2];
          points_q.hi[2] -= h * n_[2];
          for_each_reflected_row(
              intersect(half_of(theirs[p], 0), reflect(half_of(coming[q], h), o)), points_q, n_, o,
              [&](const Point<3>&, Index len, Index y, Index step) {
                y += st.swept_at[q];
                for (Index k = 0; k < len; ++k, y += step) source[y] = *in++;
              });
        }
      }
    }
  }
  return {};
}

std::vector<double> sweep3d_reference(const Point<3>& n, const Sweep3dParams& params) {
  TP_EXPECTS(n[0] >= 1 && n[1] >= 1 && n[2] >= 1 && params.iterations >= 1);
  const Sweep3dQuadrature q = sweep3d_quadrature(params.angles);
  const Index ni = n[0], nj = n[1], nk = n[2];
  const auto cells = sz(ni * nj * nk);
  const auto at = [&](Index i, Index j, Index k) { return sz((i * nj + j) * nk + k); };
  std::vector<double> phi(cells, 0.0);
  std::vector<double> src(cells);
  std::vector<double> p(8 * cells);
  std::vector<double> out(3 * cells);  // one direction's outgoing fluxes, x, y, z per cell
  for (std::int64_t t = 1; t <= params.iterations; ++t) {
    for (std::size_t c = 0; c < cells; ++c) src[c] = params.source + params.c * phi[c];
    for (int o = 0; o < 8; ++o) {
      double* po = p.data() + static_cast<std::size_t>(o) * cells;
      std::fill(po, po + cells, 0.0);
      const Index di = (o & 1) != 0 ? -1 : 1;
      const Index dj = (o & 2) != 0 ? -1 : 1;
      const Index dk = (o & 4) != 0 ? -1 : 1;
      for (int m = 0; m < q.count; ++m) {
        const double cx = 2.0 * q.mu[m][0];
        const double cy = 2.0 * q.mu[m][1];
        const double cz = 2.0 * q.mu[m][2];
        const double den = ((params.sigma_t + cx) + cy) + cz;
        for (Index ii = 0; ii < ni; ++ii) {
          const Index i = di > 0 ? ii : ni - 1 - ii;
          for (Index jj = 0; jj < nj; ++jj) {
            const Index j = dj > 0 ? jj : nj - 1 - jj;
            for (Index kk = 0; kk < nk; ++kk) {
              const Index k = dk > 0 ? kk : nk - 1 - kk;
              const double in_x = ii == 0 ? 0.0 : out[3 * at(i - di, j, k)];
              const double in_y = jj == 0 ? 0.0 : out[3 * at(i, j - dj, k) + 1];
              const double in_z = kk == 0 ? 0.0 : out[3 * at(i, j, k - dk) + 2];
              const double psi = (((src[at(i, j, k)] + cx * in_x) + cy * in_y) + cz * in_z) / den;
              out[3 * at(i, j, k)] = 2.0 * psi - in_x;
              out[3 * at(i, j, k) + 1] = 2.0 * psi - in_y;
              out[3 * at(i, j, k) + 2] = 2.0 * psi - in_z;
              po[at(i, j, k)] = po[at(i, j, k)] + q.weight * psi;
            }
          }
        }
      }
    }
    for (std::size_t c = 0; c < cells; ++c) {
      double s = 0.0;
      for (std::size_t o = 0; o < 8; ++o) s = s + p[o * cells + c];
      phi[c] = s;
    }
  }
  return phi;
}

std::uint64_t sweep3d_checksum(std::span<const double> phi) {
  std::uint64_t sum = 0;
  for (std::size_t c = 0; c < phi.size(); ++c) sum += sweep3d_point_hash(c, phi[c]);
  return sum;
}

}  // namespace tp::kernels
