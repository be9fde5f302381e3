// The rank pipeline for resident kernels: one rank of a plan runs its tiles on its CPU threads,
// exchanging faces with neighbour ranks through a face stream, with the blocking or the
// overlapping (pipelined) schedule and hyperplane or vertical grouping (seed 000 section 4,
// seed 002 sections 4-5, docs/executor.md). The shared context is rank_context.hpp, the faces
// face_stream.hpp; this file is the schedule loop.
#pragma once

#include <tilepipe/exec/face_stream.hpp>
#include <tilepipe/exec/probes.hpp>
#include <tilepipe/exec/rank_context.hpp>

namespace tp::exec {

namespace detail {

/// The rank's share of a resident kernel's result over the tiles of `layout`, reduced on
/// `threads` threads (not timed), with the tile and point counts into the outcome's report.
template <ResidentKernel K, class Outcome>
Status reduce_rank_result(const K& kernel, const RankLayout<K::dims>& layout,
                          const SlabView<typename K::value_type, K::dims>& slab, int threads,
                          int rank, Outcome& outcome) {
  using R = typename K::result_type;
  std::vector<R> partial(static_cast<std::size_t>(threads));
  const SlabView<const typename K::value_type, K::dims> cslab = slab;
  std::vector<const Task<K::dims>*> all;
  for (const auto& s : layout.steps) {
    for (const auto& task : s.tasks) all.push_back(&task);
  }
  TP_TRY(run_guarded(rank, threads, 1, [&](int t, Index) {
    auto& p = partial[static_cast<std::size_t>(t)];
    for (auto x = static_cast<std::size_t>(t); x < all.size();
         x += static_cast<std::size_t>(threads)) {
      const Box<K::dims>& box = all[x]->box;
      p = K::combine(p, kernel_call(box, [&] { return kernel.tile_result(box, cslab); }));
    }
  }));
  for (const R& p : partial) outcome.result = K::combine(outcome.result, p);
  count_tiles(layout, outcome.report);
  return {};
}

}  // namespace detail

/// Why `plan` cannot run with a communication thread (vertical grouping), or success.
Status check_comm_thread(const plan::Plan& plan);

/// run_rank with PipelineOptions::comm_thread (pipeline_comm_thread.hpp).
template <ResidentKernel K>
Expected<RankOutcome<typename K::result_type>> run_rank_comm_thread(const K& kernel,
                                                                    const plan::Plan& plan,
                                                                    comm::World& world,
                                                                    const PipelineOptions& options);

/// Runs rank world.rank()'s tiles of `plan` for a resident kernel. Every rank of the world must
/// call it with the same plan (world.size() == plan.nodes()) and options. Returns this rank's
/// share of the result (combine the shares of all ranks for the total), or an Error: a peer that
/// died, a kernel that threw (naming the tile), a transport failure.
template <ResidentKernel K>
Expected<RankOutcome<typename K::result_type>> run_rank(const K& kernel, const plan::Plan& plan,
                                                        comm::World& world,
                                                        const PipelineOptions& options) {
  constexpr int D = K::dims;
  using T = typename K::value_type;
  using detail::Clock;
  if (options.comm_thread) return run_rank_comm_thread(kernel, plan, world, options);
  constexpr bool diagonal = has_diagonal_dependence<K>();
  TP_TRY(detail::check_plan_fits(plan, world, D));
  auto direct = resolve_direct_faces(options.faces, world, diagonal);
  if (!direct) return Unexpected{direct.error()};
  const bool vertical = plan.schedule().grouping().kind() == plan::GroupingKind::vertical;
  const bool overlap = plan.schedule().kind() == plan::ScheduleKind::overlap;
  const int threads = static_cast<int>(plan.cpus());
  std::array<int, D> halo{};
  for (int d = 0; d < D; ++d) halo[static_cast<std::size_t>(d)] = halo_width<K>(d);
  auto layout_or = build_rank_layout<D>(plan, world.rank(), halo, diagonal);
  if (!layout_or) return Unexpected{layout_or.error()};
  const RankLayout<D>& layout = *layout_or;

  // The slab (its tiles and the halo below them, boundary layers filled) and its faces; one start
  // queue per thread, direct faces announced as soon as they are written.
  auto faces_or = detail::make_resident_faces<T, D>(world, layout, *direct, threads, threads, true);
  if (!faces_or) return Unexpected{faces_or.error()};
  detail::ResidentFaces<T, D>& faces = **faces_or;
  const SlabView<T, D> slab = faces.slab();
  fill_outer_halo(kernel, slab, layout.space);

  auto outcome = detail::start_outcome<typename K::result_type>(world, threads);
  RankReport& report = outcome.report;
  report.direct_faces = *direct;
  auto face_s = faces.connect_and_measure();
  if (!face_s) return Unexpected{face_s.error()};
  report.face_transfer_s = *face_s;
  const int subtiles = detail::choose_subtiles(plan, options.subtiles, layout, [&] {
    return measure_tile_seconds(kernel, layout.typical_tile);
  });
  report.subtiles = subtiles;
  faces.post_all();
  TP_TRY(world.barrier());

  // Sub-steps: each rank step expands to subtiles + the CPU grid's depth (1 for hyperplane); CPU
  // t computes subtile q - offset of its tile at sub-step q.
  const Index per_step = subtiles + (vertical ? layout.max_cpu_offset : 0);
  const Index substeps = static_cast<Index>(layout.steps.size()) * per_step;
  detail::ThreadRecords records(threads, options);
  // A finished tile's faces leave the slab; the blocking schedule also sends them now and waits
  // for them to arrive before the next tile starts.
  const auto emit_faces = [&](int t, const Task<D>& task, std::int64_t time) {
    detail::ThreadRecord& rec = records[t];
    const auto b = Clock::now();
    double waited = 0;
    for (int k = 0; k < D; ++k) {
      const auto l = task.out_line[static_cast<std::size_t>(k)];
      if (l >= 0) {
        waited += faces.emit(static_cast<std::size_t>(l), task.out_seq[static_cast<std::size_t>(k)],
                             t, rec);
      }
    }
    const auto c = Clock::now();
    rec.phases.wait_s += waited;
    rec.phases.send_start_s += detail::seconds(c - b) - waited;
    if (c != b) rec.trace(SpanKind::send_start, time, b, c);
    if (overlap) return;
    faces.start(t, rec);
    for (const int l : task.out_line) {
      if (l >= 0) faces.complete(static_cast<std::size_t>(l), &rec);
    }
    rec.account(SpanKind::wait, time, c, Clock::now());
  };
  records.start();
  TP_TRY(detail::run_guarded(world.rank(), threads, substeps, [&](int t, Index sub) {
    detail::ThreadRecord& rec = records[t];
    const auto& step = layout.steps[static_cast<std::size_t>(sub / per_step)];
    const Index q = sub % per_step;
    rec.begin(sub, step.time);
    const int ti = step.task_of_cpu[static_cast<std::size_t>(t)];
    const Task<D>* task = ti >= 0 ? &step.tasks[static_cast<std::size_t>(ti)] : nullptr;
    const Index offset = task != nullptr && vertical ? task->cpu_offset : 0;
    if (q == 0 && overlap) {
      // The faces this thread finished at its previous step leave now (seed 000's overlap).
      const auto a = Clock::now();
      if (faces.start(t, rec)) rec.account(SpanKind::send_start, step.time, a, Clock::now());
    }
    if (task != nullptr && q == offset) {
      const auto a = Clock::now();
      bool any = false;
      for (int k = 0; k < D; ++k) {
        const auto l = task->in_line[static_cast<std::size_t>(k)];
        if (l < 0) continue;
        faces.await(static_cast<std::size_t>(l), task->in_seq[static_cast<std::size_t>(k)], rec);
        any = true;
      }
      if (any) rec.account(SpanKind::wait, step.time, a, Clock::now());
    }
    if (task != nullptr && q >= offset && q < offset + subtiles) {
      const Box<D> part = detail::subtile(task->box, plan.map_dim(), q - offset, subtiles);
      const auto a = Clock::now();
      if (!part.empty()) detail::kernel_call(part, [&] { kernel.compute_tile(part, slab); });
      rec.account(SpanKind::compute, step.time, a, Clock::now());
      if (q == offset + subtiles - 1) emit_faces(t, *task, step.time);
    }
    if (sub == substeps - 1) {
      // The thread's last faces leave, and every send on its lines completes.
      const auto a = Clock::now();
      if (faces.start(t, rec)) rec.account(SpanKind::send_start, step.time, a, Clock::now());
      for (std::size_t l = 0; l < layout.send_lines.size(); ++l) {
        if (layout.send_lines[l].cpu == t) faces.complete(l, nullptr);
      }
    }
    rec.end();
  }));
  records.finish(outcome);
  TP_TRY(detail::reduce_rank_result(kernel, layout, slab, threads, world.rank(), outcome));
  return outcome;
}

}  // namespace tp::exec

#include <tilepipe/exec/pipeline_comm_thread.hpp>
