// Machine parameters of the cost model in the seeds' symbols (seed 000 (1)-(3), seed 002 (1), (6)).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tp::model {

/// Durations of the model: fractional seconds.
using Seconds = std::chrono::duration<double>;

/// How the messages of one time step leave a node (docs/model.md, "Communication").
enum class SendMode {
  queued,    ///< one send start per step for all neighbours, transfers one after another (the
             ///< seeds' SCI DMA queue: one SCIPostDMAQueue per step)
  serial,    ///< one send start per neighbour, transfers one after another on one link
  parallel,  ///< one send start per neighbour, transfers concurrently on independent links
};

/// "queued", "serial" or "parallel".
std::string_view to_string(SendMode mode);

/// A linear cost f(bytes) = latency + bytes / bandwidth (UCX's linear_func c + x m).
struct LinkCost {
  Seconds latency{0};                  ///< >= 0
  double bandwidth_bytes_per_s = 1e9;  ///< > 0

  /// latency + bytes / bandwidth; 0 for 0 bytes (no message).
  [[nodiscard]] Seconds time_for(std::int64_t bytes) const;
};

/// One measured compute cost: the cost per point of tiles of `tile_points` points.
struct ComputeSample {
  std::int64_t tile_points = 0;  ///< g, >= 1
  Seconds t_comp1{0};            ///< per point, > 0
};

/// The computation cost of one kernel: t_comp1 per iteration point, constant or measured by tile
/// size (cache effects), and the bytes a point occupies on a communicated face.
struct ComputeCost {
  Seconds t_comp1{0};                  ///< per point; used when `samples` is empty
  std::int64_t element_bytes = 8;      ///< bytes per face point sent
  std::vector<ComputeSample> samples;  ///< strictly increasing tile_points, non-decreasing
                                       ///< tile time tile_points * t_comp1

  /// Time of one tile of g points, t_comp = g t_comp1(g): linear in g between the samples, g times
  /// the first or last sample's t_comp1 outside them, g t_comp1 without samples. Non-decreasing
  /// in g (the samples are validated so), which the tile-height search relies on.
  [[nodiscard]] Seconds tile_time(std::int64_t tile_points) const;
};

/// Everything the model knows about a machine and transport (a machine file, docs/model.md).
struct Machine {
  std::string name;        ///< "machine": a label, e.g. "seed000-sci-cluster"
  bool host_bound = true;  ///< false for reference files (the seeds'): no host check
  std::string hostname;    ///< where the parameters were measured
  std::string cpu_model;   ///< /proc/cpuinfo "model name" of that host
  std::string transport;   ///< "shm", "mpi", or a reference transport such as "sci-dma"
  std::string source;      ///< how the values were obtained (free text, may be empty)
  /// The emulated link the values were measured through (comm's canonical text, e.g.
  /// "latency=20us,bandwidth=80MB/s"), "none" for the bare transport.
  std::string emulated_link = "none";
  std::string notes;    ///< the optional "notes" value as JSON text, kept but not interpreted
  ComputeCost compute;  ///< the default compute cost
  std::map<std::string, ComputeCost, std::less<>> kernels;  ///< per-kernel overrides
  Seconds t_start{0};    ///< CPU time to start a non-blocking send (per step when queued)
  Seconds t_sync{0};     ///< synchronization between successive steps (seed 000: 4 interrupts)
  Seconds t_sync_in{0};  ///< one synchronization of the CPUs of a node (seed 002 (6))
  LinkCost link;         ///< transfer time of a message: latency + bytes / bandwidth
  SendMode send_mode = SendMode::serial;

  /// The compute cost of a kernel: its own entry, else the default.
  [[nodiscard]] const ComputeCost& compute_for(std::string_view kernel) const;
};

}  // namespace tp::model
