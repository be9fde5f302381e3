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

/// A linear schedule of the group space: tile j^S runs at time t = Pi^G floor(H^G j^S).
/// Coefficients of Pi^G, per group coordinate (k = node coordinates, i = mapping coordinate):
///   overlap + hyperplane: pi_k = 1, pi_i = 1 (seed 002 Theorem 2; seed 000 P'(g) for m = 1)
///   blocking + hyperplane: pi_k = 0, pi_i = 1 (t = sum j^S: Hodzic-Shang Pi = (1..1) on tiles)
///   overlap + vertical:    pi_k = 2, pi_i = 1 (UET-UCT Pi = (2..2,1,2..2) on node tiles)
///   blocking + vertical:   pi_k = 1, pi_i = 1
class Schedule {
 public:
  Schedule(ScheduleKind kind, Grouping grouping, int map_dim);

  [[nodiscard]] ScheduleKind kind() const noexcept { return kind_; }
  [[nodiscard]] const Grouping& grouping() const noexcept { return grouping_; }
  /// Pi^G, one coefficient per group coordinate.
  [[nodiscard]] const Index& vector() const noexcept { return pi_; }
  /// The time step of a tile (relative to the tile space's lower corner); >= 0.
  [[nodiscard]] std::int64_t time_of(const Index& tile) const;

 private:
  ScheduleKind kind_;
  Grouping grouping_;
  Index pi_;
};

}  // namespace tp::plan
