// Calibration: measures this machine and transport (a kernel's cost per point by tile shape, the
// link, send start, notification, thread synchronization) on ranks it forks or the MPI job it
// joins, and fits a machine file for the cost model (docs/model.md, "Calibration").
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/model/machine.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/runtime/ranks.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tp::runtime {

/// One tile shape whose cost per point the compute probe measures.
struct ComputeShape {
  std::string kernel;              ///< the machine file's kernel name (e.g. wave3d)
  std::vector<std::int64_t> tile;  ///< tile extents, one per dimension
  int along = 0;                   ///< 0-based dimension the tiles follow each other along
};

/// One timed pass of a compute probe at a tile height: seconds per point.
using TileCostPass = std::function<double(std::int64_t height)>;

/// Makes the compute probe of a kernel for tiles of `shape`'s cross-section (its extent along
/// `shape.along` is ignored) at heights up to `max_height`, streaming at least `slab_points`
/// points per pass; an Error for a kernel or shape it cannot measure. Called on every rank.
using TileCostProbes = std::function<Expected<TileCostPass>(
    const ComputeShape& shape, std::int64_t max_height, std::int64_t slab_points)>;

/// Progress of a calibration: `done` of `total` stages, what runs now. Called on rank 0 only.
using CalibrationProgress = std::function<void(int done, int total, std::string_view what)>;

/// What to measure and how long to spend on it.
struct CalibrateSpec {
  /// fork: local ranks over shared memory; mpi: the ranks of the MPI job this process runs in
  /// (at least 2), which measure one sync mode (spec.sync) and return the machine on rank 0.
  LaunchMode launch = LaunchMode::fork;
  std::vector<ComputeShape> shapes;                  ///< tile shapes for t_comp1
  TileCostProbes probes;                             ///< the kernels' compute probes
  std::int64_t slab_points = std::int64_t{1} << 24;  ///< points streamed per shape and pass
  int passes = 5;         ///< timed passes per shape, interleaved over the shapes (median)
  int compute_ranks = 2;  ///< forked ranks measuring at once (as many as the run computes on)
  /// The copy probe (exec::ColdCopyProbe, on the compute ranks at once): block bytes, and the
  /// region each rank cycles over (0: 256 MiB over the ranks, within 32-128 MiB each).
  std::size_t copy_block = std::size_t{256} << 10;
  std::size_t copy_region = 0;
  std::vector<std::int64_t> sizes{64, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
  int round_trips = 30;                          ///< ping-pong round trips per size
  comm::SyncMode sync = comm::SyncMode::hybrid;  ///< the sync mode t_sync is taken for
  comm::Link link;  ///< emulated link the communication probes go through (recorded in the file)
  CalibrationProgress progress;  ///< null: none
};

/// Measures and fits: the kernels' t_comp1 by tile size, the link (latency, bandwidth), t_start,
/// t_sync (notification latency in spec.sync), t_sync_in; the notification latency of every sync
/// mode measured and the raw probe data go to the machine's notes. Forked: call from a
/// single-threaded process. Under MPI: collective, the machine on rank 0 and nullopt elsewhere.
/// Errors: a bad spec, launch or transport failures, unfittable data.
Expected<std::optional<model::Machine>> calibrate(const CalibrateSpec& spec);

/// The tile shapes the plans of `base` take at each of `heights` (tile extents from the planner),
/// without repeats, for `kernel`'s compute probe. Errors: no plan, tiles not rectangular.
Expected<std::vector<ComputeShape>> plan_shapes(const std::string& kernel,
                                                const plan::PlanRequest& base,
                                                const std::vector<std::int64_t>& heights);

/// The heights a calibration for the model's own choice probes: `heights` (ascending, without
/// repeats) and, below the smallest of them, the smallest legal height z0 of `base` (every
/// dependence's component along the mapping dimension base.map_dim plus 1, at least 1) and
/// z0 4^j while under it. The choice's candidates reach down to z0, and the model extends the
/// smallest sample's cost per point proportionally below it, which misses what a short tile costs
/// beyond its points (each row of the cross-section starts in new cache lines and pages: sweep3d
/// at height 2 computes 4-5x the per-point cost of height 128, docs/adr/0031). Errors: base
/// without dependences or map_dim outside 1..dims.
Expected<std::vector<std::int64_t>> choice_probe_heights(const plan::PlanRequest& base,
                                                         std::vector<std::int64_t> heights);

/// Where calibration writes and runs look for a machine file by default: $TILEPIPE_MACHINE, else
/// $XDG_CONFIG_HOME/tilepipe/machine-NAME.json, else $HOME/.config/tilepipe/machine-NAME.json
/// with NAME the transport ("shm", "mpi"), "-link" appended when a link is emulated (so that the
/// two never overwrite each other); empty when none of the variables is set.
std::string default_machine_path(std::string_view transport, const comm::Link& link = {});

}  // namespace tp::runtime
