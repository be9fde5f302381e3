// A discrete-event simulation of the schedule the rank pipeline runs (libs/exec): per rank and
// step its tiles, the face messages to each neighbour rank with their sizes, send starts, links
// with latency, bandwidth and contention (full bisection or a torus), thread synchronization, the
// blocking and overlapping schedules, hyperplane and vertical grouping and the communication
// thread. Driven by a machine file (docs/model.md, "Simulation"; docs/adr/0003-simulator-layer.md).
#pragma once

#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/model/machine.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace tp::sim {

using model::Seconds;

/// Most rank steps (sum over ranks of the steps each runs) one simulation may take: past this the
/// simulation is refused as too large (it would take minutes and gigabytes).
inline constexpr std::int64_t max_rank_steps = 200'000'000;

/// Most rank steps for which the schedule's spans are kept (SimOptions::spans): about 4 spans of
/// 40 bytes each per rank step, and a chart of more is unreadable anyway.
inline constexpr std::int64_t max_span_rank_steps = 100'000;

/// How to simulate.
struct SimOptions {
  model::ModelOptions model;  ///< kernel (compute cost), comm_thread, subtiles: as for predict
  /// Called with the fraction of rank steps simulated (0..1), at most every ~2^16 events and once
  /// with 1 at the end; never from another thread. Empty: no progress reports.
  std::function<void(double)> progress;
  /// Keep each rank's schedule as spans (SimResult::spans), for plans of at most
  /// max_span_rank_steps rank steps.
  bool spans = false;
  /// Build every rank's steps by enumerating its rows of tiles, as for a block-cyclic plan (ADR
  /// 0018), instead of the block mapping's closed form (for tests: both give the same result).
  bool enumerate_rows = false;
};

/// What a rank's CPU does in a span (the busiest thread's view: the simulator does not tell the
/// threads of a step apart). The names of exec's trace spans, so that one chart draws both.
enum class SpanKind { compute, send_start, wait, sync };

/// One span of a rank's simulated schedule.
struct SimSpan {
  std::int64_t rank = 0;
  std::int64_t step = 0;  ///< the rank's own step
  SpanKind kind = SpanKind::compute;
  Seconds begin{0};
  Seconds end{0};
};

/// One rank's stretch of the critical path: consecutive steps of that rank, entered through a
/// face from the previous segment's rank (or at time 0) and left through a face to the next
/// segment's rank (or at the end). Steps are the rank's own, 0 = its first step with tiles.
struct PathSegment {
  std::int64_t rank = 0;
  std::int64_t first_step = 0;  ///< the step whose start the entering face bound (0: the start)
  std::int64_t last_step = 0;   ///< the step whose faces the next segment waited for (or the last)
  Seconds begin{0};             ///< the entering face's arrival (0 for the first segment)
  Seconds end{0};  ///< when the leaving faces were ready to go (the simulated time for the last)
};

/// Where the time of the longest chain of dependences went: its parts add up to the simulated
/// time (each step on the chain contributes what bound it: its own CPU or an arriving face).
struct CriticalPath {
  Seconds compute{0};   ///< tiles (and subtile steps) on the chain
  Seconds overhead{0};  ///< send starts, synchronization (t_sync, t_sync_in) on the chain
  Seconds network{0};   ///< faces in flight on the chain, from ready to arrival (queueing included)
  std::int64_t messages = 0;  ///< face messages (batches) on the chain: rank-to-rank hand-overs
  std::int64_t end_rank = 0;  ///< the rank that finishes last
  /// The ranks and steps on the chain, from time 0 to the end (segments.back().rank = end_rank);
  /// one more than the faces handed from rank to rank on it.
  std::vector<PathSegment> segments;
};

/// One rank's figures.
struct RankResult {
  std::int64_t rank = 0;
  std::int64_t steps = 0;  ///< time steps in which the rank has tiles
  Seconds compute{0};      ///< its busiest thread's tile time (sum over steps)
  Seconds overhead{0};     ///< its busiest thread's send starts and synchronization
  Seconds busy{0};         ///< compute + overhead
  Seconds idle{0};         ///< simulated time - busy: waiting for faces, fill and drain
  Seconds first_start{0};  ///< when its first tile could start
  Seconds finish{0};       ///< its last CPU work done and every send arrived
  std::int64_t messages_sent = 0;
  std::int64_t bytes_sent = 0;
};

/// The simulation's outcome.
struct SimResult {
  /// Completion time of the whole run: with a workload of several sweeps (SimOptions::model's
  /// workload), `sweep` times the computing sweeps, plus the copying sweeps and the exchanges
  /// between sweeps as the model charges them.
  Seconds simulated{0};
  Seconds sweep{0};         ///< one sweep, simulated; ranks, critical path and spans are its
  std::int64_t sweeps = 1;  ///< the workload's sweeps
  std::vector<RankResult> ranks;
  CriticalPath critical_path;
  std::int64_t subtiles = 0;    ///< N of vertical grouping (1 otherwise)
  std::int64_t rank_steps = 0;  ///< sum over ranks of their steps
  std::int64_t events = 0;      ///< events processed
  /// With SimOptions::spans: per rank, in time order, its tiles (compute), send starts, waits for
  /// faces (the CPU free, a face not yet in) and synchronizations. Empty otherwise.
  std::vector<std::vector<SimSpan>> spans;
};

/// Simulates `plan` on `machine`. Errors (bad input): a general tiling matrix, options the model
/// refuses (comm_thread outside overlap + hyperplane, subtiles), a torus with fewer nodes than the
/// plan, a per-node override naming a node the plan does not have, more than max_rank_steps (or
/// max_span_rank_steps with spans).
/// Complexity: O(rank steps x (1 + messages' hops) x log(events in flight)); memory O(ranks +
/// batches in flight + the hand-overs on the live chains).
Expected<SimResult> simulate(const plan::Plan& plan, const model::Machine& machine,
                             const SimOptions& options);

}  // namespace tp::sim
