// sweep3d: discrete-ordinates transport sweeps from the 8 corners of a grid of cells (issue 13,
// exactly), run as a resident kernel: one sweep of the executor per octant over the reflected
// grid, or per pair of octants o and o | 4 over I x J x 2K (ADR 0021), the octant sums and the
// source iterations carried between sweeps by after_sweep.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/support/expected.hpp>

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tp::comm {
class World;
}

namespace tp::kernels {

/// The parameters of sweep3d as `--param name=value` gives them.
inline constexpr std::array<exec::ParamSpec, 7> sweep3d_params{{
    {"sigma_t", exec::ParamType::real, "1.0", "total cross-section S (> 0)"},
    {"source", exec::ParamType::real, "1.0", "uniform source Q (>= 0)"},
    {"angles", exec::ParamType::integer, "1", "directions per octant: 1 (S2) or 3 (S4)"},
    {"iterations", exec::ParamType::integer, "1", "source iterations T (>= 1)"},
    {"c", exec::ParamType::real, "0.0",
     "scattering ratio C (>= 0): src = Q + C * phi of the previous iteration"},
    {"paired", exec::ParamType::integer, "1",
     "1: octants o and o | 4 as one sweep over I x J x 2K (octant o | 4 starts while o "
     "drains); 0: the 8 octants one after another"},
    {"mirror_from", exec::ParamType::integer, "1",
     "ranks play their mirror's tiles in reflected octants (no exchange between sweeps; the "
     "roles share one slab) when iterations >= this; 0: never"},
}};

/// sweep3d's parameters (defaults as declared in sweep3d_params).
struct Sweep3dParams {
  double sigma_t = 1.0;
  double source = 1.0;
  std::int64_t angles = 1;
  std::int64_t iterations = 1;
  double c = 0.0;
  /// 1: octants o and o | 4 swept together (ADR 0021); 0: one octant per sweep.
  std::int64_t paired = 1;
  /// Mirrored rank roles (ADR 0024) from this many iterations on; 0: never. Since the roles
  /// share one slab (ADR 0026) they pay from the first iteration (docs/benchmarks.md).
  std::int64_t mirror_from = 1;
  /// Whether the sweeps mirror the mesh (mirror_from reached).
  [[nodiscard]] bool mirrored() const noexcept {
    return mirror_from > 0 && iterations >= mirror_from;
  }
};

/// The parameters from checked `--param` values (declared by sweep3d_params).
Sweep3dParams sweep3d_params_of(const exec::ParamValues& values);

/// The most source iterations: the executor runs 8 T + 1 sweeps (4 T + 1 paired), counted in an
/// int.
inline constexpr std::int64_t sweep3d_max_iterations = 268435455;

/// An octant's directions: `count` of them, direction m's cosines (mu_x, mu_y, mu_z) = mu[m]
/// along (i, j, k), each weighted `weight`.
struct Sweep3dQuadrature {
  int count = 0;
  std::array<std::array<double, 3>, 3> mu{};
  double weight = 0;
};

/// S2 (angles 1): 1.0 / sqrt(3.0), weight 1/8; S4 (angles 3): (mu1, mu1, mu2), (mu1, mu2, mu1),
/// (mu2, mu1, mu1), weight 1/24 (precondition: angles is 1 or 3).
Sweep3dQuadrature sweep3d_quadrature(std::int64_t angles);

/// The element of the executor's array: the cell's outgoing angular fluxes per direction m of
/// the octant being swept, flux[3 m + d] along d = x, y, z, and `value`: p_o of the octant being
/// swept, and phi of the last iteration after the final sweep.
struct Sweep3dCell {
  std::array<double, 9> flux;
  double value;
};

/// The checksum term of cell (i, j, k): splitmix64(lin * golden_gamma + bits(phi)), lin the
/// row-major index i * J * K + j * K + k.
inline std::uint64_t sweep3d_point_hash(std::uint64_t lin, double phi) noexcept {
  return splitmix64(lin * golden_gamma + std::bit_cast<std::uint64_t>(phi));
}

/// One octant per sweep (paired = 0): the executor's space is the grid, I x J x K points (1-based:
/// point x is cell x - 1 in octant 0); sweep s < 8 T is octant s mod 8 of source iteration s / 8
/// (0-based), whose point x is the cell reflected along every dimension whose octant bit is set,
/// so that every octant's dependences are e_1, e_2, e_3. Paired (ADR 0021): the space is
/// I x J x 2K; sweep s < 4 T sweeps octant q = s mod 4 over the first half (k <= K) and octant
/// q | 4 over the second (point x there is point x - K e_3 of octant q | 4), whose first cells
/// along k read vacuum: the dependence across k = K only orders a column's second octant after
/// its first. A cell's home is the rank that computes it in octant 0 (paired: its point in the
/// first half); after each sweep, after_sweep sends every p_o to its cell's home, which adds it
/// in octant order (paired: p_4..p_6 are kept until p_3 is added, then added in order with
/// p_7), and from the second iteration on brings every rank the sources of the cells it sweeps
/// next; the final sweep writes phi into `value` where each cell is at home. The result is the
/// checksum of phi (the first half's points). A Sweep3d object runs once (its state follows the
/// sweeps of one run: make another for another run); run it over space() with
/// RunOptions::sweeps = sweeps().
class Sweep3d {
 public:
  static constexpr int dims = 3;
  static constexpr exec::Storage storage = exec::Storage::resident;
  using value_type = Sweep3dCell;
  using result_type = std::uint64_t;
  /// The output file holds phi (float64), not the whole cell.
  using output_type = double;
  static constexpr std::array<exec::Dependence<3>, 3> deps{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};

  /// Checks extents >= 1, angles 1 or 3, 1 <= iterations <= sweep3d_max_iterations, sigma_t > 0,
  /// source >= 0, c >= 0 (all finite), paired 0 or 1 and that the arrays' bytes fit in 64 bits.
  static Expected<Sweep3d> make(const Point<3>& n, const Sweep3dParams& params);

  /// Sums two checksums modulo 2^64.
  static result_type combine(result_type a, result_type b) noexcept { return a + b; }
  /// What the output file holds of a cell.
  static double output_value(const Sweep3dCell& cell) noexcept { return cell.value; }

  [[nodiscard]] const Point<3>& size() const noexcept { return n_; }
  [[nodiscard]] const Sweep3dParams& params() const noexcept { return p_; }
  /// The executor's space: I x J x K, paired I x J x 2K.
  [[nodiscard]] Point<3> space() const noexcept { return {n_[0], n_[1], halves() * n_[2]}; }
  /// The output file's extents (the grid, I x J x K): the first half of a paired space.
  [[nodiscard]] std::vector<Index> output_extents() const { return {n_[0], n_[1], n_[2]}; }
  /// The executor's sweeps per source iteration: 8, paired 4.
  [[nodiscard]] int sweeps_per_iteration() const noexcept { return p_.paired != 0 ? 4 : 8; }
  /// The executor's sweeps: sweeps_per_iteration() per iteration and the final one.
  [[nodiscard]] int sweeps() const noexcept {
    return static_cast<int>(sweeps_per_iteration() * p_.iterations + 1);
  }
  /// Bytes a run needs beyond the executor's slabs, over all its ranks, per cell: one octant
  /// per sweep: three doubles (the sums, the previous iteration's phi, the sources received)
  /// and the values in transit (one more); paired: the sums, phi, p_4..p_7, two sources (two
  /// points per cell) and two in transit (ten).
  [[nodiscard]] double state_bytes() const noexcept;

  /// Vacuum: every flux 0.0.
  [[nodiscard]] Sweep3dCell boundary_value(const Point<3>&) const noexcept { return {}; }
  void compute_tile(const Box<3>& box, const exec::SlabView<Sweep3dCell, 3>& slab) const noexcept;
  [[nodiscard]] result_type tile_result(
      const Box<3>& box, const exec::SlabView<const Sweep3dCell, 3>& slab) const noexcept;
  /// Before the first sweep (every rank, one thread): every rank's boxes, so that from the first
  /// sweep on the sweep itself adds the p_o of the cells at home into their sums.
  Status before_sweeps(const exec::RankSlab<Sweep3dCell, 3>& slab, std::span<const Box<3>> owned,
                       comm::World& world) const;
  /// What before_sweeps does on one rank whose points are `space` (the executor's space, from 1;
  /// no World): the sweeps then add every p_o into the home sums themselves, as on one rank. For
  /// the tile-cost probe, whose tiles should do what a run's do. The tiles then run sweep
  /// `sweep` (its octant: sweep 4 of an unpaired kernel runs towards decreasing k, as half of a
  /// run's points do); 0 <= sweep < 8 T.
  void sweep_alone(const Box<3>& space, int sweep = 0) const;
  /// The mesh dimensions sweep s mirrors (exec's MirrorHook, ADR 0024): its octant's reflected
  /// dimensions (paired: i and j only), none in the final sweep. With a mirror-symmetric
  /// partition every rank then sweeps its home cells and nothing changes rank between sweeps.
  [[nodiscard]] unsigned mirror(int sweep) const noexcept;
  /// Which rank each rank plays in a sweep mirrored along `mask` (before before_sweeps).
  void mirror_roles(unsigned mask, std::span<const int> plays) const;
  /// The p_o and source values this rank (of the run this object ran) sent to other ranks
  /// between sweeps: none where the mirrored roles keep every cell at home (ADR 0024).
  [[nodiscard]] std::int64_t values_moved() const noexcept { return state_->moved; }
  /// Between sweeps (every rank, one thread): the finished octant's p_o to the cells' homes, and
  /// the sources of the next octant's cells from theirs.
  Status after_sweep(int done, const exec::RankSlab<Sweep3dCell, 3>& slab,
                     std::span<const Box<3>> owned, comm::World& world) const;

 private:
  // A rank's part of the run, in executor coordinates (point x is cell x - 1 in octant 0: the
  // rank's "home" cells are its own points). A rank's points are boxes: one for a block plan,
  // one per cycle for a block-cyclic one (ADR 0018); each box of every rank is a "part" with its
  // own home cells (its first half). Vectors over the parts of `mine` (or, for `source`, of
  // `swept`), part after part, each row-major.
  struct State {
    int sweep = 0;  ///< the sweep running (set between sweeps)
    bool learned = false;
    std::vector<Box<3>> parts;  ///< every rank's boxes, rank after rank (learned before sweep 1)
    std::vector<std::size_t> first_part;  ///< rank r's parts: [first_part[r], first_part[r + 1])
    std::vector<Box<3>> mine;             ///< this rank's boxes (its points in sweep 0, unmirrored)
    /// The boxes this rank sweeps in the running sweep: those of the rank it plays (ADR 0024;
    /// mine where the sweep is not mirrored, always for a block-cyclic plan). Box q of them is
    /// paired with box q of mine: the sweep adds the p_o of its points whose cells are at home
    /// in that box's home (and computes their sources from prev).
    std::vector<Box<3>> swept;
    std::vector<Index> swept_at;  ///< per box of swept: its first point in source
    /// Per mirror mask, the rank whose points each rank sweeps (empty: itself; ADR 0024).
    std::array<std::vector<int>, 8> plays;
    std::vector<Box<3>> home;    ///< per box of mine: its home cells' points
    std::vector<Index> home_at;  ///< per box of mine: its first cell in sum, prev and later
    std::vector<double> sum;     ///< phi of the home cells so far (all of it after an iteration)
    std::vector<double> prev;    ///< phi of the home cells in the previous iteration
    /// Paired: p_4..p_7 of the home cells, kept until p_3 is in `sum` (phi's order).
    std::array<std::vector<double>, 4> later;
    /// Paired, per box q of mine: its home cells whose octant 3 and octant 7 points are both in
    /// box q of those the rank sweeps in sweep 3 (octants 3 and 7; all of them with one box and
    /// symmetric or no mirroring). The sweep itself finishes their phi at octant 7's point,
    /// which follows octant 3's in its column (the dependence across k = K), after p_3 is in the
    /// sum.
    std::vector<Box<3>> folded;
    /// Per point of `swept` whose cell is not at home in the paired box of mine (another rank's
    /// part, or another box of this rank's), the source of its cell in the octant swept
    /// (received from that home; the other points take Q + C * prev in the sweep).
    std::vector<double> source;
    std::vector<std::vector<double>> to, from;  ///< the exchange's buffers, per rank
    /// The sweeps add the p_o of the cells at home here into `sum` themselves (set once `mine`
    /// is known: by before_sweeps, or by the first after_sweep where a runner has no such hook).
    bool fused = false;
    std::int64_t moved = 0;  ///< values this rank sent between sweeps so far
  };

  Sweep3d(const Point<3>& n, const Sweep3dParams& p);
  [[nodiscard]] Index halves() const noexcept { return p_.paired != 0 ? 2 : 1; }
  /// The octant that sweep s runs over half h (0: k <= K; 1, paired: k > K).
  [[nodiscard]] int octant_of(int s, Index h) const noexcept {
    return p_.paired != 0 ? s % 4 + 4 * static_cast<int>(h) : s % 8;
  }
  /// The points of b (executor coordinates) in half h, as points of the grid (k - h K).
  [[nodiscard]] Box<3> half_of(const Box<3>& b, Index h) const noexcept;
  /// Box b moved by h K along k (grid points of half h to executor points).
  [[nodiscard]] Box<3> lift(const Box<3>& b, Index h) const noexcept;
  /// The boxes rank r sweeps in sweep `sweep` (those of the rank it plays: ADR 0024).
  [[nodiscard]] std::span<const Box<3>> swept_by(std::size_t r, int sweep) const;
  /// State::swept and swept_at: the boxes rank `me` sweeps in sweep `sweep`.
  void sweep_boxes(std::size_t me, int sweep) const;
  /// Learns every rank's boxes (collective).
  Status learn_boxes(std::span<const Box<3>> owned, comm::World& world) const;
  /// The boxes of every rank (lists[r]: rank r's), this rank `me`: the parts, the homes, the
  /// sums.
  void set_boxes(const std::vector<std::vector<Box<3>>>& lists, std::size_t me) const;
  [[nodiscard]] Index cell_index(const Point<3>& x, int octant) const noexcept;
  [[nodiscard]] Point<3> reflect(const Point<3>& x, int octant) const noexcept;
  [[nodiscard]] Box<3> reflect(const Box<3>& b, int octant) const noexcept;

  Point<3> n_;
  Sweep3dParams p_;
  Sweep3dQuadrature q_;
  std::array<std::array<double, 3>, 3> two_mu_{};  ///< cx, cy, cz per direction
  std::array<double, 3> den_{};                    ///< ((S + cx) + cy) + cz per direction
  double first_source_ = 0;                        ///< Q + C * 0.0
  std::shared_ptr<State> state_;
};

/// phi of the last iteration after the plain loop (issue 13's definition), I x J x K row-major.
std::vector<double> sweep3d_reference(const Point<3>& n, const Sweep3dParams& params);
/// The checksum of a whole phi array: every cell's term, summed mod 2^64.
std::uint64_t sweep3d_checksum(std::span<const double> phi);

}  // namespace tp::kernels
