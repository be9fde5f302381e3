// The rank pipeline with a communication thread (seed 002 section 5.4): thread 0 of each rank
// starts every send, waits for and unpacks every incoming face (one step ahead) and computes a
// smaller row of tiles, sized so that its computation + communication matches the others'
// computation; the compute threads never call the communication library (docs/executor.md).
#pragma once

#include <tilepipe/exec/pipeline.hpp>

namespace tp::exec {

namespace detail {

/// One run of the communication-thread schedule: thread 0 starts every send, waits for and
/// unpacks every incoming face one step ahead and computes a smaller row; threads 1.. compute.
template <ResidentKernel K>
class CommThreadRun {
 public:
  static constexpr int D = K::dims;
  using T = typename K::value_type;

  CommThreadRun(const K& kernel, const RankLayout<D>& layout, ResidentFaces<T, D>& faces,
                ThreadRecords& records, RankReport::CommThread& ct, int threads, int first_cpu)
      : kernel_(kernel),
        layout_(layout),
        faces_(faces),
        records_(records),
        ct_(ct),
        threads_(threads),
        first_cpu_(first_cpu),
        nsteps_(static_cast<Index>(layout.steps.size())),
        done_(static_cast<std::size_t>(threads)) {}

  /// Sub-steps. Overlap: 0 prefetches the faces of step 0; 1 + s runs step s (the communication
  /// thread starts the sends packed at s - 1, computes its tile, then receives the faces of s + 1
  /// while the others still compute); nsteps + 1 sends the last faces. Blocking: 0 prefetches;
  /// 1 + 2s computes step s on every thread; 2 + 2s sends its faces and receives those of s + 1
  /// on the communication thread while the others wait.
  /// An idle rank (no steps) has none.
  [[nodiscard]] Index substeps(bool overlap) const {
    if (nsteps_ == 0) return 0;
    return overlap ? nsteps_ + 2 : 2 * nsteps_ + 1;
  }
  void run(int t, Index sub, bool overlap) {
    if (sub == 0) {
      if (t == 0) {
        comm_step_s_ = 0;
        receive_and_complete(0, layout_.steps[0].time);
        exposed_ += comm_step_s_;  // the pipeline fills: nothing computes meanwhile
      }
    } else if (overlap) {
      const Index s = sub - 1;
      const std::int64_t time = s < nsteps_ ? layout_.steps[static_cast<std::size_t>(s)].time
                                            : layout_.steps.back().time + 1;
      if (t == 0) {
        if (s >= 1) account_exposed(s - 1);
        comm_step_s_ = 0;
        if (s >= 1) start_sends((s - 1) & 1, time);
      }
      if (s < nsteps_) compute_and_pack(t, s);
      done_[static_cast<std::size_t>(t)][static_cast<std::size_t>(s & 1)] = Clock::now();
      if (t == 0) {
        receive_and_complete(s + 1, time);
        comm_end_ = Clock::now();
      }
    } else {
      const Index s = (sub - 1) / 2;
      const std::int64_t time = layout_.steps[static_cast<std::size_t>(s)].time;
      if ((sub - 1) % 2 == 0) {
        compute_and_pack(t, s);
      } else if (t == 0) {
        comm_step_s_ = 0;
        start_sends(s & 1, time);
        receive_and_complete(s + 1, time);
        exposed_ += comm_step_s_;  // nothing computes meanwhile
      }
    }
  }
  /// The communication the compute threads waited for, over the run (RankReport).
  [[nodiscard]] double exposed(bool overlap) {
    if (overlap) account_exposed(nsteps_);
    return exposed_;
  }

 private:
  void comm_span(SpanKind kind, std::int64_t step, Clock::time_point a) {
    const auto b = Clock::now();
    comm_step_s_ += seconds(b - a);
    ct_.comm_s += seconds(b - a);
    records_[0].account(kind, step, a, b);
  }
  // Start queues 2t + p: the faces thread t finished at a step of parity p.
  void start_sends(Index p, std::int64_t step) {
    const auto a = Clock::now();
    bool any = false;
    for (int t = 0; t < threads_; ++t) {
      any = faces_.start(2 * t + static_cast<int>(p), records_[0]) || any;
    }
    if (any) comm_span(SpanKind::send_start, step, a);
  }
  // The remote faces of layout.steps[x] into the slab halo, then every send in flight complete,
  // so that a compute thread may pack into either buffer at the next step.
  void receive_and_complete(Index x, std::int64_t step) {
    const auto a = Clock::now();
    if (x < nsteps_) {
      for (const auto& task : layout_.steps[static_cast<std::size_t>(x)].tasks) {
        for (int k = 0; k < D; ++k) {
          const auto l = task.in_line[static_cast<std::size_t>(k)];
          if (l >= 0) {
            faces_.await(static_cast<std::size_t>(l), task.in_seq[static_cast<std::size_t>(k)],
                         records_[0]);
          }
        }
      }
    }
    for (std::size_t l = 0; l < layout_.send_lines.size(); ++l) faces_.complete(l, nullptr);
    comm_span(SpanKind::wait, step, a);
  }
  // A compute step of thread t: its tile, then its remote faces packed into free buffers.
  void compute_and_pack(int t, Index s) {
    const auto& step = layout_.steps[static_cast<std::size_t>(s)];
    const int cpu = t - first_cpu_;
    if (cpu < 0 || step.task_of_cpu[static_cast<std::size_t>(cpu)] < 0) return;
    const auto& task =
        step.tasks[static_cast<std::size_t>(step.task_of_cpu[static_cast<std::size_t>(cpu)])];
    ThreadRecord& rec = records_[t];
    const auto a = Clock::now();
    if (!task.box.empty()) {
      const SlabView<T, D>& view = faces_.slab().part(static_cast<std::size_t>(task.part));
      kernel_call(task.box, [&] { kernel_.compute_tile(task.box, view); });
    }
    const auto b = Clock::now();
    rec.account(SpanKind::compute, step.time, a, b);
    if (t == 0) ct_.compute_s += seconds(b - a);
    bool any = false;
    for (int k = 0; k < D; ++k) {
      const auto l = task.out_line[static_cast<std::size_t>(k)];
      if (l < 0) continue;
      faces_.emit(static_cast<std::size_t>(l), task.out_seq[static_cast<std::size_t>(k)],
                  2 * t + static_cast<int>(s & 1), rec);
      any = true;
    }
    const auto c = Clock::now();
    rec.phases.send_start_s += seconds(c - b);
    if (any) rec.trace(SpanKind::send_start, step.time, b, c);
  }
  // The part of the communication thread's last step that the compute threads waited for: from
  // the last compute thread's end to its own end, at most its communication in that step.
  void account_exposed(Index s) {
    Clock::time_point last{};
    for (int t = 1; t < threads_; ++t) {
      last = std::max(last, done_[static_cast<std::size_t>(t)][static_cast<std::size_t>(s & 1)]);
    }
    exposed_ += std::min(comm_step_s_, std::max(0.0, seconds(comm_end_ - last)));
  }

  const K& kernel_;
  const RankLayout<D>& layout_;
  ResidentFaces<T, D>& faces_;
  ThreadRecords& records_;
  RankReport::CommThread& ct_;
  int threads_;
  int first_cpu_;
  Index nsteps_;
  // done_[t][p]: when thread t finished its tile and faces at the last step of parity p (read by
  // the communication thread one step later, after the barrier that orders the write before).
  std::vector<std::array<Clock::time_point, 2>> done_;
  double exposed_ = 0;
  Clock::time_point comm_end_{};
  double comm_step_s_ = 0;  // the communication thread's communication in the current step
};

}  // namespace detail

template <ResidentKernel K>
Expected<RankOutcome<typename K::result_type>> run_rank_comm_thread(
    const K& kernel, const plan::Plan& plan, comm::World& world, const PipelineOptions& options) {
  constexpr int D = K::dims;
  using T = typename K::value_type;
  using detail::Clock;
  TP_TRY(detail::check_plan_fits(plan, world, D));
  TP_TRY(check_comm_thread(plan));
  if (has_diagonal_dependence<K>()) {
    // Extended faces of neighbouring rows overlap; unpacking one a step ahead would write halo
    // points that a compute thread reads in the same step.
    return Unexpected{Error::about("comm_thread", Errc::invalid_argument,
                                   "needs dependences along the axes (this kernel has a "
                                   "diagonal one)")};
  }
  auto direct = resolve_direct_faces(options.faces, world, false);
  if (!direct) return Unexpected{direct.error()};
  const bool overlap = plan.schedule().kind() == plan::ScheduleKind::overlap;
  const int cpus = static_cast<int>(plan.cpus());
  // With m = 1 the communication thread is an extra thread that computes nothing; otherwise it is
  // CPU 0 (grid coordinates all 0) and thread c runs CPU c.
  const int first_cpu = cpus == 1 ? 1 : 0;
  const int threads = cpus + first_cpu;
  auto outcome = detail::start_outcome<typename K::result_type>(world, threads);
  const auto set_up = detail::Clock::now();  // RankReport::setup_s
  RankReport& report = outcome.report;
  auto& ct = report.comm_thread;
  ct.on = true;

  auto split =
      measure_comm_thread_split(kernel, plan, world, *direct, options.comm_thread_share, ct);
  if (!split) return Unexpected{split.error()};
  // Start queues 2t + p: the faces thread t finished at a step of parity p. The communication
  // thread starts parity p during the next step while the others fill the other parity; the
  // barrier between steps orders the two. Direct faces are announced by it too (not eager).
  auto rank = detail::open_resident_rank(kernel, plan, world, *direct, *split, 2 * threads, false,
                                         options.initial_rows, report);
  if (!rank) return Unexpected{rank.error()};
  const RankLayout<D>& layout = *rank->layout;
  detail::ResidentFaces<T, D>& faces = *rank->faces;
  const RankSlab<T, D>& slab = faces.slab();
  TP_TRY(detail::first_sweep(kernel, world, faces, layout));
  faces.post_all();
  TP_TRY(world.barrier());

  outcome.report.setup_s = detail::seconds(detail::Clock::now() - set_up);
  detail::ThreadRecords records(threads, options);
  double exposed = 0;
  for (int sweep = 0; sweep < options.sweeps; ++sweep) {
    if (sweep > 0) TP_TRY(detail::next_sweep(kernel, world, faces, layout, sweep));
    detail::CommThreadRun<K> run(kernel, layout, faces, records, ct, threads, first_cpu);
    records.start();
    TP_TRY(detail::run_guarded(world.rank(), threads, run.substeps(overlap),
                               TeamWait::of(world.config()), [&](int t, Index sub) {
                                 records[t].begin(sub, sub);
                                 run.run(t, sub, overlap);
                                 records[t].end();
                               }));
    exposed += run.exposed(overlap);
  }
  records.finish(outcome);
  report.exposed_comm_s = exposed;  // per step, as above (not per face)
  TP_TRY(detail::reduce_rank_result(kernel, layout, slab, threads, world,
                                    TeamWait::of(world.config()), outcome));
  if (options.keep_values) detail::keep_rank_values(layout, slab, outcome);
  return outcome;
}

}  // namespace tp::exec
