// Runs the calibration probes on this machine (local ranks or MPI) and fits a machine file.
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/model/machine.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tp::app {

/// One tile shape whose cost per point the compute probe measures.
struct ComputeShape {
  std::string kernel;              ///< wave2d | wave3d | wave4d
  std::vector<std::int64_t> tile;  ///< tile extents, one per dimension
  int along = 0;                   ///< 0-based dimension the tiles follow each other along
};

/// What to measure and how long to spend on it.
struct CalibrateSpec {
  std::string transport = "shm";     ///< shm (local ranks) or mpi (ranks from mpirun)
  std::vector<ComputeShape> shapes;  ///< tile shapes for t_comp1 (default_shapes())
  std::int64_t slab_points = std::int64_t{1} << 24;  ///< points streamed per shape and pass
  int passes = 5;         ///< timed passes per shape, interleaved over the shapes (median)
  int compute_ranks = 2;  ///< processes measuring at once (as many as the run computes on)
  std::vector<std::int64_t> sizes{64, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
  int round_trips = 30;                          ///< ping-pong round trips per size
  comm::SyncMode sync = comm::SyncMode::hybrid;  ///< the sync mode t_sync is taken for
  bool progress = true;                          ///< progress display on stderr
  comm::Link link;  ///< emulated link the communication probes go through (recorded in the file)
};

/// The generic shapes: wave2d 512 x z, wave3d 12 x 6 x z, wave4d 6 x 6 x 6 x z for tile
/// heights z from 64 to 65536 (fewer and smaller with `quick`).
std::vector<ComputeShape> default_shapes(bool quick);

/// The tile shapes the plans of `base` take at each of `heights` (tile extents from the planner).
Expected<std::vector<ComputeShape>> plan_shapes(const std::string& kernel,
                                                const plan::PlanRequest& base,
                                                const std::vector<std::int64_t>& heights);

/// Measures and fits: the kernels' t_comp1 by tile size, the link (latency, bandwidth), t_start,
/// t_sync (notification latency in spec.sync), t_sync_in; the notification latency of every sync
/// mode and the raw probe data go to the machine's notes. Call from a single-threaded process
/// (it forks the local ranks). Errors: bad spec, launch or transport failures, unfittable data.
Expected<model::Machine> calibrate_machine(const CalibrateSpec& spec);

/// The same probes in the MPI job this process runs in (spec.transport "mpi", under mpirun with
/// at least 2 ranks): every rank measures the compute probes at once, ranks 0 and 1 ping-pong
/// over MPI in spec.sync (the only mode measured: the others stay null in the notes), rank 0
/// measures t_sync_in and fits. Collective; returns the machine on rank 0, nullopt elsewhere.
Expected<std::optional<model::Machine>> calibrate_machine_mpi(const CalibrateSpec& spec);

/// Parses tile heights: "A:B" (A, 2A, 4A, ... up to B, and B itself), or a comma list "256,1024".
/// Errors (naming `flag`): not a number, a height < 1, an empty range (A > B), a height above
/// `extent` (the mapping dimension's extent), more than 64 heights.
Expected<std::vector<std::int64_t>> parse_height_list(const std::string& text, std::int64_t extent,
                                                      const std::string& flag);

/// Where `tilepipe calibrate` writes and `tilepipe run` looks for a machine file by default:
/// $TILEPIPE_MACHINE, else $XDG_CONFIG_HOME/tilepipe/machine-TRANSPORT.json, else
/// $HOME/.config/tilepipe/machine-TRANSPORT.json; empty when none of them is set.
std::string default_machine_path(const std::string& transport);

/// The default machine file for runs through `link`: default_machine_path(transport), or the
/// one of "TRANSPORT-link" when a link is emulated (so that the two never overwrite each other).
std::string default_machine_path(const std::string& transport, const comm::Link& link);

}  // namespace tp::app
