// runtime::calibrate on forked ranks with probes the test controls: what the probes measure is
// what the machine file holds, every shape is measured on every rank, and a spec or probe that
// cannot work ends the calibration with its error before any fit.
#include <tilepipe/runtime/calibrate.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace tp::runtime {
namespace {

/// A probe whose cost per point is `base` + 1 us / height (the overhead of a tile spread over
/// its points), known in advance.
CalibrateSpec fake_spec(double base) {
  CalibrateSpec spec;
  spec.shapes = {{"fake", {4, 64}, 1}, {"fake", {4, 1024}, 1}, {"fake", {4, 16384}, 1}};
  spec.probes = [base](const ComputeShape& shape, std::int64_t max_height,
                       std::int64_t) -> Expected<TileCostPass> {
    if (shape.kernel != "fake" || max_height != 16384 || shape.tile[1] != 1) {
      return fail(Errc::invalid_argument, "unexpected probe request");
    }
    return TileCostPass([base](std::int64_t z) { return base + 1e-6 / static_cast<double>(z); });
  };
  spec.passes = 2;
  spec.compute_ranks = 2;
  spec.round_trips = 5;
  spec.sizes = {64, 1 << 18, 1 << 21};  // far apart: the fit holds on a loaded machine
  spec.copy_region = std::size_t{4} << 20;
  return spec;
}

TEST(Calibrate, the_machine_holds_what_the_probes_measured) {
  const double base = 3e-9;
  auto m = calibrate(fake_spec(base));
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->has_value());
  const model::Machine& machine = **m;
  EXPECT_EQ(machine.transport, "shm");
  ASSERT_EQ(machine.kernels.count("fake"), 1u);
  const auto& samples = machine.kernels.at("fake").samples;
  ASSERT_EQ(samples.size(), 3u);
  for (const auto& s : samples) {
    const double z = static_cast<double>(s.tile_points) / 4.0;
    EXPECT_NEAR(s.t_comp1.count(), base + 1e-6 / z, 1e-15) << s.tile_points;
  }
  EXPECT_GT(machine.link.bandwidth_bytes_per_s, 0.0);
  EXPECT_GE(machine.t_sync.count(), 0.0);
  // The copy probe's rate is the CPU's copy of a face, and bounds the link's bandwidth.
  const auto notes = nlohmann::json::parse(machine.notes);
  ASSERT_TRUE(notes.contains("copy_probe"));
  EXPECT_EQ(notes["copy_probe"]["block_bytes"].get<std::size_t>(), std::size_t{256} << 10);
  EXPECT_EQ(notes["copy_probe"]["region_bytes"].get<std::size_t>(), std::size_t{4} << 20);
  const double copy = notes["copy_probe"]["bytes_per_s"].get<double>();
  EXPECT_GT(copy, 1e8);
  EXPECT_DOUBLE_EQ(machine.cpu_copy_bytes_per_s, copy);
  EXPECT_LE(machine.link.bandwidth_bytes_per_s, copy);
}

TEST(Calibrate, time_a_probe_waits_for_its_core_is_not_counted_as_computation) {
  // A probe that sleeps stands for one preempted by another process: its wall time passes, its
  // CPU time does not. The machine file keeps the CPU time (docs/model.md, "Calibrating on a
  // busy machine") and says what share of a core the probes had.
  constexpr std::int64_t points = 4 * 1024;
  constexpr double sleep_s = 0.005;
  CalibrateSpec spec = fake_spec(0);
  spec.shapes = {{"fake", {4, 1024}, 1}};
  spec.probes = [=](const ComputeShape&, std::int64_t, std::int64_t) -> Expected<TileCostPass> {
    return TileCostPass([=](std::int64_t) {
      const auto a = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
      return wall / static_cast<double>(points);
    });
  };
  auto m = calibrate(spec);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->has_value());
  const auto& samples = (*m)->kernels.at("fake").samples;
  ASSERT_EQ(samples.size(), 1u);
  const double wall_per_point = sleep_s / static_cast<double>(points);
  EXPECT_LT(samples[0].t_comp1.count(), 0.5 * wall_per_point);
  const auto notes = nlohmann::json::parse((*m)->notes);
  ASSERT_TRUE(notes.contains("compute_cpu_share"));
  EXPECT_GE(notes["compute_cpu_share"].get<double>(), 0.0);
  EXPECT_LT(notes["compute_cpu_share"].get<double>(), 0.5);
}

TEST(Calibrate, progress_reaches_the_end_on_rank_zero_only) {
  CalibrateSpec spec = fake_spec(1e-9);
  // Stages reported by the forked rank 0 land in its copy of the counters; the parent's stages
  // (communication, synchronization, done) land here.
  std::atomic<int> last{-1};
  int total = 0;
  spec.progress = [&](int done, int of, std::string_view) {
    EXPECT_GE(done, last.load());
    last = done;
    total = of;
  };
  auto m = calibrate(spec);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(last.load(), total);
  EXPECT_EQ(total, 3 + 4);
}

TEST(Calibrate, a_probe_that_cannot_measure_ends_it_with_its_error) {
  CalibrateSpec spec = fake_spec(1e-9);
  spec.shapes[0].kernel = "unknown";
  auto m = calibrate(spec);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("unexpected probe request"), std::string::npos);
  EXPECT_GE(m.error().rank, 0);
}

TEST(Calibrate, a_spec_that_cannot_work_is_refused_before_any_rank_starts) {
  CalibrateSpec spec = fake_spec(1e-9);
  spec.probes = nullptr;
  EXPECT_FALSE(calibrate(spec));
  spec = fake_spec(1e-9);
  spec.shapes.push_back({"fake", {4, 0}, 1});
  auto bad_shape = calibrate(spec);
  ASSERT_FALSE(bad_shape);
  EXPECT_NE(bad_shape.error().message.find("fake 4x0"), std::string::npos);
  spec = fake_spec(1e-9);
  spec.sizes = {64};
  EXPECT_FALSE(calibrate(spec));
  spec = fake_spec(1e-9);
  spec.launch = LaunchMode::automatic;
  EXPECT_FALSE(calibrate(spec));
  spec = fake_spec(1e-9);
  spec.launch = LaunchMode::mpi;  // not started by mpirun
  auto mpi = calibrate(spec);
  ASSERT_FALSE(mpi);
  EXPECT_TRUE(mpi.error().is_user_error());
}

TEST(Calibrate, default_machine_path_follows_the_environment) {
  ::setenv("TILEPIPE_MACHINE", "/x/m.json", 1);
  EXPECT_EQ(default_machine_path("shm"), "/x/m.json");
  ::unsetenv("TILEPIPE_MACHINE");
  ::setenv("XDG_CONFIG_HOME", "/cfg", 1);
  EXPECT_EQ(default_machine_path("shm"), "/cfg/tilepipe/machine-shm.json");
  comm::Link link;
  link.enabled = true;
  EXPECT_EQ(default_machine_path("mpi", link), "/cfg/tilepipe/machine-mpi-link.json");
  ::unsetenv("XDG_CONFIG_HOME");
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_machine_path("shm"), "/home/u/.config/tilepipe/machine-shm.json");
}

TEST(Calibrate, the_choice_probes_the_smallest_legal_height_and_every_fourth_power_above_it) {
  plan::PlanRequest base;
  base.size = {64, 64, 1024};
  base.nodes = 2;
  base.map_dim = 3;
  base.deps = plan::DependenceMatrix::unit(3);  // z0 = 2 along dimension 3
  auto h = choice_probe_heights(base, {256, 128, 128});
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(*h, (std::vector<std::int64_t>{2, 8, 32, 128, 256}));
  h = choice_probe_heights(base, {2, 64});  // nothing below the smallest swept height
  ASSERT_TRUE(h);
  EXPECT_EQ(*h, (std::vector<std::int64_t>{2, 64}));
  base.deps = *plan::DependenceMatrix::make(3, {{0, 0, 3}, {1, 0, 0}});  // (0,0,3), (1,0,0): z0 = 4
  h = choice_probe_heights(base, {100});
  ASSERT_TRUE(h);
  EXPECT_EQ(*h, (std::vector<std::int64_t>{4, 16, 64, 100}));
  base.map_dim = 0;
  EXPECT_FALSE(choice_probe_heights(base, {100}));
}

}  // namespace
}  // namespace tp::runtime
