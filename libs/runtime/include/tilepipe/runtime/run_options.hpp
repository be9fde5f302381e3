// What a run through the runtime's door may ask for: ranks, CPUs, tiles, schedule, faces,
// communication, launch, trace and verification; and the plan the door makes of it.
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/exec/face_transport.hpp>
#include <tilepipe/exec/spin_wait.hpp>
#include <tilepipe/model/choose.hpp>
#include <tilepipe/model/machine.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/runtime/ranks.hpp>
#include <tilepipe/support/expected.hpp>
#include <tilepipe/support/last_words.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace tp::runtime {

/// The options of a run; every field has the default `tilepipe run` has.
struct RunOptions {
  /// Ranks. 0: the job's size when joining MPI, else 1. Under MPI a different value is an error.
  std::int64_t nodes = 0;
  /// Threads per rank. 0: the CPUs of this process's affinity mask, shared among the ranks
  /// forked on this host (2 forked ranks on 2 CPUs: 1 thread each; under MPI each rank's own
  /// mask); fewer when the extents are too small to give each CPU a row of tiles.
  std::int64_t cpus = 0;
  std::optional<plan::Index> mesh;  ///< node mesh, one factor per non-mapping dimension
  int map_dim = 0;                  ///< 1-based mapping dimension, 0 = the planner's choice
  plan::Index cyclic;  ///< block-cyclic factors (plan::PlanRequest::cyclic); empty: block mapping
  /// The cost model chooses the cyclic factors (model::ChoiceRequest::auto_cyclic; needs a
  /// machine, else the run is refused); `cyclic` is ignored then.
  bool auto_cyclic = false;
  /// Tile height along the mapping dimension, or extents (one per dimension); neither: the
  /// cost model's height with a machine, else about 64 tiles along the longest dimension.
  std::optional<std::int64_t> tile_height;
  std::optional<plan::Index> tile_extents;
  /// nullopt: the cost model's choice with a machine, else overlap and hyperplane.
  std::optional<plan::ScheduleKind> schedule;
  std::optional<plan::GroupingKind> grouping;
  int subtiles = 0;  ///< vertical grouping's N; 0 = the model's N
  exec::FaceMode faces = exec::FaceMode::automatic;
  bool comm_thread = false;
  /// Faces up to 1 MiB travel eagerly (inside isend, nothing left to progress); false keeps the
  /// transport's size thresholds.
  bool eager_faces = true;
  comm::Config comm;
  LaunchMode launch = LaunchMode::automatic;
  bool trace = false;   ///< collect every rank's spans (RunResult::spans)
  bool verify = false;  ///< also run the kernel as one tile in order and compare the results
  /// Resident kernels: run the whole sweep this many times over the same arrays, the set-up
  /// (plan, ranks, slabs, halos, connections) paid once; the kernel's after_sweep hook, if it
  /// has one, runs between sweeps (docs/kernels.md). The verification runs as many sweeps.
  int sweeps = 1;
  /// Resident kernels: write the computed array (the space 1..size[d], C order, the kernel's
  /// value type) to this .npy file, made visible only when complete; empty: none.
  std::string output;
  /// Resident kernels whose array is their elements: the initial values of the points of the
  /// space from this .npy file (the shape and type `output` writes: size[0] x ... x size[D-1] of
  /// the value type, C order), read by each rank at the offsets of its points; checked before
  /// any work. Empty: zeros. The halo keeps the kernel's boundary values.
  std::string input;
  /// The machine the cost model predicts with: with one, what the options leave open (tile,
  /// schedule, grouping) is chosen by the model.
  std::optional<model::Machine> machine;
  std::string kernel_name;  ///< the machine file's per-kernel compute cost to use ("" default)
  /// The closed form the cost model chooses with: by default the one that follows the executor
  /// (fill, drain and hops: model::Formula).
  model::Formula formula = model::Formula::executed;
  /// The kernel's workload for the cost model (face elements, sweeps that copy, bytes between
  /// sweeps); its sweeps are `sweeps` above.
  model::Workload workload{};
  /// Where an error goes that ends the process before run returns (under MPI: a failure that
  /// aborts the job, MPI_Abort); installed with set_last_words_sink as run starts, so that it
  /// reaches the copy of the library a plugin kernel runs in. Null: the sink already installed.
  LastWordsSink last_words = nullptr;
  /// Forked ranks: called in the calling process once every rank runs (it forks no more, so a
  /// progress display's thread may start then); never under MPI. Empty: nothing.
  std::function<void()> ranks_started;
};

/// A plan and, when the cost model chose part of it, the choice.
struct PlannedRun {
  plan::Plan plan;
  std::optional<model::Choice> choice;
};

/// The plan of a run over a space of `size` with dependences `deps` on `nodes` ranks, of which
/// `ranks_here` share this process's CPUs (the forked ranks; 1 under MPI); `contiguous_dim`: the
/// dimension the kernel's array is contiguous along, if it keeps one (plan::PlanRequest). Errors
/// are the user's (exit 2): bad options, no legal plan.
Expected<PlannedRun> plan_run(const plan::Index& size, const plan::DependenceMatrix& deps,
                              std::int64_t nodes, const RunOptions& options,
                              std::int64_t ranks_here = 1,
                              std::optional<int> contiguous_dim = std::nullopt);

/// The CPUs in this process's affinity mask (at least 1).
using exec::affinity_cpus;

/// Pins the calling thread to CPU `index` (modulo their count) of this process's affinity mask,
/// e.g. one local rank per core; does nothing when the mask cannot be read or set.
void pin_to_cpu(int index) noexcept;

}  // namespace tp::runtime
