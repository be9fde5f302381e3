// What every rank pipeline shares (docs/adr/0001-one-rank-pipeline.md): the options and the
// outcome, the per-thread record of phases, counters, exposed time and trace spans, the one error
// boundary that names rank and tile, the subtile cut of vertical grouping, and the run's
// prologue (checks, report) and epilogue (sums into the report).
#pragma once

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/face_transport.hpp>
#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/pipeline_tasks.hpp>
#include <tilepipe/exec/run_report.hpp>
#include <tilepipe/exec/step_team.hpp>
#include <tilepipe/exec/trace.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace tp::exec {

/// Fills `row` (whole elements of the kernel's value_type) with the initial values of the row of
/// points that starts at `first` (1-based, one index per dimension) and runs along the last
/// dimension; or fails (the run stops with that error).
using InitialRows = std::function<Status(std::span<const Index> first, std::span<std::byte> row)>;

/// How a rank runs its share of a plan.
struct PipelineOptions {
  /// Subtiles per tile for vertical grouping (seed 002 formula (7)); 0 = the model's N
  /// (model::best_subtiles) from alpha and t_sync_in measured on this rank before the run.
  int subtiles = 0;
  /// One thread does all the rank's communication and computes a smaller share of the tiles
  /// (seed 002 section 5.4; pipeline_comm_thread.hpp). Hyperplane grouping only.
  bool comm_thread = false;
  /// With comm_thread: the communication thread's share in [0, 1] instead of the measured one
  /// (tests, experiments); negative = measure.
  double comm_thread_share = -1;
  /// How resident faces reach a neighbour rank (direct: one copy straight into its slab).
  FaceMode faces = FaceMode::automatic;
  /// Resident kernels: keep the values the rank computed (RankOutcome::values).
  bool keep_values = false;
  /// Resident kernels: the initial values of the points the rank computes, called once per row
  /// of its box on the rank's calling thread before the first sweep; empty: zeros (the slab's
  /// fill). The halo below the space keeps the kernel's boundary values.
  InitialRows initial_rows;
  /// Resident kernels: run the whole sweep this many times over the same slabs, set up once
  /// (the kernel's after_sweep, if it has one, runs between sweeps; pipeline.hpp).
  int sweeps = 1;
  /// Record spans for a Chrome trace.
  bool trace = false;
  /// Time zero of the trace (the same on every rank of a host).
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
};

/// What one rank produced: its share of the result, its report and (if traced) its spans.
template <class R>
struct RankOutcome {
  R result{};
  RankReport report;
  std::vector<Span> spans;
  /// With PipelineOptions::keep_values: the boxes of the points this rank computed (1-based,
  /// half-open, D bounds per box one box after another: one box for a block plan, one per cycle
  /// for a block-cyclic one) and their values, box after box, each in row-major order, as bytes.
  std::vector<Index> values_lo, values_hi;
  std::vector<std::byte> values;
};

namespace detail {

using Clock = std::chrono::steady_clock;

inline double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// Carries an Error out of a worker thread to the rank's error boundary (run_guarded).
struct PipelineError : std::runtime_error {
  explicit PipelineError(Error e) : std::runtime_error(e.message), error(std::move(e)) {}
  Error error;
};

template <class T>
T must(Expected<T> e) {
  if (!e) throw PipelineError(e.error());
  return std::move(*e);
}
inline void must(Status s) {
  if (!s) throw PipelineError(s.error());
}

/// What one thread of a rank did during a run. Every thread writes its own record on every tile:
/// records are cache-line aligned so that neighbours in a vector never share a line. The trace is
/// an observer: with a Tracer, every accounted span is also recorded.
struct alignas(64) ThreadRecord {
  PhaseTimes phases;
  std::int64_t sent = 0;                      ///< faces sent to other ranks
  std::int64_t sent_bytes = 0;                ///< their payload bytes
  std::int64_t received = 0;                  ///< faces received from other ranks
  double exposed_s = 0;                       ///< communication the thread waited for (RankReport)
  Clock::time_point last_end = Clock::now();  ///< end of the thread's last sub-step
  Tracer* tracer = nullptr;
  int thread = 0;

  /// The phase a span kind adds to.
  double& phase(SpanKind kind) noexcept {
    switch (kind) {
      case SpanKind::compute:
        return phases.compute_s;
      case SpanKind::send_start:
        return phases.send_start_s;
      case SpanKind::wait:
        return phases.wait_s;
      case SpanKind::sync:
        break;
    }
    return phases.sync_s;
  }
  /// Sends [a, b) to the trace only.
  void trace(SpanKind kind, std::int64_t step, Clock::time_point a, Clock::time_point b) {
    if (tracer != nullptr) tracer->record(thread, kind, step, a, b);
  }
  /// Adds [a, b) to the phase of `kind` and to the trace.
  void account(SpanKind kind, std::int64_t step, Clock::time_point a, Clock::time_point b) {
    phase(kind) += seconds(b - a);
    trace(kind, step, a, b);
  }
  /// A wait for communication that ended now: at most `cap` of it counts as exposed.
  void exposed(Clock::time_point since, double cap) {
    exposed_s += std::min(seconds(Clock::now() - since), cap);
  }
  /// Start of a sub-step: the barrier since the last one was sync time.
  void begin(Index sub, std::int64_t step) {
    const auto now = Clock::now();
    phases.sync_s += seconds(now - last_end);
    if (sub > 0) trace(SpanKind::sync, step, last_end, now);
  }
  void end() { last_end = Clock::now(); }
};

/// The per-thread records of one rank's run and its tracer.
class ThreadRecords {
 public:
  ThreadRecords(int threads, const PipelineOptions& options)
      : tracer_(options.trace ? Tracer(threads, options.epoch) : Tracer()),
        records_(static_cast<std::size_t>(threads)) {
    for (int t = 0; t < threads; ++t) {
      records_[static_cast<std::size_t>(t)].thread = t;
      if (tracer_.enabled()) records_[static_cast<std::size_t>(t)].tracer = &tracer_;
    }
  }
  ThreadRecords(const ThreadRecords&) = delete;
  ThreadRecords& operator=(const ThreadRecords&) = delete;

  ThreadRecord& operator[](int t) { return records_[static_cast<std::size_t>(t)]; }
  /// Marks every thread's start (just before the first sub-step); the run's start is the first
  /// call's (later sweeps of the same run call it again).
  void start() {
    const auto now = Clock::now();
    if (!started_) start_ = now;
    started_ = true;
    for (auto& r : records_) r.last_end = now;
  }
  /// The epilogue: wall time since start(), the threads' sums and the spans into `outcome`.
  template <class R>
  void finish(RankOutcome<R>& outcome) const {
    RankReport& report = outcome.report;
    report.wall_s = seconds(Clock::now() - start_);
    for (const auto& r : records_) {
      report.phases += r.phases;
      report.messages_sent += r.sent;
      report.bytes_sent += r.sent_bytes;
      report.messages_received += r.received;
      report.exposed_comm_s += r.exposed_s;
    }
    if (tracer_.enabled()) outcome.spans = tracer_.spans();
  }

 private:
  Tracer tracer_;
  std::vector<ThreadRecord> records_;
  Clock::time_point start_ = Clock::now();
  bool started_ = false;
};

/// The rank's one error boundary: runs body(thread, sub-step) on `threads` threads (run_steps);
/// an Error or exception in any thread stops every thread and comes back naming this rank (and
/// the tile, when kernel_call raised it).
template <class Body>
Status run_guarded(int rank, int threads, Index substeps, TeamWait wait, Body&& body) {
  try {
    run_steps(threads, substeps, std::forward<Body>(body), wait);
  } catch (const PipelineError& e) {
    return Unexpected{e.error.on_rank(rank)};
  } catch (const std::system_error& e) {  // a thread that could not start (run_steps)
    return fail_at(rank, Errc::system, e.what());
  } catch (const std::exception& e) {
    return fail_at(rank, Errc::internal, e.what());
  }
  return {};
}

/// Calls `fn` (a kernel call on `box`); an exception becomes an error naming the tile.
template <int D, class Fn>
decltype(auto) kernel_call(const Box<D>& box, Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    Error error(Errc::internal, std::string("kernel failed: ") + e.what());
    for (int d = 0; d < D; ++d) error.tile.push_back(box.lo[d]);
    throw PipelineError(std::move(error));
  }
}

/// Subtile s of n of `box`: the box cut into n parts along dimension `dim` (vertical grouping).
template <int D>
Box<D> subtile(const Box<D>& box, int dim, Index s, Index n) {
  Box<D> part = box;
  if (n > 1) {
    const Index len = box.extent(dim);
    part.lo[dim] = box.lo[dim] + len * s / n;
    part.hi[dim] = box.lo[dim] + len * (s + 1) / n;
  }
  return part;
}

/// The schedule loop of the resident and frontier pipelines (seed 000 section 4, seed 002
/// sections 4-5): each rank step expands to N + the CPU grid's depth sub-steps (N = 1 and no depth
/// for hyperplane grouping), and CPU t runs subtile q - offset of its tile at sub-step q. Per
/// tile: open(t, task, s, i) before its first subtile (its faces arrive), compute(t, task, s, i,
/// p, part) per subtile p, close(t, task, s, i) after the last (its faces leave). `faces` starts
/// a thread's faces (start(t, rec): overlap at its next step, blocking at once, completing before
/// the next tile) and completes sends (complete(line, rec or null)); s and i index
/// layout.steps[s].tasks[i].
template <int D, class Faces, class Open, class Compute, class Close>
Status run_tiles(int rank, const plan::Plan& plan, const RankLayout<D>& layout, int subtiles,
                 TeamWait wait, Faces& faces, ThreadRecords& records, Open&& open,
                 Compute&& compute, Close&& close) {
  const bool vertical = plan.schedule().grouping().kind() == plan::GroupingKind::vertical;
  const bool overlap = plan.schedule().kind() == plan::ScheduleKind::overlap;
  const Index per_step = subtiles + (vertical ? layout.max_cpu_offset : 0);
  const Index substeps = static_cast<Index>(layout.steps.size()) * per_step;
  const auto start = [&](int t, std::int64_t time) {
    const auto a = Clock::now();
    if (faces.start(t, records[t])) records[t].account(SpanKind::send_start, time, a, Clock::now());
  };
  records.start();
  return run_guarded(rank, static_cast<int>(plan.cpus()), substeps, wait, [&](int t, Index sub) {
    ThreadRecord& rec = records[t];
    const auto s = static_cast<std::size_t>(sub / per_step);
    const Index q = sub % per_step;
    const auto& step = layout.steps[s];
    rec.begin(sub, step.time);
    if (overlap && q == 0) start(t, step.time);  // the faces of its previous tile leave now
    const int i = step.task_of_cpu[static_cast<std::size_t>(t)];
    const Task<D>* task = i >= 0 ? &step.tasks[static_cast<std::size_t>(i)] : nullptr;
    const Index offset = task != nullptr && vertical ? task->cpu_offset : 0;
    if (task != nullptr && q >= offset && q < offset + subtiles) {
      const Index p = q - offset;
      if (p == 0) open(t, *task, s, i);
      compute(t, *task, s, i, p, subtile(task->box, plan.map_dim(), p, subtiles));
      if (p == subtiles - 1) {
        close(t, *task, s, i);
        if (!overlap) {
          start(t, step.time);
          const auto c = Clock::now();
          for (const int l : task->out_line) {
            if (l >= 0) faces.complete(static_cast<std::size_t>(l), &rec);
          }
          rec.account(SpanKind::wait, step.time, c, Clock::now());
        }
      }
    }
    if (sub == substeps - 1) {  // the thread's last faces leave; every send on its lines completes
      start(t, step.time);
      for (std::size_t l = 0; l < layout.send_lines.size(); ++l) {
        if (layout.send_lines[l].cpu == t) faces.complete(l, nullptr);
      }
    }
    rec.end();
  });
}

/// Why a plan cannot run with a kernel of `dims` dimensions on `world`, or success.
Status check_plan_fits(const plan::Plan& plan, const comm::World& world, int dims);

/// N of vertical grouping on this rank: `requested` if > 0, else the model's N
/// (model::best_subtiles: seed 002 (7) with the CPU grid's depth) from a tile's `alpha_s` and
/// the threads' barrier time measured now (waited for as `wait` says, as the run will); clamped
/// to [1, the layout's shortest tile along the mapping dimension]. 1 for hyperplane grouping.
int choose_subtiles(const plan::Plan& plan, int requested, Index depth, Index max_n, double alpha_s,
                    TeamWait wait);

/// choose_subtiles for `layout`, measuring alpha (`alpha_s()`) only when N is to be chosen.
template <int D, class Alpha>
int choose_subtiles(const plan::Plan& plan, int requested, const RankLayout<D>& layout,
                    TeamWait wait, Alpha&& alpha_s) {
  const bool choose =
      requested <= 0 && plan.schedule().grouping().kind() == plan::GroupingKind::vertical;
  return choose_subtiles(plan, requested, layout.max_cpu_offset, layout.min_map_extent,
                         choose ? alpha_s() : 0.0, wait);
}

/// The report's fields every pipeline fills first.
template <class R>
RankOutcome<R> start_outcome(const comm::World& world, int threads) {
  RankOutcome<R> outcome;
  outcome.report.rank = world.rank();
  outcome.report.threads = threads;
  return outcome;
}

/// Adds the tiles and points of `layout` to `report`.
template <int D>
void count_tiles(const RankLayout<D>& layout, RankReport& report) {
  for (const auto& s : layout.steps) {
    for (const auto& task : s.tasks) {
      ++report.tiles;
      report.points += task.box.volume();
    }
  }
}

}  // namespace detail
}  // namespace tp::exec
