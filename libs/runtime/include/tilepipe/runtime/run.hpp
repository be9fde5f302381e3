// The runtime's door: run any kernel (resident or frontier) over a space on ranks x threads with
// the options of `tilepipe run`: plan (the cost model's where a machine is given), launch or join
// MPI, the rank pipeline, gather, verification; the report comes back as data.
#pragma once

#include <tilepipe/exec/gather.hpp>
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/exec/pipeline.hpp>
#include <tilepipe/exec/pipeline_frontier.hpp>
#include <tilepipe/runtime/array_output.hpp>
#include <tilepipe/runtime/ranks.hpp>
#include <tilepipe/runtime/run_options.hpp>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tp::runtime {

/// What a run gives back. Under MPI only rank 0 holds the totals (`root`).
template <class R>
struct RunResult {
  explicit RunResult(PlannedRun p) : planned(std::move(p)) {}

  int rank = 0;
  bool root = true;
  PlannedRun planned;
  R result{};                                  ///< the kernel's result, combined over every tile
  exec::RunSummary summary;                    ///< one report per rank
  std::vector<std::vector<exec::Span>> spans;  ///< per rank, with RunOptions::trace
  std::optional<bool> verified;                ///< with RunOptions::verify
};

namespace detail {

/// The kernel's dependences as the planner takes them.
template <exec::Kernel K>
plan::DependenceMatrix deps_of() {
  std::vector<plan::Index> vectors;
  for (const auto& dep : K::deps) vectors.emplace_back(dep.begin(), dep.end());
  auto deps = plan::DependenceMatrix::make(K::dims, vectors);
  TP_EXPECTS(deps.has_value());  // a Kernel's dependences are non-zero vectors of its dims
  return *deps;
}

/// A resident kernel whose output file holds one field of its elements: `output_type` and
/// `static output_type output_value(const value_type&)` (sweep3d writes phi of its cells).
template <class K>
concept ProjectsOutput = requires(const typename K::value_type& v) {
  typename K::output_type;
  { K::output_value(v) } -> std::same_as<typename K::output_type>;
};

/// The element type of a resident kernel's output file.
template <class K>
struct OutputOf {
  using type = typename K::value_type;
};
template <class K>
requires ProjectsOutput<K>
struct OutputOf<K> {
  using type = typename K::output_type;
};

/// A projecting kernel whose output file covers only the points 1..output_extents()[d] of its
/// space (sweep3d paired: the first half along k).
template <class K>
concept ClipsOutput = ProjectsOutput<K> && requires(const K& k) {
  { k.output_extents() } -> std::convertible_to<plan::Index>;
};

/// The output file's extents: the space's, or the part a ClipsOutput kernel names.
template <class K>
plan::Index output_extents(const K& kernel, const plan::Index& size) {
  if constexpr (ClipsOutput<K>) {
    return kernel.output_extents();
  } else {
    (void)kernel;
    return size;
  }
}

/// A rank's kept values as they go to the output file (projected where the kernel says so).
struct KeptValues {
  std::vector<exec::Index> values_lo, values_hi;
  std::vector<std::byte> values;
};

/// The kept values projected, and only those of points 1..extents[d] (the output file's): each of
/// the rank's boxes (none, one, or one per cycle; RankOutcome) clipped, the empty ones dropped.
template <class K, class Outcome>
KeptValues project_values(const Outcome& outcome, const plan::Index& extents) {
  using V = typename K::value_type;
  using O = typename K::output_type;
  constexpr int D = K::dims;
  KeptValues kept;
  const std::size_t boxes = outcome.values_lo.size() / D;
  std::int64_t first_value = 0;  // of the box, in outcome.values
  for (std::size_t b = 0; b < boxes; ++b) {
    exec::Box<D> all, clipped;
    for (int d = 0; d < D; ++d) {
      const auto u = static_cast<std::size_t>(d);
      all.lo[d] = outcome.values_lo[b * D + u];
      all.hi[d] = outcome.values_hi[b * D + u];
      clipped.lo[d] = std::min(all.lo[d], 1 + extents[u]);
      clipped.hi[d] = std::max(clipped.lo[d], std::min(all.hi[d], 1 + extents[u]));
    }
    const std::int64_t volume = all.volume();
    if (clipped.volume() > 0) {
      kept.values_lo.insert(kept.values_lo.end(), clipped.lo.begin(), clipped.lo.end());
      kept.values_hi.insert(kept.values_hi.end(), clipped.hi.begin(), clipped.hi.end());
      std::size_t i = kept.values.size() / sizeof(O);
      kept.values.resize((i + static_cast<std::size_t>(clipped.volume())) * sizeof(O));
      exec::for_each_row(clipped, [&](const exec::Point<D>& row) {
        std::int64_t at = 0;
        for (int d = 0; d < D; ++d) at = at * all.extent(d) + (row[d] - all.lo[d]);
        for (exec::Index k = 0; k < clipped.extent(D - 1); ++k, ++i) {
          V v;
          std::memcpy(
              &v,
              outcome.values.data() + static_cast<std::size_t>(first_value + at + k) * sizeof(V),
              sizeof(V));
          const O o = K::output_value(v);
          std::memcpy(kept.values.data() + i * sizeof(O), &o, sizeof(O));
        }
      });
    }
    first_value += volume;
  }
  return kept;
}

/// A kernel that can start from an input array (RunOptions::input): a resident one whose output
/// file holds its elements, so that an output file is an input of the same shape and type.
template <class K>
concept TakesInput = exec::ResidentKernel<K> && !ProjectsOutput<K>;

/// The row of points that starts at `first` (1-based) read from `input` (the space 1..size[d] in
/// C order) into `row`.
inline Status read_row(const NpyReader& input, const plan::Index& size,
                       std::span<const exec::Index> first, std::span<std::byte> row) {
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < size.size(); ++d) offset = offset * size[d] + (first[d] - 1);
  return input.read(offset, row);
}

/// Fails unless `input` holds an array of the kernel's value type T and of `size`: names both.
template <class T>
Status check_input(const NpyReader& input, const plan::Index& size) {
  const NpyHeader& h = input.header();
  const std::string_view want = npy_dtype<T>();
  if (h.dtype == want && h.shape == size) return {};
  return Unexpected{Error::about("input", Errc::invalid_argument,
                                 "'" + input.path() + "' holds " + npy_shape_text(h.shape) + " " +
                                     npy_type_name(h.dtype) + " values, the kernel's array is " +
                                     npy_shape_text(size) + " " + npy_type_name(want))};
}

/// Collective: every rank's verdict on a check each made (`mine`): its own error where it failed,
/// else, where another rank failed, "`failed` rank R" about `option` (R the lowest such rank).
inline Status agree(comm::World& world, const Status& mine, const std::string& option,
                    const std::string& failed) {
  auto first = world.allreduce_min(static_cast<double>(mine ? world.size() : world.rank()));
  if (!first) return Unexpected{first.error()};
  if (!mine) return Unexpected{mine.error()};
  if (*first < world.size()) {
    return Unexpected{Error::about(option, Errc::invalid_argument,
                                   failed + " rank " + std::to_string(static_cast<int>(*first)))};
  }
  return {};
}

/// The kernel run as one tile over the whole space, in order, on this thread (`sweeps` times over
/// the same array, for a resident kernel, starting from `input` where given).
template <exec::Kernel K>
Expected<typename K::result_type> reference_result(const K& kernel, const plan::Plan& plan,
                                                   int sweeps, const NpyReader* input) {
  constexpr int D = K::dims;
  exec::Box<D> space;
  for (int d = 0; d < D; ++d) {
    space.lo[d] = 1;
    space.hi[d] = 1 + plan.space().extent(d);
  }
  exec::Point<D> whole{};
  for (int d = 0; d < D; ++d) whole[d] = space.extent(d);
  auto tiling = exec::RectTiling<D>::make(space, whole);
  if (!tiling) return Unexpected{tiling.error()};
  if constexpr (exec::ResidentKernel<K>) {
    exec::Box<D> bounds = space;
    for (int d = 0; d < D; ++d) bounds.lo[d] -= exec::halo_width<K>(d);
    std::vector<typename K::value_type> data(static_cast<std::size_t>(bounds.volume()));
    const exec::SlabView<typename K::value_type, D> slab(data.data(), bounds);
    exec::fill_halo(kernel, slab, space);
    if (input != nullptr) {
      const plan::Index size = plan.space().extents();
      const auto n = static_cast<std::size_t>(space.extent(D - 1));
      Status st;
      exec::for_each_row(space, [&](const exec::Point<D>& first) {
        if (st) {
          st = read_row(*input, size, std::span<const exec::Index>(first),
                        std::as_writable_bytes(std::span(slab.at(first), n)));
        }
      });
      TP_TRY(st);
    }
    for (int s = 1; s < sweeps; ++s) TP_TRY(exec::run_local(kernel, slab, *tiling, 1));
    return exec::run_local(kernel, slab, *tiling, 1);
  } else {
    (void)input;
    return exec::run_local(kernel, *tiling, 1);
  }
}

/// Rank 0's total as bytes (result, then per rank its report and spans, then the verdict).
template <class R>
std::vector<std::byte> encode_total(const exec::RunTotal<R>& total, std::optional<bool> verified) {
  std::vector<std::byte> blob;
  exec::detail::put_piece(blob, std::as_bytes(std::span<const R>(&total.result, 1)));
  const std::int64_t n = static_cast<std::int64_t>(total.summary.ranks.size());
  exec::detail::put_piece(blob, std::as_bytes(std::span<const std::int64_t>(&n, 1)));
  for (std::size_t r = 0; r < total.summary.ranks.size(); ++r) {
    exec::detail::put_piece(blob, exec::encode(total.summary.ranks[r]));
    exec::detail::put_piece(blob, exec::encode_spans(total.spans[r]));
  }
  const std::int8_t v = verified ? (*verified ? 1 : 0) : -1;
  exec::detail::put_piece(blob, std::as_bytes(std::span<const std::int8_t>(&v, 1)));
  return blob;
}

template <class R>
Status decode_total(const std::vector<std::byte>& blob, RunResult<R>& out) {
  std::size_t at = 0;
  auto piece = [&]() { return exec::detail::take_piece(blob, at); };
  auto r = piece();
  if (!r || r->size() != sizeof(R)) return fail(Errc::internal, "malformed result of rank 0");
  std::memcpy(&out.result, r->data(), sizeof(R));
  auto n = piece();
  if (!n || n->size() != sizeof(std::int64_t)) return fail(Errc::internal, "malformed result");
  std::int64_t ranks = 0;
  std::memcpy(&ranks, n->data(), sizeof ranks);
  for (std::int64_t i = 0; i < ranks; ++i) {
    auto rep = piece();
    auto sp = piece();
    if (!rep || !sp) return fail(Errc::internal, "malformed report of rank 0");
    out.summary.ranks.push_back(exec::decode_report(*rep));
    out.spans.push_back(exec::decode_spans(*sp));
  }
  auto v = piece();
  if (!v || v->size() != 1) return fail(Errc::internal, "malformed verdict of rank 0");
  const auto flag = static_cast<std::int8_t>((*v)[0]);
  if (flag >= 0) out.verified = flag == 1;
  return {};
}

/// The bytes a resident kernel's arrays take: the ranks' slabs (each its own rows of tiles and
/// the halo below them, exec::slab_points, ADR 0028: the space once, whatever the cyclic
/// factors), and the whole space once more with a verification and once more for the values
/// kept for an output file.
template <exec::Kernel K>
double array_bytes(const K& kernel, const plan::Plan& plan, const RunOptions& options) {
  if constexpr (exec::ResidentKernel<K>) {
    constexpr double elem = sizeof(typename K::value_type);
    std::array<int, K::dims> halo{};
    for (int d = 0; d < K::dims; ++d) halo[static_cast<std::size_t>(d)] = exec::halo_width<K>(d);
    double slabs = 0;
    for (std::int64_t r = 0; r < plan.nodes(); ++r) {
      slabs += static_cast<double>(exec::slab_points(plan, r, halo));
    }
    const double one = static_cast<double>(plan.space().points()) * elem;
    return slabs * elem + one * ((options.verify ? 1 : 0) + (options.output.empty() ? 0 : 1));
  } else {
    double bytes = 0;
    // A frontier kernel's faces over the run, where it says (once more for the verification).
    if constexpr (requires {
                    { kernel.memory_bytes() } -> std::convertible_to<double>;
                  }) {
      bytes += kernel.memory_bytes() * (options.verify ? 2 : 1);
    }
    // The kept output values (one box per rank, together the output array).
    if constexpr (exec::FrontierOutput<K>) {
      double points = 1;
      for (const auto e : kernel.output_size()) points *= static_cast<double>(e);
      if (!options.output.empty()) bytes += points * sizeof(typename K::output_type);
    }
    return bytes;
  }
}

/// Fails when `bytes` exceed this machine's physical memory (a run on one host).
Status check_memory(double bytes);

}  // namespace detail

/// Runs `kernel` over the space 1..size[d] in every dimension on ranks x threads (docs/runtime.md).
/// Standalone it forks `options.nodes` ranks (or joins the MPI job it was started in, per
/// options.launch); every rank of an MPI job must call it with the same arguments. Errors: the
/// user's (bad options, no legal plan, too little memory: is_user_error()), a kernel that threw
/// (naming rank and tile), a peer lost, a transport failure.
template <exec::Kernel K>
Expected<RunResult<typename K::result_type>> run(const K& kernel, const plan::Index& size,
                                                 const RunOptions& options) {
  using R = typename K::result_type;
  static_assert(std::is_trivially_copyable_v<R>, "results cross ranks as bytes");
  if (static_cast<int>(size.size()) != K::dims) {
    return fail(Errc::invalid_argument, "the space has " + std::to_string(size.size()) +
                                            " dimensions, the kernel " + std::to_string(K::dims));
  }
  // This copy of the library's sink (a plugin kernel runs in its own copy).
  if (options.last_words != nullptr) set_last_words_sink(options.last_words);
  const bool mpi = joins_mpi(options.launch);
  std::int64_t nodes = options.nodes > 0 ? options.nodes : 1;
  if (mpi) {
    // The job's size is the number of ranks; the plan (and the faces' eager size) comes first.
    const std::int64_t job = mpi_job_size();
    if (options.nodes > 0 && job > 0 && options.nodes != job) {
      return Unexpected{Error::about("nodes", Errc::invalid_argument,
                                     std::to_string(options.nodes) +
                                         " differs from the MPI job's " + std::to_string(job) +
                                         " ranks (leave it out to take the job's)")};
    }
    if (job > 0) nodes = job;
  }
  if (options.sweeps < 1) {
    return Unexpected{
        Error::about("sweeps", Errc::invalid_argument,
                     std::to_string(options.sweeps) + " is not a count of sweeps (1 or more)")};
  }
  if (options.sweeps > 1 && !exec::ResidentKernel<K>) {
    return Unexpected{Error::about("sweeps", Errc::invalid_argument,
                                   "repeats a kernel that keeps its array (this one passes only "
                                   "faces between its tiles)")};
  }
  if constexpr (exec::ResidentKernel<K>) {
    if (options.verify && options.sweeps > 1 && exec::detail::SweepHook<K>) {
      return Unexpected{Error::about("verify", Errc::invalid_argument,
                                     "cannot follow a kernel's after_sweep hook (it runs on every "
                                     "rank); verify one sweep")};
    }
    if (options.verify && exec::detail::StartHook<K>) {
      return Unexpected{Error::about("verify", Errc::invalid_argument,
                                     "cannot follow a kernel's before_sweeps hook (it runs on "
                                     "every rank)")};
    }
  }
  const std::optional<int> contiguous = exec::contiguous_dim(K::storage, K::dims);
  auto planned = plan_run(size, detail::deps_of<K>(), nodes, options, mpi ? 1 : nodes, contiguous);
  if (!planned) return Unexpected{planned.error()};
  RunResult<R> out(std::move(*planned));
  const plan::Plan& plan = out.planned.plan;
  const std::optional<model::Choice>& choice = out.planned.choice;
  if (!mpi) TP_TRY(detail::check_memory(detail::array_bytes(kernel, plan, options)));
  // The input file, before any work: opened and checked here when forking (the ranks inherit it
  // and read their points at their offsets), by every rank under MPI (each reads its own points;
  // every rank learns whether all could).
  std::optional<NpyReader> input;
  const auto open_input = [&]() -> Status {
    if constexpr (detail::TakesInput<K>) {
      auto r = NpyReader::open(options.input);
      if (!r) return Unexpected{Error::about("input", r.error().code, r.error().message)};
      TP_TRY(detail::check_input<typename K::value_type>(*r, size));
      input.emplace(std::move(*r));
      return {};
    } else if constexpr (exec::ResidentKernel<K>) {
      return Unexpected{Error::about("input", Errc::invalid_argument,
                                     "needs a kernel whose output file holds its elements (this "
                                     "one writes a field of them)")};
    } else {
      return Unexpected{Error::about("input", Errc::invalid_argument,
                                     "needs a kernel that keeps its array (this one passes only "
                                     "faces between its tiles)")};
    }
  };
  if (!options.input.empty() && !mpi) TP_TRY(open_input());
  // The output file, before any work: created here when forking (the ranks inherit it; this
  // process makes it visible when they succeeded), by rank 0 under MPI.
  std::optional<NpyWriter> output;
  const auto open_output = [&]() -> Status {
    if constexpr (exec::ResidentKernel<K>) {
      using Out = typename detail::OutputOf<K>::type;
      auto w =
          NpyWriter::create(options.output, npy_dtype<Out>(), detail::output_extents(kernel, size));
      if (!w) return Unexpected{Error::about("output", w.error().code, w.error().message)};
      output.emplace(std::move(*w));
      return {};
    } else if constexpr (exec::FrontierOutput<K>) {
      using Out = typename K::output_type;
      auto w = NpyWriter::create(options.output, npy_dtype<Out>(), kernel.output_size());
      if (!w) return Unexpected{Error::about("output", w.error().code, w.error().message)};
      output.emplace(std::move(*w));
      return {};
    } else {
      return Unexpected{Error::about("output", Errc::invalid_argument,
                                     "needs a kernel that keeps its array (this one passes "
                                     "only faces between its tiles)")};
    }
  };
  if (!options.output.empty() && !mpi) TP_TRY(open_output());
  if (options.comm_thread) TP_TRY(exec::check_comm_thread(plan));
  exec::PipelineOptions popts;
  popts.trace = options.trace;
  popts.comm_thread = options.comm_thread;
  popts.faces = options.faces;
  popts.keep_values = !options.output.empty();
  popts.sweeps = options.sweeps;
  popts.subtiles = options.subtiles;
  if (popts.subtiles == 0 && choice && choice->prediction.step.subtiles > 0) {
    popts.subtiles = static_cast<int>(choice->prediction.step.subtiles);  // seed 002 (7)
  }
  // Every thread on a CPU of its own: waits spin long enough not to sleep between tiles.
  const std::int64_t ranks_here = mpi ? runtime::mpi_local_size() : plan.nodes();
  comm::Config config = spin_for_dedicated_cpus(options.comm, ranks_here * plan.cpus());
  if constexpr (exec::ResidentKernel<K>) {
    if (options.eager_faces) {
      config = exec::eager_faces_config(
          config, exec::max_face_bytes(plan, sizeof(typename K::value_type), 1, false));
    }
  }
  // A test hook (docs/runtime.md): TILEPIPE_FAULT_KILL_RANK=r kills rank r as it starts.
  const char* kill_rank = std::getenv("TILEPIPE_FAULT_KILL_RANK");
  const RankBody body = [&](comm::World& world) -> Expected<std::vector<std::byte>> {
    if (kill_rank != nullptr && std::to_string(world.rank()) == kill_rank) std::raise(SIGKILL);
    exec::PipelineOptions rank_options = popts;
    if (options.trace && mpi) {
      // One time base for every rank's spans: the earliest start (one clock per host; forked
      // ranks inherit the caller's epoch).
      using Clock = std::chrono::steady_clock;
      const std::chrono::duration<double> mine = Clock::now().time_since_epoch();
      auto first = world.allreduce_min(mine.count());
      if (!first) return Unexpected{first.error()};
      rank_options.epoch = Clock::time_point(
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*first)));
    }
    if (!options.input.empty() && mpi) {
      TP_TRY(detail::agree(world, open_input(), "input", "cannot be read by"));
    }
    if (!options.output.empty() && mpi) {
      // Rank 0 opens the file; every rank learns whether it could before the run.
      TP_TRY(detail::agree(world, world.rank() == 0 ? open_output() : Status{}, "output",
                           "cannot be written by"));
    }
    if constexpr (detail::TakesInput<K>) {
      if (input) {
        rank_options.initial_rows = [&](std::span<const exec::Index> first,
                                        std::span<std::byte> row) {
          return detail::read_row(*input, size, first, row);
        };
      }
    }
    auto outcome = exec::run_rank(kernel, plan, world, rank_options);
    if (!outcome) return Unexpected{outcome.error()};
    if constexpr (exec::ResidentKernel<K>) {
      if (!options.output.empty()) {
        if constexpr (detail::ProjectsOutput<K>) {
          const plan::Index extents = detail::output_extents(kernel, size);
          TP_TRY((detail::write_array<typename K::output_type, K::dims>(
              world, detail::project_values<K>(*outcome, extents), output ? &*output : nullptr,
              extents)));
        } else {
          TP_TRY((detail::write_array<typename K::value_type, K::dims>(
              world, *outcome, output ? &*output : nullptr, size)));
        }
        if (mpi && world.rank() == 0) TP_TRY(output->commit());
      }
    } else if constexpr (exec::FrontierOutput<K>) {
      if (!options.output.empty()) {
        TP_TRY((detail::write_array<typename K::output_type, K::output_dims>(
            world, *outcome, output ? &*output : nullptr, kernel.output_size())));
        if (mpi && world.rank() == 0) TP_TRY(output->commit());
      }
    }
    auto total = exec::gather_outcomes<K>(world, *outcome);
    if (!total) return Unexpected{total.error()};
    if (world.rank() != 0) return std::vector<std::byte>{};
    std::optional<bool> verified;
    if (options.verify) {
      auto reference =
          detail::reference_result(kernel, plan, options.sweeps, input ? &*input : nullptr);
      if (!reference) return Unexpected{reference.error()};
      verified = *reference == (*total)->result;
    }
    return detail::encode_total(**total, verified);
  };
  auto ran = run_ranks(static_cast<int>(plan.nodes()), config,
                       mpi ? LaunchMode::mpi : LaunchMode::fork, body, options.ranks_started);
  if (!ran) return Unexpected{ran.error()};
  if (output && !mpi) TP_TRY(output->commit());
  out.rank = ran->rank;
  out.root = ran->root;
  if (out.root) TP_TRY(detail::decode_total(ran->bytes, out));
  return out;
}

}  // namespace tp::runtime
