// Predicted completion time of a plan: steps(plan) x step time of the seeds' formulas
// (seed 000 (1)-(3), seed 002 (1), (6)-(7), 4.8 and 5.4). Derivation: docs/model.md.
#pragma once

#include <tilepipe/model/machine.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tp::model {

/// What a kernel adds to its plan's pipeline (docs/model.md, "Repeated sweeps and kernels'
/// faces"): the defaults describe one sweep of a kernel whose faces are one layer of its tiles.
struct Workload {
  /// The plan's space is swept this many times one after another (a resident kernel's
  /// RunOptions::sweeps; sweep3d: 8 T + 1), each sweep a whole pipeline with its fill and drain,
  /// every rank finishing a sweep before any starts the next. >= 1.
  std::int64_t sweeps = 1;
  /// Of those, the sweeps whose tiles compute nothing worth counting (sweep3d's final sweep only
  /// copies phi): their steps cost the step's communication and the copy below. <= sweeps.
  std::int64_t copy_sweeps = 0;
  /// Bytes a copying sweep's tile streams through memory per point of the plan's space (sweep3d:
  /// the cell it writes phi into and phi, 80 + 8, halved when paired: half the points copy),
  /// charged at the machine's cpu_copy_bytes_per_s as the copying tile's t_comp (0, or a machine
  /// without that field: the copy costs nothing). >= 0.
  std::int64_t copy_bytes_per_point = 0;
  /// Bytes the nodes send between two sweeps, all together (a kernel's after_sweep; 0: none);
  /// each node is charged its share ceil(bytes / nodes), when there are several.
  std::int64_t between_sweep_bytes = 0;
  /// The kernel runs sweeps with the mesh of ranks mirrored (exec's MirrorHook, ADR 0024), so
  /// that its between_sweep_bytes move only for the points whose mirrored rows miss them: the
  /// exchange is charged between_sweep_bytes x mirror_miss(plan) (0 on mirror-symmetric rows).
  bool mirrored = false;
  /// Bytes of one face point; 0: the machine file's element_bytes.
  std::int64_t element_bytes = 0;
  /// Faces carry one more point in every other dimension (the low halo a frontier kernel
  /// passes on for diagonal dependences, as sor's do): prod_{d != k} (w_d + 1) points.
  bool face_halo = false;
};

/// The share of the points that a sweep mirrored along every mesh dimension (ADR 0024) does not
/// run on the rank that runs them unmirrored: 1 - prod_d (sum_c |I_c ∩ R(I_{p_d-1-c})|) / N_d over
/// the mesh dimensions d with p_d > 1, I_c the points of node coordinate c along d, R the
/// reflection of [1, N_d]; 0 for mirror-symmetric rows (and one node), 1 for a block-cyclic plan
/// (not mirrored). An upper bound for sweeps that mirror fewer dimensions.
double mirror_miss(const plan::Plan& plan);

/// Which closed form predicts a plan (docs/model.md, "Two formulas").
enum class Formula {
  /// The seeds' formulas: every one of the P steps at full length, each hand-over between nodes
  /// two steps of the overlap schedule (the papers' figures and choices).
  seeds,
  /// The formula that follows the executor: fill and drain at t_comp alone (edge_steps) and,
  /// without the communication thread, each hand-over between nodes as one hop (pipeline_hops;
  /// kernels of several sweeps too, ADR 0034): what a run measures; the CLI's default.
  executed,
};

/// "seeds" or "executed".
std::string_view to_string(Formula formula);

/// Model options that the plan does not carry.
struct ModelOptions {
  std::string kernel;         ///< selects the machine's per-kernel compute cost; empty: default
  bool comm_thread = false;   ///< one thread does all communication (seed 002 5.4); overlap +
                              ///< hyperplane only
  std::int64_t subtiles = 0;  ///< vertical grouping: subtiles N per tile, 0 = best (formula (7))
  /// Pipeline fill and drain: the first step (nothing computed yet, overlap only) and the last
  /// step (nothing left to send) move no face and cost t_comp alone. Off: the seeds' formulas,
  /// every one of the P steps at full length (docs/model.md, "Fill and drain").
  bool edge_steps = false;
  /// Overlap schedule: a face's hand-over from node to node costs the pipeline's hop (t_start +
  /// t_comm + t_comp: the sender starts it, it flies, the receiver computes its tile) instead of
  /// the schedule's two steps, as the executor and the simulator run it (docs/model.md, "The
  /// hop"). Always on for a block-cyclic plan (every cycle repeats the fill) and for every
  /// candidate of an automatic cyclic factor; off: the seeds' formulas. Not with comm_thread.
  bool pipeline_hops = false;
  /// Formula::executed turns edge_steps and pipeline_hops on.
  Formula formula = Formula::seeds;
  Workload workload{};  ///< sweeps, the kernel's faces
};

/// The options' fill and drain and hops, with their formula applied: edge_steps and
/// pipeline_hops as predict() counts them.
bool counts_edge_steps(const ModelOptions& options);
bool counts_hops(const ModelOptions& options);

/// One time step's parts and its length. All durations are per step.
struct StepTime {
  std::int64_t tile_points = 0;  ///< g = points of a full tile
  Seconds alpha{0};              ///< one full tile on one CPU: g t_comp1(g)
  /// The step's computation: alpha, the slowest of the node's tiles (hyperplane grouping on
  /// several CPUs with a machine's tile_spread), or beta for vertical grouping.
  Seconds t_comp{0};
  std::int64_t subtiles = 0;    ///< N of formula (6) for vertical grouping, 0 otherwise
  std::int64_t messages = 0;    ///< messages a node sends per step (one per successor node)
  std::int64_t face_bytes = 0;  ///< bytes a node sends per step
  Seconds t_start{0};           ///< CPU time starting the step's sends
  /// Transfer of the step's messages (latency + bytes/bandwidth; with pipeline hops the link's
  /// occupancy bytes/bandwidth, the latency being paid once per hop).
  Seconds t_comm{0};
  Seconds t_sync{0};  ///< synchronization with the neighbours
  /// The part of t_comm that is a CPU's copy (face bytes / Machine::cpu_copy_bytes_per_s; 0
  /// where a DMA engine moves the faces): the overlapping schedule cannot hide it.
  Seconds t_copy{0};
  Seconds comm_thread_comp{0};  ///< comm_thread: the communication thread's share of the work
  Seconds hop{0};   ///< overlap, ModelOptions::pipeline_hops: a face's hand-over between nodes
  Seconds step{0};  ///< the step's length
  bool compute_bound = true;  ///< the computation, not the transfer, sets the step (overlap)
};

/// A plan's predicted completion time.
struct Prediction {
  plan::ScheduleKind schedule = plan::ScheduleKind::overlap;
  plan::GroupingKind grouping = plan::GroupingKind::hyperplane;
  bool comm_thread = false;
  Formula formula = Formula::seeds;  ///< ModelOptions::formula
  std::int64_t steps = 0;            ///< from the plan
  StepTime step;
  Seconds total{0};             ///< sweeps x sweep + (sweeps - 1) x between (one sweep: sweep)
  std::int64_t edge_steps = 0;  ///< k: steps without communication counted at t_comp alone
  /// One sweep: steps x step (edge_steps: (steps - k) x step + k x t_comp; with pipeline hops,
  /// the steps less the schedule's two steps per hand-over between nodes plus one hop each).
  Seconds sweep{0};
  std::int64_t sweeps = 1;       ///< Workload::sweeps
  std::int64_t copy_sweeps = 0;  ///< Workload::copy_sweeps
  /// One copy sweep: the steps at t_comp = the copy (Workload::copy_bytes_per_point), or 0.
  Seconds copy_sweep{0};
  /// Between two sweeps: two barriers of ceil(log2 nodes) rounds of t_sync each and the
  /// kernel's exchange (t_start + f(ceil(between_sweep_bytes / nodes))); mirrored, the refill
  /// of the shared slab's outer halo (sum_d prod_{e != d} of the node's block x element bytes /
  /// cpu_copy_bytes_per_s; ADR 0034); 0 on one node.
  Seconds between{0};
};

/// E[max(X_1, ..., X_m)] of m independent standard normal variables (0 for m = 1, 1/sqrt(pi)
/// for 2, 3/(2 sqrt(pi)) for 3): by quadrature of m x phi(x) Phi(x)^(m-1), within 1e-9.
/// Precondition: m >= 1.
double expected_max_of_normals(std::int64_t m);

/// The step's computation of a node whose m CPUs each compute one tile of alpha and then meet
/// at the node's step barrier (hyperplane grouping, seed 002 4.3): the slowest of the m tiles,
/// alpha (1 + e_m tile_spread) with e_m = expected_max_of_normals(m) (docs/model.md, "The step
/// barrier"); alpha for m = 1 or tile_spread = 0.
Seconds slowest_of_tiles(Seconds alpha, double tile_spread, std::int64_t m);

/// Rounds of a dissemination barrier over `nodes` ranks: ceil(log2 nodes) (0 for one).
std::int64_t barrier_rounds(std::int64_t nodes);

/// beta = alpha (N + D)/N + (N + D - 1) t_sync_in: m CPUs in a grid of depth D = sum (m_k - 1)
/// computing their vertically grouped tiles as N skewed subtiles each (seed 002 (6), D = 1).
/// Preconditions: n >= 1, depth >= 0.
Seconds vertical_beta(Seconds alpha, Seconds t_sync_in, std::int64_t n, std::int64_t depth);

/// The N in [1, max_n] minimizing vertical_beta: floor or ceil of sqrt(D alpha / t_sync_in)
/// (seed 002 (7)), whichever gives the smaller beta (ties: the smaller N); max_n when
/// t_sync_in = 0; 1 when depth = 0.
std::int64_t best_subtiles(Seconds alpha, Seconds t_sync_in, std::int64_t depth,
                           std::int64_t max_n);

/// Bytes node sends per step to each successor node, per mesh dimension (0 where it sends
/// nothing): (m / m_k) prod_{d != k} w_d x (the deepest dependence along k) x element bytes,
/// for every non-mapping k with p_k > 1 (face_halo: prod_{d != k} (w_d + 1)). Rectangular
/// tilings only; errors past 2^63 bytes.
Expected<std::vector<std::int64_t>> face_bytes_per_neighbour(const plan::Plan& plan,
                                                             std::int64_t element_bytes,
                                                             bool face_halo = false);

/// The predicted time of a plan on a machine. Errors: a non-rectangular tiling, comm_thread
/// outside overlap + hyperplane, subtiles outside [1, tile height], a workload with sweeps < 1,
/// copy_sweeps outside [0, sweeps] or negative bytes.
Expected<Prediction> predict(const plan::Plan& plan, const Machine& machine,
                             const ModelOptions& options);

/// "overlap + hyperplane", with " + comm thread" when set.
std::string scheme_name(plan::ScheduleKind schedule, plan::GroupingKind grouping, bool comm_thread);

}  // namespace tp::model
