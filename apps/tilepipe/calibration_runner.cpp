// The calibration run: compute probes on concurrent local ranks, comm probes between two ranks
// per sync mode, the thread barrier, then the fit into a tp::model::Machine.
#include "calibration_runner.hpp"
#include "command.hpp"

#include "affinity.hpp"

#include <tilepipe/comm/launch.hpp>
#include <tilepipe/exec/calibration.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/model/fit.hpp>
#include <tilepipe/model/machine_file.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/core.h>
#include <sys/mman.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <thread>

namespace tp::app {

namespace {

constexpr int max_shapes = 128;
constexpr int max_sizes = 32;
constexpr int max_ranks = 16;

/// What the forked ranks report back, in a MAP_SHARED page set mapped before the fork.
struct SharedResults {
  double t_comp1_s[max_ranks][max_shapes];
  std::int64_t tile_points[max_shapes];
  double one_way_s[max_sizes];
  double isend_s[max_sizes];
  double notify_s;
};

/// Anonymous shared memory that the forked ranks write and the parent reads.
class SharedPage {
 public:
  SharedPage() {
    void* p = ::mmap(nullptr, sizeof(SharedResults), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) results_ = static_cast<SharedResults*>(p);
  }
  SharedPage(const SharedPage&) = delete;
  SharedPage& operator=(const SharedPage&) = delete;
  ~SharedPage() {
    if (results_) ::munmap(results_, sizeof(SharedResults));
  }
  [[nodiscard]] SharedResults* get() const { return results_; }

 private:
  SharedResults* results_ = nullptr;
};

/// The progress display on stderr: a bar redrawn in place on a terminal, lines otherwise.
class Progress {
 public:
  Progress(bool on, int total) : on_(on), total_(total), tty_(::isatty(2) == 1) {}
  void show(int done, const std::string& what) const {
    if (!on_) return;
    constexpr int width = 30;
    const int filled = total_ > 0 ? std::min(width, done * width / total_) : width;
    const std::string bar = std::string(static_cast<std::size_t>(filled), '#') +
                            std::string(static_cast<std::size_t>(width - filled), '.');
    if (tty_) {
      fmt::print(stderr, "\rcalibrate [{}] {:3}/{} {:<40.40}", bar, done, total_, what);
    } else {
      fmt::print(stderr, "calibrate [{}] {}/{} {}\n", bar, done, total_, what);
    }
    std::fflush(stderr);
  }
  void finish() const {
    if (on_ && tty_) fmt::print(stderr, "\n");
  }

 private:
  bool on_;
  int total_;
  bool tty_;
};

std::string shape_text(const ComputeShape& s) {
  std::string t = s.kernel + " ";
  for (std::size_t i = 0; i < s.tile.size(); ++i) t += (i ? "x" : "") + std::to_string(s.tile[i]);
  return t;
}

/// The probes of one rank: one slab per (kernel, cross-section, direction), shared by heights.
class ComputeProbes {
 public:
  ComputeProbes(const std::vector<ComputeShape>& shapes, std::int64_t slab_points) {
    for (const auto& s : shapes) {
      std::vector<std::int64_t> cross = s.tile;
      cross[static_cast<std::size_t>(s.along)] = 1;
      std::size_t g = 0;
      while (g < groups_.size() && !(groups_[g].kernel == s.kernel && groups_[g].cross == cross &&
                                     groups_[g].along == s.along)) {
        ++g;
      }
      if (g == groups_.size()) groups_.push_back(Group{s.kernel, cross, s.along, 1, {}});
      auto& grp = groups_[g];
      grp.max_height = std::max(grp.max_height, s.tile[static_cast<std::size_t>(s.along)]);
      shape_group_.push_back(g);
    }
    for (auto& grp : groups_) {
      switch (grp.cross.size()) {
        case 2:
          grp.pass = make_pass<2>(grp, slab_points);
          break;
        case 3:
          grp.pass = make_pass<3>(grp, slab_points);
          break;
        default:
          grp.pass = make_pass<4>(grp, slab_points);
          break;
      }
    }
  }
  /// One timed pass of shape i: seconds per point.
  double pass(std::size_t i, const ComputeShape& s) {
    return groups_[shape_group_[i]].pass(s.tile[static_cast<std::size_t>(s.along)]);
  }

 private:
  struct Group {
    std::string kernel;
    std::vector<std::int64_t> cross;
    int along = 0;
    std::int64_t max_height = 1;
    std::function<double(std::int64_t)> pass;
  };
  template <int D>
  static std::function<double(std::int64_t)> make_pass(const Group& grp, std::int64_t slab_points) {
    exec::Point<D> cross{};
    for (int d = 0; d < D; ++d) cross[d] = grp.cross[static_cast<std::size_t>(d)];
    using Probe = exec::TileCostProbe<kernels::Wave<D>>;
    const auto n = Probe::slab_size(cross, grp.along, grp.max_height, slab_points);
    auto kernel = kernels::Wave<D>::make(n);
    TP_ASSERT(kernel.has_value());
    auto probe = std::make_shared<Probe>(*kernel, n, grp.along);
    return [probe](std::int64_t z) { return probe->pass(z); };
  }
  std::vector<Group> groups_;
  std::vector<std::size_t> shape_group_;
};

std::int64_t tile_points(const ComputeShape& shape) {
  std::int64_t g = 1;
  for (auto w : shape.tile) g *= w;
  return g;
}

/// This rank's compute probes (every rank of `world` at once, in step by barriers): per shape the
/// median over spec.passes passes (interleaved over the shapes) of the seconds per point.
Expected<std::vector<double>> measure_compute(comm::World& world, const CalibrateSpec& spec,
                                              const Progress& progress) {
  const int n_shapes = static_cast<int>(spec.shapes.size());
  if (world.rank() == 0) progress.show(0, "compute probes: filling the slabs");
  ComputeProbes probes(spec.shapes, spec.slab_points);
  std::vector<std::vector<double>> per_point(static_cast<std::size_t>(n_shapes));
  for (int pass = 0; pass < spec.passes; ++pass) {
    for (int i = 0; i < n_shapes; ++i) {
      TP_TRY(world.barrier());
      const auto& shape = spec.shapes[static_cast<std::size_t>(i)];
      if (world.rank() == 0) {
        progress.show((pass * n_shapes + i) / spec.passes,
                      fmt::format("compute {} (pass {})", shape_text(shape), pass + 1));
      }
      per_point[static_cast<std::size_t>(i)].push_back(
          probes.pass(static_cast<std::size_t>(i), shape));
    }
  }
  std::vector<double> out;
  for (auto& v : per_point) out.push_back(model::median(v));
  return out;
}

Status check_spec(const CalibrateSpec& spec, const char* transport) {
  if (spec.transport != transport) {
    return fail(Errc::invalid_argument,
                "--transport " + spec.transport + ": this calibration measures " + transport);
  }
  if (spec.shapes.empty() || spec.shapes.size() > static_cast<std::size_t>(max_shapes)) {
    return fail(Errc::invalid_argument, "calibration needs 1 to " + std::to_string(max_shapes) +
                                            " tile shapes, not " +
                                            std::to_string(spec.shapes.size()));
  }
  for (const auto& s : spec.shapes) {
    const bool known = (s.kernel == "wave2d" && s.tile.size() == 2) ||
                       (s.kernel == "wave3d" && s.tile.size() == 3) ||
                       (s.kernel == "wave4d" && s.tile.size() == 4);
    if (!known || s.along < 0 || s.along >= static_cast<int>(s.tile.size()) ||
        std::any_of(s.tile.begin(), s.tile.end(), [](std::int64_t w) { return w < 1; })) {
      return fail(Errc::invalid_argument, "calibration shape '" + shape_text(s) + "' is invalid");
    }
  }
  if (spec.sizes.size() < 2 || spec.sizes.size() > static_cast<std::size_t>(max_sizes)) {
    return fail(Errc::invalid_argument, "calibration needs 2 to 32 message sizes");
  }
  if (spec.compute_ranks < 1 || spec.compute_ranks > max_ranks) {
    return fail(Errc::invalid_argument, "calibration runs 1 to 16 compute ranks");
  }
  return {};
}

/// What the probes measured, on the rank that fits (rank 0).
struct RawCalibration {
  std::vector<double> t_comp1_s;          ///< per shape: seconds per point, mean over ranks
  std::vector<std::int64_t> tile_points;  ///< per shape
  std::vector<double> one_way_s;          ///< per spec.sizes entry
  std::vector<double> isend_s;            ///< per spec.sizes entry
  std::array<double, 3> notify_s{-1, -1,
                                 -1};  ///< by SyncMode (poll, block, hybrid); < 0: not measured
  double t_sync_in_s = 0;
  int compute_ranks = 1;
};

/// The machine file fitted to `raw`.
Expected<model::Machine> fit_machine(const CalibrateSpec& spec, const RawCalibration& raw) {
  model::Machine m;
  const auto host = model::this_host();
  m.name = host.hostname + "-" + spec.transport;
  m.host_bound = true;
  m.hostname = host.hostname;
  m.cpu_model = host.cpu_model;
  m.transport = spec.transport;
  m.emulated_link = comm::to_string(spec.link);
  if (spec.link.enabled) m.name += "-link";
  m.source = fmt::format(
      "tilepipe calibrate: {} tile shapes on {} concurrent ranks ({} points streamed, median of "
      "{} passes); ping-pong of {} sizes between 2 ranks (median of up to {} round trips)",
      spec.shapes.size(), raw.compute_ranks, spec.slab_points, spec.passes, spec.sizes.size(),
      spec.round_trips);
  std::map<std::string, std::vector<model::ComputeSample>> by_kernel;
  for (std::size_t i = 0; i < spec.shapes.size(); ++i) {
    by_kernel[spec.shapes[i].kernel].push_back(
        {raw.tile_points[i], model::Seconds{raw.t_comp1_s[i]}});
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
  m.send_mode = model::SendMode::serial;
  nlohmann::json notes;
  // Modes not measured (over MPI only the runs' mode is: the mode is a World setting) are null.
  const auto us = [](double s) { return s >= 0 ? nlohmann::json(s * 1e6) : nlohmann::json(); };
  notes["notify_us"] = {{"poll", us(raw.notify_s[0])},
                        {"block", us(raw.notify_s[1])},
                        {"hybrid", us(raw.notify_s[2])}};
  notes["t_sync_mode"] = std::string(comm::to_string(spec.sync));
  notes["messages"] = one_way;
  notes["compute_ranks"] = raw.compute_ranks;
  m.notes = notes.dump();
  return m;
}

}  // namespace

std::vector<ComputeShape> default_shapes(bool quick) {
  std::vector<ComputeShape> out;
  const std::vector<std::int64_t> heights =
      quick ? std::vector<std::int64_t>{64, 1024, 16384}
            : std::vector<std::int64_t>{64, 256, 1024, 4096, 16384, 65536};
  for (auto z : heights) out.push_back({"wave3d", {12, 6, z}, 2});
  for (auto z : heights) {
    if (z <= 16384) out.push_back({"wave2d", {512, z}, 1});
  }
  for (auto z : heights) {
    if (z <= 4096) out.push_back({"wave4d", {6, 6, 6, z}, 3});
  }
  return out;
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

Expected<std::vector<std::int64_t>> parse_height_list(const std::string& text, std::int64_t extent,
                                                      const std::string& flag) {
  constexpr std::size_t max_heights = 64;
  std::vector<std::int64_t> out;
  const auto check = [&](std::int64_t z) -> Status {
    if (z < 1) {
      return fail(Errc::invalid_argument,
                  flag + ": tile height " + std::to_string(z) + " must be >= 1");
    }
    if (z > extent) {
      return fail(Errc::invalid_argument, flag + ": tile height " + std::to_string(z) +
                                              " exceeds the extent " + std::to_string(extent) +
                                              " of the mapping dimension");
    }
    return {};
  };
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    auto a = parse_int(std::string_view(text).substr(0, colon), flag);
    if (!a) return Unexpected{a.error()};
    auto b = parse_int(std::string_view(text).substr(colon + 1), flag);
    if (!b) return Unexpected{b.error()};
    if (*a > *b) {
      return fail(Errc::invalid_argument, flag + ": the range " + text + " is empty (" +
                                              std::to_string(*a) + " > " + std::to_string(*b) +
                                              ")");
    }
    TP_TRY(check(*a));
    TP_TRY(check(*b));
    for (std::int64_t z = *a; z <= *b && out.size() <= max_heights; z *= 2) {
      out.push_back(z);
      if (z > *b / 2) break;
    }
    if (out.back() != *b) out.push_back(*b);
  } else {
    for (auto part : split(text, ',')) {
      auto z = parse_int(trim(part), flag);
      if (!z) return Unexpected{z.error()};
      TP_TRY(check(*z));
      out.push_back(*z);
      if (out.size() > max_heights) break;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  if (out.size() > max_heights) {
    return fail(Errc::invalid_argument, flag + ": more than " + std::to_string(max_heights) +
                                            " tile heights in '" + text + "'");
  }
  return out;
}

std::string default_machine_path(const std::string& transport) {
  if (const char* e = std::getenv("TILEPIPE_MACHINE"); e != nullptr && *e != '\0') return e;
  const std::string file = "/tilepipe/machine-" + transport + ".json";
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x != nullptr && *x != '\0') {
    return std::string(x) + file;
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return std::string(h) + "/.config" + file;
  }
  return "";
}

std::string default_machine_path(const std::string& transport, const comm::Link& link) {
  return default_machine_path(link.enabled ? transport + "-link" : transport);
}

Expected<model::Machine> calibrate_machine(const CalibrateSpec& spec) {
  TP_TRY(check_spec(spec, "shm"));
  SharedPage page;
  SharedResults* res = page.get();
  if (res == nullptr) return fail(Errc::system, "cannot map memory for the calibration results");
  const int n_shapes = static_cast<int>(spec.shapes.size());
  const int total = n_shapes + 4;
  const Progress progress(spec.progress, total);
  progress.show(0, "compute probes");

  // 1. Compute: every rank measures every shape at the same time (they share caches and memory
  //    bandwidth as the ranks of a run do); a barrier keeps them in step.
  comm::Config config;
  config.sync = comm::SyncMode::block;  // waiting ranks must not steal the measuring ones' cores
  auto launched = comm::launch_local(spec.compute_ranks, config, [&](comm::World& world) -> int {
    auto medians = measure_compute(world, spec, progress);
    if (!medians) return 1;
    for (int i = 0; i < n_shapes; ++i) {
      res->t_comp1_s[world.rank()][i] = (*medians)[static_cast<std::size_t>(i)];
      res->tile_points[i] = tile_points(spec.shapes[static_cast<std::size_t>(i)]);
    }
    return world.barrier() ? 0 : 1;
  });
  if (!launched) return Unexpected{launched.error()};
  if (launched->status() != 0) return fail(Errc::system, "a compute probe rank failed");

  // 2. Communication between two ranks in the sync mode of the runs, then the other modes'
  //    notification latency.
  std::array<double, 3> notify{};
  const std::array<comm::SyncMode, 3> modes{spec.sync, comm::SyncMode::poll, comm::SyncMode::block};
  std::array<double, 3> by_mode{};  // poll, block, hybrid
  for (std::size_t m = 0; m < modes.size(); ++m) {
    if (m > 0 && modes[m] == spec.sync) {
      notify[m] = notify[0];
      continue;
    }
    progress.show(n_shapes + static_cast<int>(m),
                  fmt::format("communication, sync {}", comm::to_string(modes[m])));
    comm::Config cc;
    cc.sync = modes[m];
    cc.link = spec.link;
    exec::CommProbeOptions popt;
    if (m == 0) popt.sizes = spec.sizes;
    popt.round_trips = spec.round_trips;
    auto comm_run = comm::launch_local(2, cc, [&](comm::World& world) -> int {
      // Two spinning ranks on one core measure the spin budget, not the notification.
      pin_to_core(world.rank());
      auto r = exec::probe_comm(world, popt);
      if (!r) {
        (void)report_error(r.error().on_rank(world.rank()));
        return 1;
      }
      if (world.rank() == 0) {
        for (std::size_t i = 0; i < r->one_way_s.size(); ++i) {
          res->one_way_s[i] = r->one_way_s[i].second;
          res->isend_s[i] = r->isend_s[i].second;
        }
        res->notify_s = r->notify_s;
      }
      return 0;
    });
    if (!comm_run) return Unexpected{comm_run.error()};
    if (comm_run->status() != 0) return fail(Errc::system, "a communication probe rank failed");
    notify[m] = res->notify_s;
  }
  for (std::size_t m = 0; m < modes.size(); ++m) {
    by_mode[static_cast<std::size_t>(modes[m])] = notify[m];
  }

  // 3. The threads of one node: one barrier round.
  progress.show(n_shapes + 3, "node synchronization (t_sync_in)");
  const double t_sync_in = exec::measure_thread_sync_s(2);
  progress.show(total, "done");
  progress.finish();

  RawCalibration raw;
  raw.compute_ranks = spec.compute_ranks;
  for (int i = 0; i < n_shapes; ++i) {
    double sum = 0;
    for (int r = 0; r < spec.compute_ranks; ++r) sum += res->t_comp1_s[r][i];
    raw.t_comp1_s.push_back(sum / spec.compute_ranks);
    raw.tile_points.push_back(res->tile_points[i]);
  }
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) {
    raw.one_way_s.push_back(res->one_way_s[i]);
    raw.isend_s.push_back(res->isend_s[i]);
  }
  for (std::size_t m = 0; m < 3; ++m) raw.notify_s[m] = by_mode[m];
  raw.t_sync_in_s = t_sync_in;
  return fit_machine(spec, raw);
}

Expected<std::optional<model::Machine>> calibrate_machine_mpi(const CalibrateSpec& spec) {
  TP_TRY(check_spec(spec, "mpi"));
  if (spec.link.enabled) {
    return fail(Errc::invalid_argument,
                "--link: the link is emulated between ranks of one host; calibrate it with "
                "--transport shm");
  }
  comm::Config config;
  config.transport = comm::TransportKind::mpi;
  config.sync = spec.sync;
  auto world = comm::World::from_mpi(config);
  if (!world) return Unexpected{world.error()};
  if (world->size() < 2) {
    return fail(Errc::invalid_argument,
                "--transport mpi: calibration needs at least 2 ranks (mpirun -np 2 tilepipe "
                "calibrate --transport mpi)");
  }
  const int n_shapes = static_cast<int>(spec.shapes.size());
  const Progress progress(spec.progress && world->rank() == 0, n_shapes + 2);

  // 1. Compute: every rank of the job measures every shape at the same time.
  auto medians = measure_compute(*world, spec, progress);
  if (!medians) return Unexpected{medians.error()};
  RawCalibration raw;
  raw.compute_ranks = world->size();
  raw.t_comp1_s.assign(static_cast<std::size_t>(n_shapes), 0.0);
  constexpr int tag_compute = 1;
  if (world->rank() == 0) {
    std::vector<double> theirs(static_cast<std::size_t>(n_shapes));
    for (int r = 0; r < world->size(); ++r) {
      if (r > 0) {
        auto got = world->recv(r, tag_compute, std::as_writable_bytes(std::span(theirs)));
        if (!got) return Unexpected{got.error()};
      }
      const auto& v = r == 0 ? *medians : theirs;
      for (int i = 0; i < n_shapes; ++i) {
        raw.t_comp1_s[static_cast<std::size_t>(i)] +=
            v[static_cast<std::size_t>(i)] / world->size();
      }
    }
  } else {
    TP_TRY(world->send(0, tag_compute, std::as_bytes(std::span(*medians))));
  }
  for (const auto& shape : spec.shapes) raw.tile_points.push_back(tile_points(shape));

  // 2. Communication between ranks 0 and 1 over MPI, in the runs' sync mode only (the mode is a
  //    World setting, and MPI is initialised once per process).
  progress.show(n_shapes,
                fmt::format("communication over MPI, sync {}", comm::to_string(spec.sync)));
  exec::CommProbeOptions popt;
  popt.sizes = spec.sizes;
  popt.round_trips = spec.round_trips;
  auto comm_probe = exec::probe_comm(*world, popt);
  if (!comm_probe) return Unexpected{comm_probe.error()};
  TP_TRY(world->barrier());
  if (world->rank() != 0) return std::optional<model::Machine>{};

  // 3. The threads of one node.
  progress.show(n_shapes + 1, "node synchronization (t_sync_in)");
  raw.t_sync_in_s = exec::measure_thread_sync_s(2);
  progress.show(n_shapes + 2, "done");
  progress.finish();
  for (std::size_t i = 0; i < comm_probe->one_way_s.size(); ++i) {
    raw.one_way_s.push_back(comm_probe->one_way_s[i].second);
    raw.isend_s.push_back(comm_probe->isend_s[i].second);
  }
  raw.notify_s[static_cast<std::size_t>(spec.sync)] = comm_probe->notify_s;
  auto m = fit_machine(spec, raw);
  if (!m) return Unexpected{m.error()};
  return std::optional<model::Machine>{std::move(*m)};
}

}  // namespace tp::app
