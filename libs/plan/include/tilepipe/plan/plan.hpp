// A complete execution plan: tiling, mesh of nodes, CPU grid, mapping and schedule, chosen so
// that the number of time steps is minimal (seed 002 4.5-4.7; seed 000 formula (2)).
#pragma once

#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/plan/schedule.hpp>
#include <tilepipe/plan/tiling.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace tp::plan {

/// Most nodes and CPUs per node a plan may use (bounds the exhaustive factorization search).
inline constexpr std::int64_t max_nodes = 65536;
inline constexpr std::int64_t max_cpus = 1024;
/// Largest cyclic factor per dimension.
inline constexpr std::int64_t max_cyclic = 65536;

/// How the tile is given: the height along the mapping dimension only (the other widths follow
/// from the extents, the mesh and the CPU grid: one row of tiles per CPU), all rectangular
/// extents, or a general tiling matrix H.
enum class TileSpecKind { height, extents, matrix };

/// What the user asks for; Plan::make validates everything.
struct PlanRequest {
  Index size;                            ///< N_d per dimension
  std::optional<DependenceMatrix> deps;  ///< D (required)
  TileSpecKind tile_kind = TileSpecKind::height;
  std::int64_t tile_height = 0;  ///< z, for TileSpecKind::height
  Index tile_extents;            ///< w_d, for TileSpecKind::extents
  RationalMatrix h;              ///< H, for TileSpecKind::matrix
  std::int64_t nodes = 1;        ///< P
  std::int64_t cpus = 1;         ///< m, CPUs (threads) per node
  std::optional<Index> mesh;     ///< node mesh, one factor per non-mapping dimension
  int map_dim = 0;               ///< 1-based mapping dimension, 0 = auto (most tiles)
  /// 0-based dimension along which the kernel's array is contiguous in memory (a resident
  /// kernel's last), if any: a tie of the automatic mapping dimension goes to another dimension,
  /// so that a tile's rows are the rank's whole width along it rather than tile-height pieces
  /// strided by that width (docs/adr/0032).
  std::optional<int> contiguous_dim;
  ScheduleKind schedule = ScheduleKind::overlap;
  GroupingKind grouping = GroupingKind::hyperplane;
  /// Block-cyclic factors c_k (docs/adr/0018-block-cyclic-rows.md): empty for the block mapping,
  /// one factor for every non-mapping dimension, or one per non-mapping dimension. Each CPU then
  /// owns up to c_k rows along k, u_k <= c_k p_k m_k, and the last cycle is never empty.
  Index cyclic;
};

/// A validated plan. Tile coordinates are relative to the tile space's lower corner (0 for
/// rectangular tilings). Node and CPU coordinates have one entry per non-mapping dimension, in
/// dimension order.
class Plan {
 public:
  static Expected<Plan> make(const PlanRequest& request);

  [[nodiscard]] const IterationSpace& space() const noexcept { return space_; }
  /// The dependences planned: the request's, less those no two points of the space realize
  /// (|d_k| >= N_k in some dimension; at least one is kept).
  [[nodiscard]] const DependenceMatrix& deps() const noexcept { return deps_; }
  [[nodiscard]] const Tiling& tiling() const noexcept { return tiling_; }
  [[nodiscard]] const TileSpace& tile_space() const noexcept { return tile_space_; }
  /// D^S: tile dependences (entries 0 or 1).
  [[nodiscard]] const std::vector<Index>& tile_deps() const noexcept { return tile_deps_; }
  /// 0-based mapping dimension i: all tiles along it belong to one CPU of one node.
  [[nodiscard]] int map_dim() const noexcept { return map_dim_; }
  [[nodiscard]] std::int64_t nodes() const noexcept { return nodes_; }
  [[nodiscard]] std::int64_t cpus() const noexcept { return cpus_; }
  [[nodiscard]] const Index& mesh() const noexcept { return mesh_; }
  [[nodiscard]] const Index& cpu_grid() const noexcept { return cpu_grid_; }
  [[nodiscard]] const Schedule& schedule() const noexcept { return schedule_; }
  /// Number of distinct time steps, max t - min t + 1 over all tiles.
  [[nodiscard]] std::int64_t steps() const noexcept { return steps_; }
  /// Points a node sends per step to its successors (sum over mesh dimensions of extent > 1).
  [[nodiscard]] std::int64_t face_points() const noexcept { return face_points_; }
  /// Cyclic factors c_k, one per non-mapping dimension (all 1: the block mapping).
  [[nodiscard]] const Index& cyclic() const noexcept { return cyclic_; }
  /// True when some c_k > 1.
  [[nodiscard]] bool is_cyclic() const noexcept {
    for (auto c : cyclic_) {
      if (c > 1) return true;
    }
    return false;
  }
  /// Nodes without a row of tiles (fewer rows u_k than p_k m_k): they run no tile.
  [[nodiscard]] std::int64_t idle_nodes() const noexcept { return idle_nodes_; }
  /// CPUs without a row of tiles, over all nodes (those of idle nodes included):
  /// P m - prod_k u_k.
  [[nodiscard]] std::int64_t idle_cpus() const noexcept { return idle_cpus_; }

  /// The node (mesh coordinates) that runs a tile: floor((j_k^S mod p_k m_k) / m_k), k != i
  /// (seed 002 4.5-4.6; the mod is the block-cyclic mapping, a no-op for c_k = 1).
  [[nodiscard]] Index node_of(const Index& tile) const;
  /// The CPU (grid coordinates) that runs a tile: j_k^S mod m_k, k != i.
  [[nodiscard]] Index cpu_of(const Index& tile) const;
  /// Row-major rank of mesh coordinates, 0 <= rank < nodes().
  [[nodiscard]] std::int64_t rank_of(const Index& node) const;
  /// Mesh coordinates of a rank.
  [[nodiscard]] Index node_coords(std::int64_t rank) const;
  /// Row-major index of CPU grid coordinates, 0 <= index < cpus().
  [[nodiscard]] std::int64_t cpu_index(const Index& cpu) const;
  /// Time step of a tile, 0-based.
  [[nodiscard]] std::int64_t time_of(const Index& tile) const { return schedule_.time_of(tile); }
  /// Group coordinates floor(H^G j^S).
  [[nodiscard]] Index group_of(const Index& tile) const {
    return schedule_.grouping().group_of(tile);
  }
  /// The tiles a rank runs, sorted by (time, cpu index); empty for an idle node.
  [[nodiscard]] std::vector<Index> tiles_of(std::int64_t rank) const;

 private:
  Plan(IterationSpace space, DependenceMatrix deps, Tiling tiling, TileSpace ts, Schedule s)
      : space_(std::move(space)),
        deps_(std::move(deps)),
        tiling_(std::move(tiling)),
        tile_space_(std::move(ts)),
        schedule_(std::move(s)) {}

  IterationSpace space_;
  DependenceMatrix deps_;
  Tiling tiling_;
  TileSpace tile_space_;
  Schedule schedule_;
  std::vector<Index> tile_deps_;
  int map_dim_ = 0;
  std::int64_t nodes_ = 1;
  std::int64_t cpus_ = 1;
  Index mesh_;
  Index cpu_grid_;
  Index cyclic_;
  std::int64_t steps_ = 0;
  std::int64_t face_points_ = 0;
  std::int64_t idle_nodes_ = 0;
  std::int64_t idle_cpus_ = 0;
};

/// Number of time steps of a schedule over a tile space: max - min + 1 of time_of. For a box the
/// extremes are at the lower and upper corners because t is non-decreasing in every tile
/// coordinate (Pi^G >= 0, H^G >= 0); otherwise every tile is visited.
std::int64_t count_steps(const Schedule& schedule, const TileSpace& tiles);

/// All ordered factorizations of `value` into `parts` factors >= 1, lexicographic order.
std::vector<Index> ordered_factorizations(std::int64_t value, int parts);

}  // namespace tp::plan
