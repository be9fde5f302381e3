// The rank pipeline for frontier kernels (only faces travel, e.g. Smith-Waterman): a rank runs its
// tiles with hyperplane or vertical grouping, faces between its own tiles in double-buffered
// slots (frontier_layout.hpp), faces to and from other ranks in message lines read and written in
// place. With vertical grouping each tile runs as N subtiles along the mapping dimension, each a
// frontier tile of its own; a face crossing another dimension is the concatenation of the N
// subtile faces (docs/executor.md). This file is the schedule loop.
#pragma once

#include <tilepipe/exec/face_stream.hpp>
#include <tilepipe/exec/frontier_layout.hpp>
#include <tilepipe/exec/rank_context.hpp>

namespace tp::exec {

/// Runs rank world.rank()'s tiles of `plan` for a frontier kernel, with hyperplane or vertical
/// grouping (options.subtiles: N, 0 = the model's N, the least over the ranks so that all agree
/// on the faces' layout). Same contract as the resident run_rank.
template <FrontierKernel K>
Expected<RankOutcome<typename K::result_type>> run_rank(const K& kernel, const plan::Plan& plan,
                                                        comm::World& world,
                                                        const PipelineOptions& options) {
  constexpr int D = K::dims;
  using F = typename K::face_type;
  using R = typename K::result_type;
  using detail::Clock;
  TP_TRY(detail::check_plan_fits(plan, world, D));
  const bool vertical = plan.schedule().grouping().kind() == plan::GroupingKind::vertical;
  const bool overlap = plan.schedule().kind() == plan::ScheduleKind::overlap;
  const int threads = static_cast<int>(plan.cpus());
  const int map_i = plan.map_dim();
  std::array<int, D> halo{};
  halo.fill(1);
  auto layout_or = build_rank_layout<D>(plan, world.rank(), halo, false);
  if (!layout_or) return Unexpected{layout_or.error()};
  const RankLayout<D>& layout = *layout_or;
  int nsub = detail::choose_subtiles(plan, options.subtiles, layout, [&] {
    return measure_tile_seconds(kernel, layout.typical_tile);
  });
  if (vertical) {
    auto agreed = world.allreduce_min(static_cast<double>(nsub));
    if (!agreed) return Unexpected{agreed.error()};
    nsub = std::max(1, static_cast<int>(*agreed));
  }
  auto fl_or = build_frontier_layout(kernel, layout, map_i, nsub, vertical);
  if (!fl_or) return Unexpected{fl_or.error()};
  const FrontierLayout<D>& fl = *fl_or;

  // Local faces: two buffers per slot, by the producer's step parity. Per thread: boundary faces
  // and faces nobody reads; with N > 1 two buffers for the face from one subtile to the next.
  std::vector<std::vector<F>> slots(2 * fl.slot_elems.size());
  for (std::size_t x = 0; x < slots.size(); ++x) slots[x].resize(fl.slot_elems[x / 2]);
  struct alignas(64) PerThread {
    std::array<std::vector<F>, D> scratch_in, scratch_out;
    std::array<std::vector<F>, 2> chain;
    std::array<std::span<const F>, D> in;  ///< the current tile's faces (set at its subtile 0)
    std::array<std::span<F>, D> out;
    R partial{};
  };
  std::vector<PerThread> per(static_cast<std::size_t>(threads));
  for (auto& pt : per) {
    for (std::size_t k = 0; k < D; ++k) {
      pt.scratch_in[k].resize(fl.most[k]);
      pt.scratch_out[k].resize(fl.most[k]);
    }
    if (nsub > 1) {
      for (auto& c : pt.chain) c.resize(fl.most[static_cast<std::size_t>(map_i)]);
    }
  }
  detail::MessageLines<F> lines(world, layout, fl.recv_elems, fl.send_elems, threads);

  auto outcome = detail::start_outcome<R>(world, threads);
  RankReport& report = outcome.report;
  auto face_s = measure_face_transfer(world, layout, sizeof(F));
  if (!face_s) return Unexpected{face_s.error()};
  report.face_transfer_s = *face_s;
  const double cap = *face_s;
  report.subtiles = nsub;
  lines.post_all();
  TP_TRY(world.barrier());

  detail::ThreadRecords records(threads, options);
  // A tile's faces, at its first subtile: remote ones received, local slots, or none (boundary,
  // unread); out-faces to other ranks in a free line buffer. True when it waited for any.
  const auto open_tile = [&](int t, const Task<D>& task, const auto& lf, std::int64_t time) {
    PerThread& pt = per[static_cast<std::size_t>(t)];
    bool waited = false;
    for (std::size_t k = 0; k < D; ++k) {
      pt.in[k] = {};
      if (task.in_line[k] >= 0) {
        pt.in[k] = lines.await(static_cast<std::size_t>(task.in_line[k]), task.in_seq[k],
                               lf.in_n[k], records[t], cap);
        waited = true;
      } else if (lf.in_slot[k] >= 0) {
        const auto x = 2 * static_cast<std::size_t>(lf.in_slot[k]) +
                       static_cast<std::size_t>(lf.in_time[k] & 1);
        pt.in[k] = std::span<const F>(slots[x].data(), lf.in_n[k]);
      }
      pt.out[k] = {};
      if (task.out_line[k] >= 0) {
        double w = 0;
        pt.out[k] = lines.acquire(static_cast<std::size_t>(task.out_line[k]), task.out_seq[k],
                                  lf.out_n[k], w);
        waited = waited || w > 0;
      } else if (lf.out_slot[k] >= 0) {
        const auto x =
            2 * static_cast<std::size_t>(lf.out_slot[k]) + static_cast<std::size_t>(time & 1);
        pt.out[k] = std::span<F>(slots[x].data(), lf.out_n[k]);
      }
    }
    return waited;
  };
  // Subtile p's faces: along the mapping dimension from the previous subtile (the tile's face for
  // the first), along another dimension its part of the tile's face; else boundary or scratch.
  const auto subtile_faces = [&](int t, const Task<D>& task, Index p, const Box<D>& part,
                                 FaceSet<const F, D>& in, FaceSet<F, D>& out) {
    PerThread& pt = per[static_cast<std::size_t>(t)];
    for (int k = 0; k < D; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      const std::size_t n = kernel.face_size(k, part);
      std::size_t at = 0;  // the subtile's offset in the tile's face
      if (k != map_i) {
        for (Index r = 0; r < p; ++r)
          at += kernel.face_size(k, detail::subtile(task.box, map_i, r, nsub));
      }
      if (k == map_i && p > 0) {
        in[kk] = std::span<const F>(pt.chain[static_cast<std::size_t>((p - 1) & 1)].data(), n);
      } else if (!pt.in[kk].empty()) {
        in[kk] = pt.in[kk].subspan(at, n);
      } else {
        const std::span<F> b(pt.scratch_in[kk].data(), n);
        kernel.boundary_face(k, part, b);
        in[kk] = b;
      }
      if (k == map_i && p < nsub - 1) {
        out[kk] = std::span<F>(pt.chain[static_cast<std::size_t>(p & 1)].data(), n);
      } else if (!pt.out[kk].empty()) {
        out[kk] = pt.out[kk].subspan(at, n);
      } else {
        out[kk] = std::span<F>(pt.scratch_out[kk].data(), n);
      }
    }
  };
  const auto start_sends = [&](int t, std::int64_t time) {
    const auto a = Clock::now();
    if (lines.start(t, records[t])) records[t].account(SpanKind::send_start, time, a, Clock::now());
  };

  // Sub-steps: each rank step expands to N + the CPU grid's depth (1 for hyperplane grouping);
  // CPU t computes subtile q - cpu_offset of its tile at sub-step q.
  const Index per_step = nsub + (vertical ? layout.max_cpu_offset : 0);
  const Index substeps = static_cast<Index>(layout.steps.size()) * per_step;
  records.start();
  TP_TRY(detail::run_guarded(world.rank(), threads, substeps, [&](int t, Index sub) {
    detail::ThreadRecord& rec = records[t];
    const auto ss = static_cast<std::size_t>(sub / per_step);
    const Index q = sub % per_step;
    const auto& step = layout.steps[ss];
    rec.begin(sub, step.time);
    if (overlap && q == 0) start_sends(t, step.time);
    const int ti = step.task_of_cpu[static_cast<std::size_t>(t)];
    const Task<D>* task = ti >= 0 ? &step.tasks[static_cast<std::size_t>(ti)] : nullptr;
    const Index offset = task != nullptr && vertical ? task->cpu_offset : 0;
    if (task != nullptr && q >= offset && q < offset + nsub) {
      const Index p = q - offset;
      const auto& lf = fl.local[ss][static_cast<std::size_t>(ti)];
      const auto w0 = Clock::now();
      const bool waited = p == 0 && open_tile(t, *task, lf, step.time);
      const Box<D> part = detail::subtile(task->box, map_i, p, nsub);
      FaceSet<const F, D> in;
      FaceSet<F, D> out;
      subtile_faces(t, *task, p, part, in, out);
      const auto w1 = Clock::now();
      if (waited) rec.account(SpanKind::wait, step.time, w0, w1);
      const R r = detail::kernel_call(part, [&] { return kernel.compute_tile(part, in, out); });
      PerThread& pt = per[static_cast<std::size_t>(t)];
      pt.partial = K::combine(pt.partial, r);
      rec.account(SpanKind::compute, step.time, w1, Clock::now());
      if (p == nsub - 1) {
        for (std::size_t k = 0; k < D; ++k) {
          if (task->in_line[k] >= 0) lines.release(static_cast<std::size_t>(task->in_line[k]));
          if (task->out_line[k] >= 0) {
            lines.queue(t, static_cast<std::size_t>(task->out_line[k]), task->out_seq[k],
                        lf.out_n[k]);
          }
        }
        if (!overlap) {
          // Blocking schedule: the faces leave now and arrive before the next tile starts.
          start_sends(t, step.time);
          const auto b0 = Clock::now();
          for (const int l : task->out_line) {
            if (l >= 0) lines.complete(static_cast<std::size_t>(l), &rec, cap);
          }
          rec.phases.wait_s += detail::seconds(Clock::now() - b0);
        }
      }
    }
    if (sub == substeps - 1) {
      // The thread's last faces leave, and every send on its lines completes.
      start_sends(t, step.time);
      for (std::size_t l = 0; l < layout.send_lines.size(); ++l) {
        if (layout.send_lines[l].cpu == t) lines.complete(l, nullptr, cap);
      }
    }
    rec.end();
  }));
  records.finish(outcome);
  for (const auto& pt : per) outcome.result = K::combine(outcome.result, pt.partial);
  detail::count_tiles(layout, report);
  return outcome;
}

}  // namespace tp::exec
