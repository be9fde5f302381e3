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

#include <limits>

namespace tp::exec {

namespace detail {

/// Where a frontier kernel's tiles leave their output values (FrontierOutput) when a run keeps
/// them: the rank's box of output points, in RankOutcome::values. Otherwise a plain compute_tile.
template <FrontierKernel K>
struct FrontierKeep {
  template <class Outcome>
  static Expected<FrontierKeep> make(const K&, const RankLayout<K::dims>&, bool keep, Outcome&) {
    if (keep) {
      return Unexpected{Error::about("output", Errc::invalid_argument,
                                     "needs a kernel that keeps its array or its final values "
                                     "(this one passes only faces between its tiles)")};
    }
    return FrontierKeep{};
  }
  template <class In, class Out>
  auto compute(const K& kernel, const Box<K::dims>& box, const In& in, const Out& out) const {
    return kernel.compute_tile(box, in, out);
  }
};

template <FrontierKernel K>
requires FrontierOutput<K>
struct FrontierKeep<K> {
  static constexpr int OD = K::output_dims;
  using O = typename K::output_type;
  /// One view per box of output points (a block plan's rank has one, a block-cyclic plan's one
  /// per cycle vector), each over its part of the outcome's values.
  std::vector<SlabView<O, OD>> views;

  /// The boxes that the output boxes of the rank's tiles tile exactly (product_boxes: one for a
  /// block plan, one per cycle for a block-cyclic one; ADR 0018), in RankOutcome's layout: the
  /// values box after box, zero until the tiles run. None for a rank without output points.
  template <class Outcome>
  static Expected<FrontierKeep> make(const K& kernel, const RankLayout<K::dims>& layout, bool keep,
                                     Outcome& outcome) {
    FrontierKeep k;
    std::vector<Box<OD>> boxes;
    if (keep) {
      std::vector<Box<OD>> parts;
      for (const auto& s : layout.steps) {
        for (const auto& task : s.tasks) parts.push_back(kernel.output_box(task.box));
      }
      auto tiled = product_boxes<OD>(parts);
      if (!tiled) {
        return fail(Errc::internal, "the output values of a rank's tiles do not tile boxes");
      }
      boxes = std::move(*tiled);
    }
    if (boxes.empty()) {  // no values: one empty box at the origin (as before)
      Box<OD> box;
      box.lo.fill(1);
      box.hi.fill(1);
      outcome.values_lo.assign(box.lo.begin(), box.lo.end());
      outcome.values_hi.assign(box.hi.begin(), box.hi.end());
      return k;
    }
    Index volume = 0;
    for (const Box<OD>& b : boxes) {
      outcome.values_lo.insert(outcome.values_lo.end(), b.lo.begin(), b.lo.end());
      outcome.values_hi.insert(outcome.values_hi.end(), b.hi.begin(), b.hi.end());
      volume += b.volume();
    }
    outcome.values.assign(static_cast<std::size_t>(volume) * sizeof(O), std::byte{0});
    O* at = reinterpret_cast<O*>(outcome.values.data());
    for (const Box<OD>& b : boxes) {
      k.views.emplace_back(at, b);
      at += b.volume();
    }
    return k;
  }
  template <class In, class Out>
  auto compute(const K& kernel, const Box<K::dims>& box, const In& in, const Out& out) const {
    const Box<OD> b = kernel.output_box(box);
    if (!b.empty()) {
      for (const auto& view : views) {  // the box that holds the tile's output
        bool inside = true;
        for (int d = 0; d < OD; ++d) {
          inside = inside && b.lo[d] >= view.bounds().lo[d] && b.hi[d] <= view.bounds().hi[d];
        }
        if (inside) return kernel.compute_tile(box, in, out, view);
      }
    }
    return kernel.compute_tile(box, in, out);
  }
};

}  // namespace detail

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
  const auto set_up = detail::Clock::now();  // RankReport::setup_s
  if (options.sweeps != 1) {
    return Unexpected{Error::about("sweeps", Errc::invalid_argument,
                                   "repeat a kernel that keeps its array (this one passes only "
                                   "faces between its tiles)")};
  }
  const bool vertical = plan.schedule().grouping().kind() == plan::GroupingKind::vertical;
  const int threads = static_cast<int>(plan.cpus());
  const int map_i = plan.map_dim();
  std::array<int, D> halo{};
  halo.fill(1);
  auto layout_or = build_rank_layout<D>(plan, world.rank(), halo, false);
  if (!layout_or) return Unexpected{layout_or.error()};
  const RankLayout<D>& layout = *layout_or;
  const TeamWait wait = TeamWait::of(world.config());
  int nsub = detail::choose_subtiles(plan, options.subtiles, layout, wait, [&] {
    return measure_tile_seconds(kernel, layout.typical_tile);
  });
  if (vertical) {
    // An idle rank (no tiles) leaves N to the ranks that run tiles.
    const double mine = layout.steps.empty() ? std::numeric_limits<double>::max() : nsub;
    auto agreed = world.allreduce_min(mine);
    if (!agreed) return Unexpected{agreed.error()};
    nsub = std::max(1, static_cast<int>(*agreed));
  }
  auto fl_or = build_frontier_layout(kernel, layout, map_i, nsub, vertical);
  if (!fl_or) return Unexpected{fl_or.error()};
  const FrontierLayout<D>& fl = *fl_or;

  // Local faces: two buffers per slot, by the parity of the producer's place in its column
  // (FrontierLayout::TaskFaces). Per thread: boundary faces and faces nobody reads; with N > 1 two
  // buffers for the face from one subtile to the next.
  std::vector<std::vector<F>> slots(2 * fl.slot_elems.size());
  for (std::size_t x = 0; x < slots.size(); ++x) slots[x].resize(fl.slot_elems[x / 2]);
  struct alignas(64) PerThread {
    std::array<std::vector<F>, D> scratch_in, scratch_out;
    std::array<std::vector<F>, 2> chain;
    std::array<std::span<const F>, D> in;  ///< the current tile's faces (set at its subtile 0)
    std::array<std::span<F>, D> out;
    R partial{};
    bool prepared = false;  ///< the kernel prepared the thread's first tile (PreparedKernel)
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
  // With keep_values, a kernel's output values go straight from its tiles into the outcome.
  auto keep = detail::FrontierKeep<K>::make(kernel, layout, options.keep_values, outcome);
  if (!keep) return Unexpected{keep.error()};
  RankReport& report = outcome.report;
  auto face_s = measure_face_transfer(world, layout, sizeof(F));
  if (!face_s) return Unexpected{face_s.error()};
  report.face_transfer_s = *face_s;
  lines.set_cap(*face_s);
  report.subtiles = nsub;
  lines.post_all();
  TP_TRY(world.barrier());

  outcome.report.setup_s = detail::seconds(detail::Clock::now() - set_up);
  detail::ThreadRecords records(threads, options);
  // A tile's faces, before its first subtile: remote ones received, local slots, or none
  // (boundary, unread); out-faces to other ranks in a free line buffer.
  const auto open = [&](int t, const Task<D>& task, std::size_t s, int i) {
    const auto& lf = fl.local[s][static_cast<std::size_t>(i)];
    PerThread& pt = per[static_cast<std::size_t>(t)];
    if constexpr (PreparedKernel<K>) {
      // The thread's first tile: its tables and scratch while its faces are on their way (a
      // thread keeps the rows of its first tile; local_runner.hpp does the same).
      if (!pt.prepared) {
        pt.prepared = true;
        try {
          kernel.prepare_rows(task.box);
        } catch (const std::exception&) {  // a preparation only: the tiles will tell
        }
      }
    }
    const auto w0 = Clock::now();
    bool waited = false;
    for (std::size_t k = 0; k < D; ++k) {
      pt.in[k] = {};
      if (task.in_line[k] >= 0) {
        pt.in[k] = lines.await(static_cast<std::size_t>(task.in_line[k]), task.in_seq[k],
                               lf.in_n[k], records[t]);
        waited = true;
      } else if (lf.in_slot[k] >= 0) {
        const auto x =
            2 * static_cast<std::size_t>(lf.in_slot[k]) + static_cast<std::size_t>(lf.in_buffer[k]);
        pt.in[k] = std::span<const F>(slots[x].data(), lf.in_n[k]);
      }
      pt.out[k] = {};
      if (task.out_line[k] >= 0) {
        double w = 0;
        pt.out[k] = lines.acquire(static_cast<std::size_t>(task.out_line[k]), task.out_seq[k],
                                  lf.out_n[k], w);
        waited = waited || w > 0;
      } else if (lf.out_slot[k] >= 0) {
        const auto x = 2 * static_cast<std::size_t>(lf.out_slot[k]) +
                       static_cast<std::size_t>(lf.out_buffer[k]);
        pt.out[k] = std::span<F>(slots[x].data(), lf.out_n[k]);
      }
    }
    if (waited) records[t].account(SpanKind::wait, layout.steps[s].time, w0, Clock::now());
  };
  // Subtile p: along the mapping dimension its faces come from the previous subtile (the tile's
  // face for the first), along another dimension they are its part of the tile's face; else
  // boundary faces in and scratch out.
  const auto compute = [&](int t, const Task<D>& task, std::size_t s, int, Index p,
                           const Box<D>& part) {
    PerThread& pt = per[static_cast<std::size_t>(t)];
    FaceSet<const F, D> in;
    FaceSet<F, D> out;
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
    const auto a = Clock::now();
    const R r = detail::kernel_call(part, [&] { return keep->compute(kernel, part, in, out); });
    pt.partial = K::combine(pt.partial, r);
    records[t].account(SpanKind::compute, layout.steps[s].time, a, Clock::now());
  };
  // The tile's received faces are read; its faces to other ranks are queued to leave.
  const auto close = [&](int t, const Task<D>& task, std::size_t s, int i) {
    const auto& lf = fl.local[s][static_cast<std::size_t>(i)];
    for (std::size_t k = 0; k < D; ++k) {
      if (task.in_line[k] >= 0) lines.release(static_cast<std::size_t>(task.in_line[k]));
      if (task.out_line[k] >= 0) {
        lines.queue(t, static_cast<std::size_t>(task.out_line[k]), task.out_seq[k], lf.out_n[k]);
      }
    }
  };
  TP_TRY(detail::run_tiles(world.rank(), plan, layout, nsub, wait, lines, records, open, compute,
                           close));
  records.finish(outcome);
  for (const auto& pt : per) outcome.result = K::combine(outcome.result, pt.partial);
  detail::count_tiles(layout, report);
  return outcome;
}

}  // namespace tp::exec
