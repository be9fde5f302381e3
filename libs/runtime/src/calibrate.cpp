// Calibration: compute probes on concurrent ranks, communication probes between two ranks per
// sync mode, the thread barrier, then the fit into a tp::model::Machine.
#include <tilepipe/exec/calibration.hpp>
#include <tilepipe/exec/probes.hpp>
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/model/fit.hpp>
#include <tilepipe/model/machine_file.hpp>
#include <tilepipe/runtime/calibrate.hpp>
#include <tilepipe/runtime/run_options.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <span>

namespace tp::runtime {
namespace {

constexpr std::size_t max_shapes = 128;
constexpr std::size_t max_sizes = 32;
constexpr int max_ranks = 16;
constexpr int tag_compute = 1;
constexpr double min_timed_pass_s = 1e-3;
constexpr int step_spread_passes = 48;         ///< timed passes of the step barrier's probe
constexpr std::size_t step_spread_groups = 4;  ///< median of this many groups' means

std::string shape_text(const ComputeShape& s) {
  std::string t = s.kernel + " ";
  for (std::size_t i = 0; i < s.tile.size(); ++i) t += (i ? "x" : "") + std::to_string(s.tile[i]);
  return t;
}

std::vector<std::byte> to_bytes(const std::vector<double>& v) {
  const auto b = std::as_bytes(std::span(v));
  return {b.begin(), b.end()};
}

std::vector<double> from_bytes(const std::vector<std::byte>& b) {
  std::vector<double> v(b.size() / sizeof(double));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(double));
  return v;
}

/// Calls the spec's progress display, if any (rank 0 only).
void show(const CalibrateSpec& spec, int rank, int done, int total, std::string_view what) {
  if (spec.progress && rank == 0) spec.progress(done, total, what);
}

/// The copy probe's region on each of `ranks` ranks measuring at once: spec.copy_region, else
/// 256 MiB over the ranks within 32-128 MiB each (far more than the caches hold; sysconf's cache
/// sizes are unreliable in virtual machines, which may report the host's).
std::size_t copy_region_bytes(const CalibrateSpec& spec, int ranks) {
  if (spec.copy_region > 0) return std::max(spec.copy_region, spec.copy_block);
  constexpr std::size_t mib = std::size_t{1} << 20;
  return std::max(std::clamp<std::size_t>(256 * mib / static_cast<std::size_t>(std::max(ranks, 1)),
                                          32 * mib, 128 * mib),
                  spec.copy_block);
}

std::int64_t tile_points(const ComputeShape& shape) {
  std::int64_t g = 1;
  for (auto w : shape.tile) g *= w;
  return g;
}

/// The compute probes of one rank: one per (kernel, cross-section, direction), shared by the
/// heights of its shapes.
class ComputeProbes {
 public:
  static Expected<ComputeProbes> make(const CalibrateSpec& spec) {
    ComputeProbes out;
    std::vector<std::int64_t> max_height;
    for (const auto& s : spec.shapes) {
      std::vector<std::int64_t> cross = s.tile;
      cross[static_cast<std::size_t>(s.along)] = 1;
      std::size_t g = 0;
      while (g < out.groups_.size() &&
             !(out.groups_[g].kernel == s.kernel && out.groups_[g].tile == cross &&
               out.groups_[g].along == s.along)) {
        ++g;
      }
      if (g == out.groups_.size()) {
        out.groups_.push_back(ComputeShape{s.kernel, cross, s.along});
        max_height.push_back(1);
      }
      max_height[g] = std::max(max_height[g], s.tile[static_cast<std::size_t>(s.along)]);
      out.shape_group_.push_back(g);
    }
    for (std::size_t g = 0; g < out.groups_.size(); ++g) {
      auto pass = spec.probes(out.groups_[g], max_height[g], spec.slab_points);
      if (!pass) return Unexpected{pass.error()};
      out.passes_.push_back(std::move(*pass));
    }
    return out;
  }
  /// One timed pass of shape i: seconds per point.
  double pass(std::size_t i, const ComputeShape& s) {
    return passes_[shape_group_[i]](s.tile[static_cast<std::size_t>(s.along)]);
  }

 private:
  std::vector<ComputeShape> groups_;  // cross-sections (extent 1 along the direction)
  std::vector<TileCostPass> passes_;  // by group
  std::vector<std::size_t> shape_group_;
};

/// This thread's CPU time in seconds (the time it ran, not the time it waited for a core).
double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// A timed pass scaled to the CPU it got: `per_unit` is the pass's wall seconds per unit (what
/// pass() returns) times its share of a core (CPU over wall time, at most 1); `cpu` and `wall` its
/// seconds. Passes shorter than min_timed_pass_s are too short to be told from the clocks' own
/// cost (and to be preempted much): they count whole.
struct CpuPass {
  double per_unit = 0;
  double cpu = 0;
  double wall = 0;
};
template <class Pass>
CpuPass cpu_pass(Pass&& pass) {
  const double cpu0 = thread_cpu_s();
  const auto wall0 = std::chrono::steady_clock::now();
  const double wall_per_unit = pass();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double cpu = thread_cpu_s() - cpu0;
  const bool timed = wall >= min_timed_pass_s;
  const double share = timed ? std::clamp(cpu / wall, 0.0, 1.0) : 1.0;
  return {wall_per_unit * share, timed ? cpu : wall, wall};
}

/// The compute probes on every rank of `world` at once (they share caches and memory bandwidth
/// as the ranks of a run do; barriers keep them in step): per shape the median over spec.passes
/// passes (interleaved over the shapes) of the CPU seconds per point, then the share of a core
/// the passes got (CPU time over wall time), then the copy probe's bytes per CPU second; on rank 0
/// the means over the ranks and the tile's spread (the step barrier's probe), elsewhere this
/// rank's values and its step passes.
///
/// CPU time, not wall time: a probe that another process preempts (a compiler on a shared
/// machine) would otherwise charge the model its waits as computation, for every tile of every
/// plan the machine file predicts (docs/model.md, "Calibrating on a busy machine"). The probes
/// time wall seconds per point; each pass is scaled by the share of a core it got.
Expected<std::vector<double>> measure_compute(comm::World& world, const CalibrateSpec& spec,
                                              int total) {
  const std::size_t n = spec.shapes.size();
  show(spec, world.rank(), 0, total, "compute probes: filling the slabs");
  auto probes = ComputeProbes::make(spec);
  if (!probes) return Unexpected{probes.error()};
  std::vector<std::vector<double>> per_point(n);
  double cpu_total = 0;
  double wall_total = 0;
  for (int pass = 0; pass < spec.passes; ++pass) {
    for (std::size_t i = 0; i < n; ++i) {
      TP_TRY(world.barrier());
      show(spec, world.rank(),
           static_cast<int>((static_cast<std::size_t>(pass) * n + i)) / spec.passes, total,
           fmt::format("compute {} (pass {})", shape_text(spec.shapes[i]), pass + 1));
      const CpuPass p = cpu_pass([&] { return probes->pass(i, spec.shapes[i]); });
      per_point[i].push_back(p.per_unit);
      cpu_total += p.cpu;
      wall_total += p.wall;
    }
  }
  std::vector<double> mine;
  for (auto& v : per_point) mine.push_back(model::median(v));
  mine.push_back(wall_total > 0 ? std::clamp(cpu_total / wall_total, 0.0, 1.0) : 1.0);
  // The copy of faces into cold shared memory, on every rank at once (docs/model.md, "The copy
  // of a face"): bytes per CPU second, the median over the passes.
  {
    show(spec, world.rank(), static_cast<int>(n), total, "copy into cold memory");
    auto copy = exec::ColdCopyProbe::make(spec.copy_block, copy_region_bytes(spec, world.size()));
    if (!copy) return Unexpected{copy.error()};
    std::vector<double> rates;
    for (int pass = 0; pass < spec.passes; ++pass) {
      TP_TRY(world.barrier());
      const double per_byte = cpu_pass([&] { return copy->pass(); }).per_unit;
      if (per_byte > 0) rates.push_back(1.0 / per_byte);
    }
    mine.push_back(rates.empty() ? 0.0 : model::median(rates));
  }
  // The step barrier's probe (docs/model.md, "The step barrier"): every rank times short passes
  // of the largest shape at once, a barrier before each, as the CPUs of a node compute a step's
  // tiles; wall time, for a step waits for a preempted CPU too. The first pass warms up.
  std::vector<double> step_passes;
  if (world.size() > 1) {
    std::size_t big = 0;
    for (std::size_t i = 1; i < n; ++i) {
      if (tile_points(spec.shapes[i]) > tile_points(spec.shapes[big])) big = i;
    }
    const ComputeShape& shape = spec.shapes[big];
    ComputeShape cross = shape;
    cross.tile[static_cast<std::size_t>(shape.along)] = 1;
    const std::int64_t height = shape.tile[static_cast<std::size_t>(shape.along)];
    auto probe = spec.probes(cross, height, 1);  // the shortest slab: two tiles
    if (!probe) return Unexpected{probe.error()};
    for (int pass = 0; pass <= step_spread_passes; ++pass) {
      TP_TRY(world.barrier());
      const double t = (*probe)(height);
      if (pass > 0) step_passes.push_back(t);
    }
  }
  mine.insert(mine.end(), step_passes.begin(), step_passes.end());
  if (world.rank() != 0) {
    TP_TRY(world.send(0, tag_compute, std::as_bytes(std::span(mine))));
    return mine;
  }
  std::vector<double> mean(n + 3, 0.0);
  std::vector<double> theirs(mine.size());
  // Per pass the slowest rank's time over the ranks' mean.
  std::vector<double> slowest(step_passes.size(), 0.0);
  std::vector<double> sum(step_passes.size(), 0.0);
  for (int r = 0; r < world.size(); ++r) {
    if (r > 0) {
      auto got = world.recv(r, tag_compute, std::as_writable_bytes(std::span(theirs)));
      if (!got) return Unexpected{got.error()};
    }
    const auto& v = r == 0 ? mine : theirs;
    for (std::size_t i = 0; i <= n + 1; ++i) mean[i] += v[i] / world.size();
    for (std::size_t p = 0; p < step_passes.size(); ++p) {
      slowest[p] = std::max(slowest[p], v[n + 2 + p]);
      sum[p] += v[n + 2 + p];
    }
  }
  // E[max - mean] / mean over the passes is e_R x the tile's relative spread for R ranks
  // computing at once (model::expected_max_of_normals). Estimated as the median of the means of
  // step_spread_groups groups of consecutive passes: one burst of another process's work on this
  // shared machine moves one group's mean, not the estimate (a plain mean over 48 passes read
  // 0.008 to 0.109 on one quiet machine).
  std::vector<double> group_means;
  const std::size_t per_group = step_passes.size() / step_spread_groups;
  for (std::size_t g = 0; per_group > 0 && g < step_spread_groups; ++g) {
    double excess = 0;
    for (std::size_t p = g * per_group; p < (g + 1) * per_group; ++p) {
      const double m = sum[p] / world.size();
      if (m > 0) excess += (slowest[p] - m) / m / static_cast<double>(per_group);
    }
    group_means.push_back(excess);
  }
  mean[n + 2] =
      group_means.empty()
          ? 0.0
          : std::clamp(model::median(group_means) / model::expected_max_of_normals(world.size()),
                       0.0, 1.0);
  return mean;
}

/// The communication probes between ranks 0 and 1: per size the one-way time, then per size the
/// isend time, then the notification latency (rank 0; empty elsewhere).
Expected<std::vector<double>> measure_comm(comm::World& world, const CalibrateSpec& spec,
                                           bool sizes) {
  exec::CommProbeOptions popt;
  if (sizes) popt.sizes = spec.sizes;
  popt.round_trips = spec.round_trips;
  auto r = exec::probe_comm(world, popt);
  if (!r) return Unexpected{r.error()};
  std::vector<double> out;
  if (world.rank() != 0) return out;
  for (const auto& [bytes, s] : r->one_way_s) out.push_back(s);
  for (const auto& [bytes, s] : r->isend_s) out.push_back(s);
  out.push_back(r->notify_s);
  return out;
}

Status check_spec(const CalibrateSpec& spec) {
  if (!spec.probes) return fail(Errc::invalid_argument, "calibration needs the kernels' probes");
  if (spec.shapes.empty() || spec.shapes.size() > max_shapes) {
    return fail(Errc::invalid_argument, "calibration needs 1 to " + std::to_string(max_shapes) +
                                            " tile shapes, not " +
                                            std::to_string(spec.shapes.size()));
  }
  for (const auto& s : spec.shapes) {
    if (s.tile.empty() || s.along < 0 || s.along >= static_cast<int>(s.tile.size()) ||
        std::any_of(s.tile.begin(), s.tile.end(), [](std::int64_t w) { return w < 1; })) {
      return fail(Errc::invalid_argument, "calibration shape '" + shape_text(s) + "' is invalid");
    }
  }
  if (spec.sizes.size() < 2 || spec.sizes.size() > max_sizes) {
    return fail(Errc::invalid_argument, "calibration needs 2 to 32 message sizes");
  }
  if (spec.compute_ranks < 1 || spec.compute_ranks > max_ranks) {
    return fail(Errc::invalid_argument, "calibration runs 1 to 16 compute ranks");
  }
  if (spec.passes < 1) return fail(Errc::invalid_argument, "calibration needs at least 1 pass");
  return {};
}

/// What the probes measured, on the rank that fits (rank 0).
struct RawCalibration {
  std::vector<double> t_comp1_s;  ///< per shape: CPU seconds per point, mean over ranks
  double compute_cpu_share = 1;   ///< the share of a core the compute probes got (mean)
  double tile_spread = 0;         ///< the step barrier's probe: a tile's relative spread
  double copy_bytes_per_s = 0;    ///< the copy probe (mean over the ranks; 0: none)
  std::vector<double> one_way_s;  ///< per spec.sizes entry
  std::vector<double> isend_s;    ///< per spec.sizes entry
  /// By SyncMode (poll, block, hybrid); < 0: not measured.
  std::array<double, 3> notify_s{-1, -1, -1};
  double t_sync_in_s = 0;
  int compute_ranks = 1;
};

/// The comm probe's bytes (measure_comm, with sizes) into `raw`.
Status take_comm(const CalibrateSpec& spec, const std::vector<double>& v, RawCalibration& raw) {
  const std::size_t n = spec.sizes.size();
  if (v.size() != 2 * n + 1) return fail(Errc::internal, "the communication probe came back short");
  raw.one_way_s.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
  raw.isend_s.assign(v.begin() + static_cast<std::ptrdiff_t>(n),
                     v.begin() + static_cast<std::ptrdiff_t>(2 * n));
  return {};
}

/// The machine file fitted to `raw`.
Expected<model::Machine> fit_machine(const CalibrateSpec& spec, const RawCalibration& raw) {
  const std::string transport = spec.launch == LaunchMode::mpi ? "mpi" : "shm";
  model::Machine m;
  const auto host = model::this_host();
  m.name = host.hostname + "-" + transport;
  m.host_bound = true;
  m.hostname = host.hostname;
  m.cpu_model = host.cpu_model;
  m.cores = host.cores;
  m.transport = transport;
  m.emulated_link = comm::to_string(spec.link);
  if (spec.link.enabled) m.name += "-link";
  m.source = fmt::format(
      "tilepipe calibrate: {} tile shapes on {} concurrent ranks ({} points streamed, median of "
      "{} passes); copy of {} KiB blocks into {} MiB of cold shared memory on each; ping-pong "
      "of {} sizes between 2 ranks (median of up to {} round trips)",
      spec.shapes.size(), raw.compute_ranks, spec.slab_points, spec.passes, spec.copy_block >> 10,
      copy_region_bytes(spec, raw.compute_ranks) >> 20, spec.sizes.size(), spec.round_trips);
  std::map<std::string, std::vector<model::ComputeSample>> by_kernel;
  for (std::size_t i = 0; i < spec.shapes.size(); ++i) {
    by_kernel[spec.shapes[i].kernel].push_back(
        {tile_points(spec.shapes[i]), model::Seconds{raw.t_comp1_s[i]}});
  }
  for (auto& [name, samples] : by_kernel) {
    auto cost = model::compute_cost_from(samples, sizeof(float));
    if (!cost) return Unexpected{cost.error()};
    m.kernels.emplace(name, *cost);
  }
  m.compute = m.kernels.count("wave3d") ? m.kernels.at("wave3d") : m.kernels.begin()->second;
  std::vector<model::TransferSample> transfers;
  std::vector<double> starts;
  nlohmann::json one_way = nlohmann::json::array();
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) {
    transfers.push_back({spec.sizes[i], model::Seconds{raw.one_way_s[i]}});
    starts.push_back(raw.isend_s[i]);
    one_way.push_back({{"bytes", spec.sizes[i]},
                       {"one_way_us", raw.one_way_s[i] * 1e6},
                       {"isend_us", raw.isend_s[i] * 1e6}});
  }
  auto link = model::fit_link_cost(transfers);
  if (!link) return Unexpected{link.error()};
  m.link = *link;
  if (transport == "shm") {
    // Shared memory moves a face by a CPU's copy (the sender's below the eager limit, the
    // receiver's above): its bandwidth is the ping-pong's less the emulated link's flight.
    std::vector<model::TransferSample> copies;
    for (std::size_t i = 0; i < spec.sizes.size(); ++i) {
      const double flight = spec.link.enabled
                                ? std::chrono::duration<double>(
                                      spec.link.latency + spec.link.transfer_time(spec.sizes[i]))
                                      .count()
                                : 0.0;
      copies.push_back({spec.sizes[i], model::Seconds{std::max(1e-9, raw.one_way_s[i] - flight)}});
    }
    if (auto copy = model::fit_link_cost(copies)) {
      m.cpu_copy_bytes_per_s = copy->bandwidth_bytes_per_s;
    }
    if (!spec.link.enabled && raw.copy_bytes_per_s > 0) {
      // A run's faces land in slabs that no cache holds, where the ping-pong's buffers stay in
      // cache: their copy goes at the copy probe's rate, which bounds the transport's too
      // (docs/model.md, "The copy of a face").
      m.cpu_copy_bytes_per_s = raw.copy_bytes_per_s;
      m.link.bandwidth_bytes_per_s = std::min(m.link.bandwidth_bytes_per_s, raw.copy_bytes_per_s);
    }
  }
  m.t_start = model::Seconds{model::median(starts)};
  m.t_sync = model::Seconds{raw.notify_s[static_cast<std::size_t>(spec.sync)]};
  if (spec.link.enabled) {
    // The 8-byte notification flew through the emulated link: its flight (latency + 8 B /
    // bandwidth) is the face's flight, which t_comm already counts once (docs/model.md,
    // "Emulated link"); t_sync keeps what the transport adds on top of it.
    const double flight =
        std::chrono::duration<double>(spec.link.latency + spec.link.transfer_time(8)).count();
    m.t_sync = model::Seconds{std::max(0.0, m.t_sync.count() - flight)};
  }
  m.t_sync_in = model::Seconds{raw.t_sync_in_s};
  m.tile_spread = raw.tile_spread;
  // The emulated link is one pipe per destination (comm's LinkEmulator): messages to different
  // neighbours travel at once. The bare shared memory transport's sender copies them one after
  // another.
  m.send_mode = spec.link.enabled ? model::SendMode::parallel : model::SendMode::serial;
  nlohmann::json notes;
  // Modes not measured (over MPI only the runs' mode is: the mode is a World setting) are null.
  const auto us = [](double s) { return s >= 0 ? nlohmann::json(s * 1e6) : nlohmann::json(); };
  notes["notify_us"] = {{"poll", us(raw.notify_s[0])},
                        {"block", us(raw.notify_s[1])},
                        {"hybrid", us(raw.notify_s[2])}};
  notes["t_sync_mode"] = std::string(comm::to_string(spec.sync));
  notes["messages"] = one_way;
  notes["compute_ranks"] = raw.compute_ranks;
  notes["compute_cpu_share"] = raw.compute_cpu_share;
  notes["copy_probe"] = {{"block_bytes", spec.copy_block},
                         {"region_bytes", copy_region_bytes(spec, raw.compute_ranks)},
                         {"bytes_per_s", raw.copy_bytes_per_s}};
  m.notes = notes.dump();
  return m;
}

/// Forked ranks: the compute probes on spec.compute_ranks ranks (block sync: waiting ranks must
/// not steal the measuring ones' cores), then per sync mode a ping-pong between two ranks pinned
/// to distinct cores (two spinning ranks on one core measure the spin budget, not the
/// notification), the runs' mode first with every message size.
Expected<RawCalibration> measure_forked(const CalibrateSpec& spec) {
  const int n_shapes = static_cast<int>(spec.shapes.size());
  const int total = n_shapes + 4;
  RawCalibration raw;
  raw.compute_ranks = spec.compute_ranks;
  comm::Config config;
  config.sync = comm::SyncMode::block;
  auto compute = run_ranks(spec.compute_ranks, config, LaunchMode::fork,
                           [&](comm::World& world) -> Expected<std::vector<std::byte>> {
                             auto t = measure_compute(world, spec, total);
                             if (!t) return Unexpected{t.error()};
                             TP_TRY(world.barrier());
                             return to_bytes(*t);
                           });
  if (!compute) return Unexpected{compute.error()};
  raw.t_comp1_s = from_bytes(compute->bytes);
  if (raw.t_comp1_s.size() != spec.shapes.size() + 3) {
    return fail(Errc::internal, "the compute probes came back short");
  }
  raw.tile_spread = raw.t_comp1_s.back();
  raw.t_comp1_s.pop_back();
  raw.copy_bytes_per_s = raw.t_comp1_s.back();
  raw.t_comp1_s.pop_back();
  raw.compute_cpu_share = raw.t_comp1_s.back();
  raw.t_comp1_s.pop_back();
  const std::array<comm::SyncMode, 3> modes{spec.sync, comm::SyncMode::poll, comm::SyncMode::block};
  for (std::size_t m = 0; m < modes.size(); ++m) {
    if (m > 0 && modes[m] == spec.sync) continue;
    show(spec, 0, n_shapes + static_cast<int>(m), total,
         fmt::format("communication, sync {}", comm::to_string(modes[m])));
    comm::Config cc;
    cc.sync = modes[m];
    cc.link = spec.link;
    auto probe = run_ranks(2, cc, LaunchMode::fork,
                           [&](comm::World& world) -> Expected<std::vector<std::byte>> {
                             pin_to_cpu(world.rank());
                             auto v = measure_comm(world, spec, m == 0);
                             if (!v) return Unexpected{v.error()};
                             return to_bytes(*v);
                           });
    if (!probe) return Unexpected{probe.error()};
    const auto v = from_bytes(probe->bytes);
    if (v.empty()) return fail(Errc::internal, "the communication probe came back empty");
    if (m == 0) TP_TRY(take_comm(spec, v, raw));
    raw.notify_s[static_cast<std::size_t>(modes[m])] = v.back();
  }
  show(spec, 0, n_shapes + 3, total, "node synchronization (t_sync_in)");
  raw.t_sync_in_s = exec::measure_barrier_s(2, exec::TeamWait{spec.sync});
  show(spec, 0, total, total, "done");
  return raw;
}

/// The MPI job's ranks: every rank measures the compute probes at once, ranks 0 and 1 ping-pong
/// in spec.sync (the mode is a World setting, and MPI is initialised once per process). The
/// machine's raw data on rank 0, nullopt elsewhere.
Expected<std::optional<RawCalibration>> measure_mpi(const CalibrateSpec& spec) {
  if (spec.link.enabled) {
    return Unexpected{Error::about("link", Errc::invalid_argument,
                                   "emulates a link between ranks of one host; calibrate it on "
                                   "forked ranks, not over MPI")};
  }
  const int n_shapes = static_cast<int>(spec.shapes.size());
  const int total = n_shapes + 2;
  comm::Config config;
  config.transport = comm::TransportKind::mpi;
  config.sync = spec.sync;
  int ranks = 0;
  auto ran = run_ranks(
      0, config, LaunchMode::mpi, [&](comm::World& world) -> Expected<std::vector<std::byte>> {
        if (world.size() < 2) {
          return fail(Errc::invalid_argument,
                      "calibration over MPI needs at least 2 ranks (e.g. "
                      "mpirun -np 2)");
        }
        ranks = world.size();
        auto t = measure_compute(world, spec, total);
        if (!t) return Unexpected{t.error()};
        show(spec, world.rank(), n_shapes, total,
             fmt::format("communication over MPI, sync {}", comm::to_string(spec.sync)));
        auto c = measure_comm(world, spec, true);
        if (!c) return Unexpected{c.error()};
        TP_TRY(world.barrier());
        t->insert(t->end(), c->begin(), c->end());
        return to_bytes(*t);
      });
  if (!ran) return Unexpected{ran.error()};
  if (!ran->root) return std::optional<RawCalibration>{};
  RawCalibration raw;
  raw.compute_ranks = ranks;
  auto v = from_bytes(ran->bytes);
  if (v.size() < spec.shapes.size() + 3) return fail(Errc::internal, "the probes came back short");
  raw.t_comp1_s.assign(v.begin(), v.begin() + n_shapes);
  raw.compute_cpu_share = v[spec.shapes.size()];
  raw.copy_bytes_per_s = v[spec.shapes.size() + 1];
  raw.tile_spread = v[spec.shapes.size() + 2];
  v.erase(v.begin(), v.begin() + n_shapes + 3);
  TP_TRY(take_comm(spec, v, raw));
  raw.notify_s[static_cast<std::size_t>(spec.sync)] = v.back();
  show(spec, 0, n_shapes + 1, total, "node synchronization (t_sync_in)");
  raw.t_sync_in_s = exec::measure_barrier_s(2, exec::TeamWait{spec.sync});
  show(spec, 0, total, total, "done");
  return std::optional<RawCalibration>{std::move(raw)};
}

}  // namespace

Expected<std::optional<model::Machine>> calibrate(const CalibrateSpec& spec) {
  TP_TRY(check_spec(spec));
  std::optional<RawCalibration> raw;
  if (spec.launch == LaunchMode::mpi) {
    auto r = measure_mpi(spec);
    if (!r) return Unexpected{r.error()};
    raw = std::move(*r);
  } else if (spec.launch == LaunchMode::fork) {
    auto r = measure_forked(spec);
    if (!r) return Unexpected{r.error()};
    raw = std::move(*r);
  } else {
    return fail(Errc::invalid_argument, "calibration forks its ranks or joins MPI (not auto)");
  }
  if (!raw) return std::optional<model::Machine>{};
  auto m = fit_machine(spec, *raw);
  if (!m) return Unexpected{m.error()};
  return std::optional<model::Machine>{std::move(*m)};
}

Expected<std::vector<ComputeShape>> plan_shapes(const std::string& kernel,
                                                const plan::PlanRequest& base,
                                                const std::vector<std::int64_t>& heights) {
  std::vector<ComputeShape> out;
  for (auto z : heights) {
    plan::PlanRequest r = base;
    r.tile_kind = plan::TileSpecKind::height;
    r.tile_height = z;
    auto p = plan::Plan::make(r);
    if (!p) return Unexpected{p.error()};
    if (!p->tiling().is_rectangular()) {
      return fail(Errc::invalid_argument, "calibration needs rectangular tiles");
    }
    ComputeShape s{kernel, p->tiling().tile_extents(), p->map_dim()};
    const bool seen = std::any_of(out.begin(), out.end(), [&](const ComputeShape& o) {
      return o.tile == s.tile && o.along == s.along;
    });
    if (!seen) out.push_back(std::move(s));
  }
  return out;
}

Expected<std::vector<std::int64_t>> choice_probe_heights(const plan::PlanRequest& base,
                                                         std::vector<std::int64_t> heights) {
  const auto dims = static_cast<int>(base.size.size());
  if (!base.deps || base.map_dim < 1 || base.map_dim > dims) {
    return fail(Errc::invalid_argument,
                "the probe heights need the dependences and the mapping dimension");
  }
  const auto i = static_cast<std::size_t>(base.map_dim - 1);
  std::int64_t z0 = 1;
  for (const auto& d : base.deps->vectors()) z0 = std::max(z0, d[i] + 1);
  std::sort(heights.begin(), heights.end());
  heights.erase(std::unique(heights.begin(), heights.end()), heights.end());
  const std::int64_t smallest = heights.empty() ? z0 : heights.front();
  std::vector<std::int64_t> out;
  for (std::int64_t z = z0; z < smallest; z *= 4) out.push_back(z);
  out.insert(out.end(), heights.begin(), heights.end());
  return out;
}

std::string default_machine_path(std::string_view transport, const comm::Link& link) {
  if (const char* e = std::getenv("TILEPIPE_MACHINE"); e != nullptr && *e != '\0') return e;
  const std::string file =
      "/tilepipe/machine-" + std::string(transport) + (link.enabled ? "-link" : "") + ".json";
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x != nullptr && *x != '\0') {
    return std::string(x) + file;
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return std::string(h) + "/.config" + file;
  }
  return "";
}

}  // namespace tp::runtime
