// The rank pipeline for resident kernels: one rank of a plan runs its tiles on its CPU threads,
// exchanging faces with neighbour ranks through a face stream, with the blocking or the
// overlapping (pipelined) schedule and hyperplane or vertical grouping (seed 000 section 4,
// seed 002 sections 4-5, docs/executor.md). The shared context is rank_context.hpp, the faces
// face_stream.hpp; this file is the schedule loop.
#pragma once

#include <tilepipe/exec/face_stream.hpp>
#include <tilepipe/exec/probes.hpp>
#include <tilepipe/exec/rank_context.hpp>

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

namespace tp::exec {

namespace detail {

/// The rank's share of a resident kernel's result over the tiles of `layout`, reduced on
/// `threads` threads (not timed), with the tile and point counts into the outcome's report. Only
/// once every rank has computed (a barrier first): ranks that share cores would otherwise reduce
/// beside a rank still computing its last tiles, and stretch the run's time (docs/executor.md).
template <ResidentKernel K, class Outcome>
Status reduce_rank_result(const K& kernel, const RankLayout<K::dims>& layout,
                          const RankSlab<typename K::value_type, K::dims>& slab, int threads,
                          comm::World& world, TeamWait wait, Outcome& outcome) {
  TP_TRY(world.barrier());
  const int rank = world.rank();
  using R = typename K::result_type;
  std::vector<R> partial(static_cast<std::size_t>(threads));
  std::vector<const Task<K::dims>*> all;
  for (const auto& s : layout.steps) {
    for (const auto& task : s.tasks) all.push_back(&task);
  }
  TP_TRY(run_guarded(rank, threads, 1, wait, [&](int t, Index) {
    auto& p = partial[static_cast<std::size_t>(t)];
    for (auto x = static_cast<std::size_t>(t); x < all.size();
         x += static_cast<std::size_t>(threads)) {
      const Box<K::dims>& box = all[x]->box;
      const SlabView<const typename K::value_type, K::dims> cslab =
          slab.part(static_cast<std::size_t>(all[x]->part));
      p = K::combine(p, kernel_call(box, [&] { return kernel.tile_result(box, cslab); }));
    }
  }));
  for (const R& p : partial) outcome.result = K::combine(outcome.result, p);
  count_tiles(layout, outcome.report);
  return {};
}

/// The points a rank computes as disjoint boxes, in row-major order of their corners: its tiles'
/// bounding box for a block plan; for a block-cyclic plan (ADR 0018) one box per cycle vector,
/// the product over the dimensions of the intervals its rows cover (its tiles are the product of
/// one set of tile indices per dimension, as the mapping is). None for an idle rank. The parts
/// of its slab (RankLayout::parts, ADR 0028).
template <int D>
const std::vector<Box<D>>& owned_boxes(const RankLayout<D>& layout) {
  return layout.parts;
}

/// The values of the rank's tiles into the outcome: its boxes (owned_boxes) one after another,
/// each row-major.
template <class T, int D, class Outcome>
void keep_rank_values(const RankLayout<D>& layout, const RankSlab<T, D>& slab, Outcome& outcome) {
  const std::vector<Box<D>>& boxes = owned_boxes(layout);
  Index volume = 0;
  for (const Box<D>& box : boxes) {
    outcome.values_lo.insert(outcome.values_lo.end(), box.lo.begin(), box.lo.end());
    outcome.values_hi.insert(outcome.values_hi.end(), box.hi.begin(), box.hi.end());
    volume += box.volume();
  }
  outcome.values.resize(static_cast<std::size_t>(volume) * sizeof(T));
  T* at = reinterpret_cast<T*>(outcome.values.data());
  for (std::size_t p = 0; p < boxes.size(); ++p) {
    const auto n = static_cast<std::size_t>(boxes[p].volume());
    pack<T, D>(slab.part(p), boxes[p], std::span<T>(at, n));
    at += n;
  }
}

/// The initial values of the rank's points from `initial` (PipelineOptions::initial_rows), row by
/// row of its boxes (owned_boxes) into the slab.
template <class T, int D>
Status fill_initial(const RankLayout<D>& layout, const RankSlab<T, D>& slab,
                    const InitialRows& initial, int rank) {
  Status st;
  const std::vector<Box<D>>& boxes = owned_boxes(layout);
  for (std::size_t p = 0; p < boxes.size(); ++p) {
    const Box<D>& box = boxes[p];
    const SlabView<T, D>& part = slab.part(p);
    const auto n = static_cast<std::size_t>(box.extent(D - 1));
    for_each_row(box, [&](const Point<D>& first) {
      if (st)
        st = initial(std::span<const Index>(first),
                     std::as_writable_bytes(std::span(part.at(first), n)));
    });
  }
  if (!st) return Unexpected{st.error().rank >= 0 ? st.error() : st.error().on_rank(rank)};
  return {};
}

/// A resident kernel that changes its array between the sweeps of a run (PipelineOptions::sweeps):
/// on every rank, after `done` sweeps, one thread calls after_sweep(done, slab, owned, world)
/// (`owned`: the boxes of points the rank computes, owned_boxes: one for a block plan, one per
/// cycle for a block-cyclic one, none for an idle rank; `slab`: the rank's slab, part p over
/// owned[p] and the halo below it, ADR 0028); it may communicate through `world`.
template <class K>
concept SweepHook = requires(const K& k, int done,
                             const RankSlab<typename K::value_type, K::dims>& slab,
                             std::span<const Box<K::dims>> owned, comm::World& world) {
  { k.after_sweep(done, slab, owned, world) } -> std::same_as<Status>;
};

/// A resident kernel that prepares its state before a run's first sweep: on every rank, once its
/// slab is filled and before any tile runs, one thread calls before_sweeps(slab, owned, world)
/// (`owned` as for SweepHook); it may communicate through `world`.
template <class K>
concept StartHook = requires(const K& k, const RankSlab<typename K::value_type, K::dims>& slab,
                             std::span<const Box<K::dims>> owned, comm::World& world) {
  { k.before_sweeps(slab, owned, world) } -> std::same_as<Status>;
};

/// A resident kernel that runs some sweeps with the mesh of ranks mirrored (ADR 0024): mirror(s)
/// is a mask of space dimensions (bit d: dimension d, 0-based); in sweep s the rank at mesh
/// coordinate c along a mirrored dimension runs the tiles (and faces) of the rank at p_d - 1 - c.
/// Bits of the mapping dimension, of mesh factors of 1, of a block-cyclic plan and of a runner
/// that does not mirror (the communication thread's) are dropped. Before before_sweeps, every
/// rank is told, for every mask 0..2^D - 1, which rank each rank plays in a sweep asking for it:
/// mirror_roles(mask, plays), plays[r] the rank whose tiles rank r runs (the identity where the
/// mask is dropped). The roles of a rank share one slab (ADR 0026; each its own where the run
/// has initial values): in a sweep whose role differs from the last one's, the slab's points
/// hold what the other role left there (reinterpreted over this role's box) and its halo below
/// the space the boundary values, so such a kernel must write every point of its tiles before
/// it reads it in each sweep (the hooks read the finished sweep's slab before the switch).
template <class K>
concept MirrorHook = requires(const K& k, int sweep, unsigned mask, std::span<const int> plays) {
  { k.mirror(sweep) } -> std::same_as<unsigned>;
  { k.mirror_roles(mask, plays) } -> std::same_as<void>;
};

/// The bits of `mask` that mirror `plan`'s mesh (dimensions with a mesh factor > 1, not the
/// mapping dimension); 0 for a block-cyclic plan.
unsigned effective_mirror(const plan::Plan& plan, unsigned mask);

/// plays[r]: the rank whose tiles rank r runs in a sweep mirrored along `mask`
/// (effective_mirror's bits): its mesh coordinates reflected along them.
std::vector<int> mirror_plays(const plan::Plan& plan, unsigned mask);

/// Before the first sweep: the kernel's roles under every mirror (MirrorHook; `mirrored` is the
/// plan when the runner mirrors, null when not: every role the identity), then its
/// before_sweeps, if it has one (no face is in flight yet).
template <ResidentKernel K>
Status first_sweep(const K& kernel, comm::World& world,
                   ResidentFaces<typename K::value_type, K::dims>& faces,
                   const RankLayout<K::dims>& layout, const plan::Plan* mirrored = nullptr) {
  if constexpr (MirrorHook<K>) {
    std::vector<int> identity(static_cast<std::size_t>(world.size()));
    for (std::size_t r = 0; r < identity.size(); ++r) identity[r] = static_cast<int>(r);
    for (unsigned mask = 0; mask < (1U << K::dims); ++mask) {
      const unsigned m = mirrored != nullptr ? effective_mirror(*mirrored, mask) : 0U;
      if (m == 0) {
        kernel.mirror_roles(mask, identity);
      } else {
        kernel.mirror_roles(mask, mirror_plays(*mirrored, m));
      }
    }
  } else {
    (void)mirrored;
  }
  if constexpr (StartHook<K>) {
    Status started;
    try {
      const std::vector<Box<K::dims>>& owned = owned_boxes(layout);
      started = kernel.before_sweeps(faces.slab(), std::span<const Box<K::dims>>(owned), world);
    } catch (const std::exception& e) {
      return fail_at(world.rank(), Errc::internal,
                     std::string("kernel failed before the first sweep: ") + e.what());
    }
    if (!started)
      return Unexpected{started.error().rank >= 0 ? started.error()
                                                  : started.error().on_rank(world.rank())};
  }
  return {};
}

/// The kernel's after_sweep, if it has one, after `sweep` sweeps (`faces` and `layout`: those
/// of the sweep that finished).
template <ResidentKernel K>
Status sweep_hook(const K& kernel, comm::World& world,
                  ResidentFaces<typename K::value_type, K::dims>& faces,
                  const RankLayout<K::dims>& layout, int sweep) {
  if constexpr (SweepHook<K>) {
    Status hooked;
    try {
      const std::vector<Box<K::dims>>& owned = owned_boxes(layout);
      hooked = kernel.after_sweep(sweep, faces.slab(), std::span<const Box<K::dims>>(owned), world);
    } catch (const std::exception& e) {
      return fail_at(world.rank(), Errc::internal,
                     "kernel failed after sweep " + std::to_string(sweep) + ": " + e.what());
    }
    if (!hooked)
      return Unexpected{hooked.error().rank >= 0 ? hooked.error()
                                                 : hooked.error().on_rank(world.rank())};
  } else {
    (void)kernel, (void)world, (void)faces, (void)layout, (void)sweep;
  }
  return {};
}

/// Between two sweeps of a run: every rank has finished the last one (its faces arrived and
/// left), the kernel's hook runs, the face stream starts over, every rank is ready.
template <ResidentKernel K>
Status next_sweep(const K& kernel, comm::World& world,
                  ResidentFaces<typename K::value_type, K::dims>& faces,
                  const RankLayout<K::dims>& layout, int sweep) {
  TP_TRY(world.barrier());
  TP_TRY(sweep_hook(kernel, world, faces, layout, sweep));
  faces.begin_sweep(sweep);
  faces.post_all();
  return world.barrier();
}

/// A resident rank ready to run: its layout, and its slab with the face stream.
template <ResidentKernel K>
struct ResidentRank {
  std::unique_ptr<RankLayout<K::dims>> layout;  ///< on the heap: the face stream points to it
  std::unique_ptr<ResidentFaces<typename K::value_type, K::dims>> faces;
};

/// The layout of rank world.rank() (tiles re-cut by `split`), or with `plays` (mirror_plays;
/// every rank passes its own copy of the same permutation) that of rank plays[world.rank()]:
/// that rank's tiles, its faces' peers the ranks playing its neighbours.
template <ResidentKernel K>
Expected<std::unique_ptr<RankLayout<K::dims>>> resident_layout(const plan::Plan& plan,
                                                               const comm::World& world,
                                                               const RowSplit& split,
                                                               std::span<const int> plays = {}) {
  constexpr int D = K::dims;
  std::array<int, D> halo{};
  for (int d = 0; d < D; ++d) halo[static_cast<std::size_t>(d)] = halo_width<K>(d);
  const int role = plays.empty() ? world.rank() : plays[static_cast<std::size_t>(world.rank())];
  auto layout = build_rank_layout<D>(plan, role, halo, has_diagonal_dependence<K>(), split);
  if (!layout) return Unexpected{layout.error()};
  if (!plays.empty()) {  // a neighbour's role to the rank playing it
    std::vector<int> player(plays.size());
    for (std::size_t r = 0; r < plays.size(); ++r)
      player[static_cast<std::size_t>(plays[r])] = static_cast<int>(r);
    for (auto* lines : {&layout->recv_lines, &layout->send_lines}) {
      for (auto& line : *lines) line.peer = player[static_cast<std::size_t>(line.peer)];
    }
  }
  return std::make_unique<RankLayout<D>>(std::move(*layout));
}

/// Collective: the slab and face stream of `layout` (`queues` start queues, direct faces
/// announced by emit when `eager`), boundary layers filled and the rank's points from `initial`
/// where given, connected, with one face's transfer time measured into `report`. With `share`
/// (ADR 0026), over its slab memory (ResidentFaces::sharing: no allocation, no measurement;
/// the slab's values are left as they are, `initial` must be empty); otherwise a new slab with
/// room for `capacity` elements (0: the layout's parts).
template <ResidentKernel K>
Expected<std::unique_ptr<ResidentFaces<typename K::value_type, K::dims>>> open_resident_faces(
    const K& kernel, const RankLayout<K::dims>& layout, comm::World& world, bool direct, int cpus,
    int queues, bool eager, const InitialRows& initial, RankReport& report, Index capacity = 0,
    const ResidentFaces<typename K::value_type, K::dims>* share = nullptr) {
  std::unique_ptr<ResidentFaces<typename K::value_type, K::dims>> faces;
  if (share != nullptr) {
    TP_EXPECTS(!initial);
    faces = share->sharing(layout, queues, eager);
  } else {
    auto made = make_resident_faces<typename K::value_type, K::dims>(world, layout, direct, cpus,
                                                                     queues, eager, capacity);
    if (!made) return Unexpected{made.error()};
    faces = std::move(*made);
    for (const auto& part : faces->slab().parts()) fill_outer_halo(kernel, part, layout.space);
    if (initial) TP_TRY(fill_initial(layout, faces->slab(), initial, world.rank()));
  }
  report.direct_faces = direct;
  auto face_s = faces->connect_and_measure();
  if (!face_s) return Unexpected{face_s.error()};
  report.face_transfer_s = *face_s;
  return faces;
}

/// Collective set-up of both resident pipelines: the layout (resident_layout) and its slab and
/// faces (open_resident_faces).
template <ResidentKernel K>
Expected<ResidentRank<K>> open_resident_rank(const K& kernel, const plan::Plan& plan,
                                             comm::World& world, bool direct, const RowSplit& split,
                                             int queues, bool eager, const InitialRows& initial,
                                             RankReport& report) {
  auto layout = resident_layout<K>(plan, world, split);
  if (!layout) return Unexpected{layout.error()};
  ResidentRank<K> rank{std::move(*layout), nullptr};
  auto faces = open_resident_faces(kernel, *rank.layout, world, direct,
                                   static_cast<int>(plan.cpus()), queues, eager, initial, report);
  if (!faces) return Unexpected{faces.error()};
  rank.faces = std::move(*faces);
  return rank;
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
  TP_TRY(detail::check_plan_fits(plan, world, D));
  auto direct = resolve_direct_faces(options.faces, world, has_diagonal_dependence<K>());
  if (!direct) return Unexpected{direct.error()};
  const int threads = static_cast<int>(plan.cpus());
  auto outcome = detail::start_outcome<typename K::result_type>(world, threads);
  const auto set_up = detail::Clock::now();  // RankReport::setup_s
  RankReport& report = outcome.report;
  // One rank set-up (layout, faces) per mirror the sweeps ask for (MirrorHook, ADR 0024); the
  // layouts built now, the faces opened collectively when a sweep first needs them (every rank
  // runs the same sweeps); without mirrors, one. The roles share one slab (ADR 0026: allocated
  // and touched once, with room for the largest role's) unless initial values must stay in
  // each role's own. One start queue per thread; direct faces announced as soon as written.
  struct Role {
    unsigned mask = 0;
    std::unique_ptr<RankLayout<D>> layout;
    std::unique_ptr<detail::ResidentFaces<T, D>> faces;  ///< null until first needed
  };
  std::vector<Role> roles;
  const auto mask_of = [&](int sweep) {
    unsigned m = 0;
    if constexpr (detail::MirrorHook<K>) m = detail::effective_mirror(plan, kernel.mirror(sweep));
    return m;
  };
  Index capacity = 0;
  for (int sweep = 0; sweep < options.sweeps && roles.size() < (1U << D); ++sweep) {
    const unsigned m = mask_of(sweep);
    if (std::any_of(roles.begin(), roles.end(), [&](const Role& r) { return r.mask == m; }))
      continue;
    auto layout = detail::resident_layout<K>(
        plan, world, {}, m == 0 ? std::vector<int>{} : detail::mirror_plays(plan, m));
    if (!layout) return Unexpected{layout.error()};
    capacity = std::max(capacity, slab_volume(**layout));
    roles.push_back(Role{m, std::move(*layout), nullptr});
  }
  const bool shared = roles.size() > 1 && !options.initial_rows;
  const auto role_of = [&](int sweep) -> Expected<Role*> {
    const unsigned m = mask_of(sweep);
    auto it = std::find_if(roles.begin(), roles.end(), [&](const Role& r) { return r.mask == m; });
    TP_ASSERT(it != roles.end());
    if (!it->faces) {
      RankReport scratch;
      const bool first = it == roles.begin();
      auto faces = detail::open_resident_faces(
          kernel, *it->layout, world, *direct, threads, threads, true, options.initial_rows,
          first ? report : scratch, shared ? capacity : 0,
          shared && !first ? roles.front().faces.get() : nullptr);
      if (!faces) return Unexpected{faces.error()};
      it->faces = std::move(*faces);
    }
    return &*it;
  };
  auto first = role_of(0);
  if (!first) return Unexpected{first.error()};
  Role* role = *first;
  const RankLayout<D>* layout = role->layout.get();
  detail::ResidentFaces<T, D>* faces = role->faces.get();
  const RankSlab<T, D>* slab = &faces->slab();
  const TeamWait wait = TeamWait::of(world.config());
  const int subtiles = detail::choose_subtiles(plan, options.subtiles, *layout, wait, [&] {
    return measure_tile_seconds(kernel, layout->typical_tile);
  });
  report.subtiles = subtiles;
  TP_TRY(detail::first_sweep(kernel, world, *faces, *layout, &plan));
  faces->post_all();
  TP_TRY(world.barrier());

  outcome.report.setup_s = detail::seconds(detail::Clock::now() - set_up);
  detail::ThreadRecords records(threads, options);
  const auto open = [&](int t, const Task<D>& task, std::size_t s, int) {
    const auto a = Clock::now();
    bool any = false;
    for (int k = 0; k < D; ++k) {
      const auto l = task.in_line[static_cast<std::size_t>(k)];
      if (l < 0) continue;
      faces->await(static_cast<std::size_t>(l), task.in_seq[static_cast<std::size_t>(k)],
                   records[t]);
      any = true;
    }
    if (any) records[t].account(SpanKind::wait, layout->steps[s].time, a, Clock::now());
  };
  const auto compute = [&](int t, const Task<D>& task, std::size_t s, int, Index,
                           const Box<D>& part) {
    const auto a = Clock::now();
    if (!part.empty()) {
      const SlabView<T, D>& view = slab->part(static_cast<std::size_t>(task.part));
      detail::kernel_call(part, [&] { kernel.compute_tile(part, view); });
    }
    records[t].account(SpanKind::compute, layout->steps[s].time, a, Clock::now());
  };
  const auto close = [&](int t, const Task<D>& task, std::size_t s, int) {
    detail::ThreadRecord& rec = records[t];
    const auto b = Clock::now();
    double waited = 0;
    for (int k = 0; k < D; ++k) {
      const auto l = task.out_line[static_cast<std::size_t>(k)];
      if (l >= 0) {
        waited += faces->emit(static_cast<std::size_t>(l),
                              task.out_seq[static_cast<std::size_t>(k)], t, rec);
      }
    }
    const auto c = Clock::now();
    rec.phases.wait_s += waited;
    rec.phases.send_start_s += detail::seconds(c - b) - waited;
    if (c != b) rec.trace(SpanKind::send_start, layout->steps[s].time, b, c);
  };
  for (int sweep = 0; sweep < options.sweeps; ++sweep) {
    if (sweep > 0) {  // next_sweep, switching roles where the sweep mirrors otherwise
      TP_TRY(world.barrier());
      auto next = role_of(sweep);
      if (!next) return Unexpected{next.error()};
      TP_TRY(detail::sweep_hook(kernel, world, *faces, *layout, sweep));
      if (*next != role) {
        role = *next;
        layout = role->layout.get();
        faces = role->faces.get();
        slab = &faces->slab();
        // A shared slab's halo below the space held the other role's faces (O(surface)).
        if (shared) {
          for (const auto& part : slab->parts()) fill_outer_halo(kernel, part, layout->space);
        }
      }
      faces->begin_sweep(sweep);
      faces->post_all();
      TP_TRY(world.barrier());
    }
    TP_TRY(detail::run_tiles(world.rank(), plan, *layout, subtiles, wait, *faces, records, open,
                             compute, close));
  }
  // The result and the values: the last sweep's (its role's tiles and slab).
  records.finish(outcome);
  TP_TRY(detail::reduce_rank_result(kernel, *layout, *slab, threads, world, wait, outcome));
  if (options.keep_values) detail::keep_rank_values(*layout, *slab, outcome);
  return outcome;
}

}  // namespace tp::exec

#include <tilepipe/exec/pipeline_comm_thread.hpp>
