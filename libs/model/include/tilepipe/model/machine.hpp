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

/// How the nodes are connected (machine file "network", optional; used by the simulator only,
/// docs/model.md "Simulation"). The closed formulas ignore it.
enum class Topology {
  full_bisection,  ///< every node has its own link (comm bandwidth in and out); no shared paths
  torus,           ///< a 1-D to 3-D torus of links with their own bandwidth, dimension-order routes
};

/// "full-bisection" or "torus".
std::string_view to_string(Topology topology);

/// One node that differs from the others (a slow node, a slower link).
struct NodeOverride {
  std::int64_t node = 0;             ///< rank, 0-based
  double compute_scale = 1;          ///< its tiles take this many times as long (> 0)
  double bandwidth_bytes_per_s = 0;  ///< its own link's bandwidth; 0: comm bandwidth
};

/// Ranks that share the cores of a host (machine file "network.hosts", optional; the simulator's
/// processor sharing, docs/model.md "Ranks that share cores"). Ranks 0 .. ranks_per_host - 1 live
/// on the first host, and so on; the computing threads of a host's ranks share its cores equally.
struct Hosts {
  std::int64_t ranks_per_host = 0;  ///< >= 1; 0: every rank has a core per thread (the default)
  std::int64_t cores = 1;           ///< cores of each host, >= 1
  /// What a thread that slept on a message it waited for loses when the message comes (a
  /// futex wake-up, --sync block), >= 0; a thread that did not wait pays nothing.
  Seconds wake{0};

  [[nodiscard]] bool shared() const { return ranks_per_host > 0; }
};

/// The network of a machine file. Default: full bisection, nothing overridden.
struct Network {
  Topology topology = Topology::full_bisection;
  std::vector<std::int64_t> torus;        ///< torus extents (1-3 of them, each >= 1), torus only
  double link_bandwidth_bytes_per_s = 0;  ///< every torus link's bandwidth, torus only (> 0)
  Seconds hop_latency{0};                 ///< added per torus link crossed, >= 0
  std::vector<NodeOverride> nodes;        ///< distinct nodes, in file order
  Hosts hosts;                            ///< ranks that share cores (default: none)

  /// True when the file had no "network" (the default network, not written back).
  [[nodiscard]] bool is_default() const {
    return topology == Topology::full_bisection && nodes.empty() && hop_latency.count() == 0 &&
           !hosts.shared();
  }
};

/// Everything the model knows about a machine and transport (a machine file, docs/model.md).
struct Machine {
  std::string name;        ///< "machine": a label, e.g. "seed000-sci-cluster"
  bool host_bound = true;  ///< false for reference files (the seeds'): no node-type check
  std::string hostname;    ///< where the parameters were measured (informative, not matched)
  std::string cpu_model;   ///< /proc/cpuinfo "model name" of that node: matched
  int cores = 0;           ///< online CPUs of that node: matched when > 0 (0: not recorded)
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
  /// Relative standard deviation of one tile's compute time on CPUs computing at once (the
  /// node's step barrier waits for the slowest of them: docs/model.md, "The step barrier"); 0
  /// (the default, files without "node.tile_spread"): every CPU's tile takes alpha. In [0, 1].
  double tile_spread = 0;
  LinkCost link;  ///< transfer time of a message: latency + bytes / bandwidth
  SendMode send_mode = SendMode::serial;
  /// Bytes per second a CPU copies a face at, where the transport's transfer is a CPU's copy
  /// (shared memory: the sender copies an eager message, the receiver a larger one) rather than
  /// a DMA engine's: that part of t_comm cannot overlap the CPU's computation. 0 (the default,
  /// and the seeds' SCI DMA): the whole transfer runs without a CPU. docs/model.md, "What the
  /// CPU pays, what overlaps".
  double cpu_copy_bytes_per_s = 0;
  Network network;  ///< how the nodes are connected (the simulator's; optional in the file)

  /// The compute cost of a kernel: its own entry, else the default.
  [[nodiscard]] const ComputeCost& compute_for(std::string_view kernel) const;
};

}  // namespace tp::model
