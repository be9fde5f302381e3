// Grouping transformations (seed 002 4.1-4.6, formulas 2-3) and the linear schedules of groups:
// blocking (non-overlapping) and overlap (pipelined), with hyperplane or vertical grouping.
#pragma once

#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/plan/rational_matrix.hpp>

#include <cstdint>
#include <string_view>

namespace tp::plan {

/// Non-overlapping (receive, compute, send) or overlapping (pipelined) schedule (seed 000 3-4).
enum class ScheduleKind { blocking, overlap };
/// How the m CPUs of a node share its tiles (seed 002 4.2, 4.8).
enum class GroupingKind { hyperplane, vertical };

std::string_view to_string(ScheduleKind s);
std::string_view to_string(GroupingKind g);

/// The grouping of tiles into groups J^G = floor(H^G j^S) for mapping dimension i and CPU grid
/// m_k (k != i). Hyperplane: seed 002 formula (3), row i of H^G is (1, ..., 1), so a group is the
/// set of a node's tiles on one hyperplane sum(j^S) = const, one per CPU (Theorem 1).
/// Vertical: row i is e_i, so a group is the m tiles of a node with the same j_i^S, computed
/// together by splitting them into subtiles (seed 002 4.8).
class Grouping {
 public:
  /// map_dim is 0-based; cpu_factors has one entry per dimension, m_i = 1 at map_dim.
  Grouping(GroupingKind kind, int map_dim, Index cpu_factors);

  [[nodiscard]] GroupingKind kind() const noexcept { return kind_; }
  [[nodiscard]] const RationalMatrix& h() const noexcept { return h_; }
  [[nodiscard]] const RationalMatrix& p() const noexcept { return p_; }
  /// floor(H^G j^S) for a tile given relative to the tile space's lower corner.
  [[nodiscard]] Index group_of(const Index& tile) const;

 private:
  GroupingKind kind_;
  int map_dim_;
  Index m_;
  RationalMatrix h_;
  RationalMatrix p_;
};

/// The block-cyclic part of a schedule (docs/adr/0018-block-cyclic-rows.md): along a mesh
/// dimension k with cyclic factor c_k > 1, tile coordinate j_k = y P_k + v (P_k = p_k m_k rows
/// per cycle, cycle y) runs as the block schedule's tile v of a virtual mesh of c_k p_k nodes,
/// delayed by y (L_k - f_k(P_k)) steps, f_k(x) the block schedule's time of x e_k. L_k (the
/// cycle stride) is the least that keeps one CPU's rows of different cycles at different steps
/// (mixed radix over the cyclic dimensions, the last innermost) and >= f_k(P_k) (the wrap from
/// a cycle's last node to the next cycle's first needs the block schedule's node-to-node gap).
struct Cycles {
  Index period;  ///< P_k per dimension (0: no cycling along it, the mapping dimension included)
  Index stride;  ///< L_k per dimension (0 where period is 0)
  [[nodiscard]] bool any() const noexcept {
    for (auto p : period) {
      if (p != 0) return true;
    }
    return false;
  }
};

/// A linear schedule of the group space: tile j^S runs at time t = Pi^G floor(H^G j^S).
/// Coefficients of Pi^G, per group coordinate (k = node coordinates, i = mapping coordinate):
///   overlap + hyperplane: pi_k = 1, pi_i = 1 (seed 002 Theorem 2; seed 000 P'(g) for m = 1)
///   blocking + hyperplane: pi_k = 0, pi_i = 1 (t = sum j^S: Hodzic-Shang Pi = (1..1) on tiles)
///   overlap + vertical:    pi_k = 2, pi_i = 1 (UET-UCT Pi = (2..2,1,2..2) on node tiles)
///   blocking + vertical:   pi_k = 1, pi_i = 1
class Schedule {
 public:
  Schedule(ScheduleKind kind, Grouping grouping, int map_dim);
  /// The block-cyclic schedule of `factors` (c_k per dimension, 1 at the mapping one) over a mesh
  /// `mesh` (p_k per dimension, 1 at the mapping one) with `map_tiles` tiles along the mapping
  /// dimension; factors of 1 everywhere give the block schedule.
  Schedule(ScheduleKind kind, Grouping grouping, int map_dim, const Index& mesh,
           const Index& factors, std::int64_t map_tiles);

  [[nodiscard]] ScheduleKind kind() const noexcept { return kind_; }
  [[nodiscard]] const Grouping& grouping() const noexcept { return grouping_; }
  /// Pi^G, one coefficient per group coordinate.
  [[nodiscard]] const Index& vector() const noexcept { return pi_; }
  /// The time step of a tile (relative to the tile space's lower corner); >= 0.
  [[nodiscard]] std::int64_t time_of(const Index& tile) const;
  /// The block-cyclic periods and strides (no dimension cycles for a block schedule).
  [[nodiscard]] const Cycles& cycles() const noexcept { return cycles_; }

 private:
  [[nodiscard]] std::int64_t block_time_of(const Index& tile) const;
  ScheduleKind kind_;
  Grouping grouping_;
  Index pi_;
  Cycles cycles_;
};

}  // namespace tp::plan
