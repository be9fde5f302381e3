// Grouping matrices H^G, P^G and the linear group schedules Pi^G.
#include <tilepipe/plan/schedule.hpp>
#include <tilepipe/support/checked_math.hpp>

#include <algorithm>

namespace tp::plan {

std::string_view to_string(ScheduleKind s) {
  return s == ScheduleKind::blocking ? "blocking" : "overlap";
}
std::string_view to_string(GroupingKind g) {
  return g == GroupingKind::hyperplane ? "hyperplane" : "vertical";
}

Grouping::Grouping(GroupingKind kind, int map_dim, Index cpu_factors)
    : kind_(kind), map_dim_(map_dim), m_(std::move(cpu_factors)) {
  const int n = static_cast<int>(m_.size());
  TP_EXPECTS(map_dim >= 0 && map_dim < n && m_[static_cast<std::size_t>(map_dim)] == 1);
  h_ = RationalMatrix(n);
  p_ = RationalMatrix(n);
  for (int k = 0; k < n; ++k) {
    const std::int64_t mk = m_[static_cast<std::size_t>(k)];
    TP_EXPECTS(mk >= 1);
    if (k == map_dim) continue;
    h_.at(k, k) = Rational(1, mk);
    p_.at(k, k) = Rational(mk);
  }
  h_.at(map_dim, map_dim) = 1;
  p_.at(map_dim, map_dim) = 1;
  if (kind == GroupingKind::hyperplane) {
    // Seed 002 formula (3): row i of H^G is all ones; row i of P^G is -m_k off the diagonal.
    for (int k = 0; k < n; ++k) {
      if (k == map_dim) continue;
      h_.at(map_dim, k) = 1;
      p_.at(map_dim, k) = Rational(-m_[static_cast<std::size_t>(k)]);
    }
  }
}

Index Grouping::group_of(const Index& tile) const {
  // H^G has entries 1/m_k on the diagonal and (hyperplane) ones in row i: integer arithmetic.
  const std::size_t n = tile.size();
  Index g(n);
  std::int64_t sum = 0;
  for (std::size_t k = 0; k < n; ++k) {
    sum += tile[k];
    g[k] = static_cast<int>(k) == map_dim_ ? tile[k] : floor_div(tile[k], m_[k]);
  }
  if (kind_ == GroupingKind::hyperplane) g[static_cast<std::size_t>(map_dim_)] = sum;
  return g;
}

Schedule::Schedule(ScheduleKind kind, Grouping grouping, int map_dim)
    : kind_(kind), grouping_(std::move(grouping)) {
  const int n = grouping_.h().size();
  pi_.assign(static_cast<std::size_t>(n), 0);
  const bool hyper = grouping_.kind() == GroupingKind::hyperplane;
  const std::int64_t node_coeff = kind == ScheduleKind::overlap ? (hyper ? 1 : 2) : (hyper ? 0 : 1);
  for (int k = 0; k < n; ++k) pi_[static_cast<std::size_t>(k)] = node_coeff;
  pi_[static_cast<std::size_t>(map_dim)] = 1;
}

Schedule::Schedule(ScheduleKind kind, Grouping grouping, int map_dim, const Index& mesh,
                   const Index& factors, std::int64_t map_tiles)
    : Schedule(kind, std::move(grouping), map_dim) {
  const std::size_t n = pi_.size();
  TP_EXPECTS(mesh.size() == n && factors.size() == n && map_tiles >= 1);
  cycles_.period.assign(n, 0);
  cycles_.stride.assign(n, 0);
  // Mixed radix, the last cyclic dimension innermost: `span` is the number of steps one CPU's
  // tiles of the inner cycles and of its row along the mapping dimension cover (f_i(x) = x).
  std::int64_t span = map_tiles;
  for (std::size_t k = n; k-- > 0;) {
    if (static_cast<int>(k) == map_dim || factors[k] <= 1) continue;
    Index unit(n, 0);
    unit[k] = checked_mul(mesh[k], grouping_.h().at(static_cast<int>(k), static_cast<int>(k)).den())
                  .value();
    cycles_.period[k] = unit[k];
    const std::int64_t gap = block_time_of(unit);  // f_k(P_k)
    cycles_.stride[k] = std::max(gap, span);
    span = checked_add(checked_mul(factors[k] - 1, cycles_.stride[k]).value(), span).value();
  }
}

std::int64_t Schedule::block_time_of(const Index& tile) const {
  const Index g = grouping_.group_of(tile);
  std::int64_t t = 0;
  for (std::size_t k = 0; k < g.size(); ++k) t += pi_[k] * g[k];
  return t;
}

std::int64_t Schedule::time_of(const Index& tile) const {
  if (cycles_.period.empty()) return block_time_of(tile);
  // Separable: t = sum_k F_k(j_k), F_k(y P_k + v) = f_k(v) + y L_k along a cyclic dimension.
  Index v = tile;
  std::int64_t delay = 0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    const std::int64_t p = cycles_.period[k];
    if (p == 0) continue;
    const std::int64_t y = floor_div(tile[k], p);
    v[k] = tile[k] - y * p;
    delay += y * cycles_.stride[k];
  }
  return block_time_of(v) + delay;
}

}  // namespace tp::plan
