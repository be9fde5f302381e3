// The rank pipeline against the sequential reference: every scheme x grouping x nodes x CPUs x
// dimensions x face mode (copied, direct), with extents that do not divide the tiles, gives the
// reference checksum bit for bit.
#include <tilepipe/comm/launch.hpp>
#include <tilepipe/exec/gather.hpp>
#include <tilepipe/exec/pipeline.hpp>
#include <tilepipe/kernels/wave.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>

namespace {

using tp::plan::GroupingKind;
using tp::plan::ScheduleKind;

struct Case {
  std::vector<std::int64_t> size;
  std::int64_t height;
  int nodes;
  int cpus;
  ScheduleKind schedule;
  GroupingKind grouping;
  tp::exec::FaceMode faces = tp::exec::FaceMode::copy;
};

std::string describe(const Case& c) {
  std::string s = "size ";
  for (std::size_t d = 0; d < c.size.size(); ++d) s += (d ? "x" : "") + std::to_string(c.size[d]);
  return s + " height " + std::to_string(c.height) + " nodes " + std::to_string(c.nodes) +
         " cpus " + std::to_string(c.cpus) + " " + std::string(to_string(c.schedule)) + " " +
         std::string(to_string(c.grouping)) + " faces " + std::string(to_string(c.faces));
}

template <int D>
int run_case(const Case& c, std::uint64_t expected) {
  tp::plan::PlanRequest req;
  req.size = c.size;
  req.deps = tp::plan::DependenceMatrix::unit(D);
  req.tile_height = c.height;
  req.nodes = c.nodes;
  req.cpus = c.cpus;
  req.schedule = c.schedule;
  req.grouping = c.grouping;
  auto plan = tp::plan::Plan::make(req);
  if (!plan) {
    ADD_FAILURE() << plan.error().message;
    return 1;
  }
  tp::exec::Point<D> n{};
  for (int d = 0; d < D; ++d) n[d] = c.size[static_cast<std::size_t>(d)];
  const auto kernel = *tp::kernels::Wave<D>::make(n);
  tp::comm::Config config;
  config.sync = tp::comm::SyncMode::block;
  tp::exec::PipelineOptions options;
  options.faces = c.faces;
  auto launched = tp::comm::launch_local(c.nodes, config, [&](tp::comm::World& world) {
    auto outcome = tp::exec::run_rank(kernel, *plan, world, options);
    if (!outcome) {
      std::fprintf(stderr, "rank %d: %s\n", world.rank(), outcome.error().message.c_str());
      return 3;
    }
    auto total = tp::exec::gather_outcomes<tp::kernels::Wave<D>>(world, *outcome);
    if (!total) return 4;
    if (world.rank() != 0) return 0;
    // Direct faces ran wherever there are neighbours (every rank is on shared memory here).
    const bool direct = c.faces == tp::exec::FaceMode::direct && c.nodes > 1;
    for (const auto& r : (*total)->summary.ranks) {
      if (r.direct_faces != direct) return 7;
    }
    if ((*total)->result != expected) {
      std::fprintf(stderr, "checksum %016llx, expected %016llx\n",
                   static_cast<unsigned long long>((*total)->result),
                   static_cast<unsigned long long>(expected));
      return 5;
    }
    std::int64_t points = 0;
    for (const auto& r : (*total)->summary.ranks) points += r.points;
    return points == plan->space().points() ? 0 : 6;
  });
  if (!launched) {
    ADD_FAILURE() << launched.error().message;
    return 1;
  }
  return launched->status();
}

int run_any(const Case& c) {
  const auto reference = tp::kernels::wave_reference(c.size);
  const auto expected = tp::kernels::wave_reference_checksum(reference, c.size);
  switch (c.size.size()) {
    case 2:
      return run_case<2>(c, expected);
    case 3:
      return run_case<3>(c, expected);
    default:
      return run_case<4>(c, expected);
  }
}

TEST(Pipeline, every_scheme_matches_the_sequential_reference) {
  const std::vector<std::vector<std::int64_t>> sizes = {{23, 37}, {9, 11, 29}, {6, 7, 5, 13}};
  int ran = 0;
  for (const auto& size : sizes) {
    for (int nodes = 1; nodes <= 4; ++nodes) {
      for (int cpus = 1; cpus <= 2; ++cpus) {
        for (auto s : {ScheduleKind::blocking, ScheduleKind::overlap}) {
          for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
            for (auto faces : {tp::exec::FaceMode::copy, tp::exec::FaceMode::direct}) {
              const Case c{size, 4, nodes, cpus, s, g, faces};
              SCOPED_TRACE(describe(c));
              tp::plan::PlanRequest probe;
              probe.size = size;
              probe.deps = tp::plan::DependenceMatrix::unit(static_cast<int>(size.size()));
              probe.tile_height = c.height;
              probe.nodes = nodes;
              probe.cpus = cpus;
              if (!tp::plan::Plan::make(probe)) continue;  // no legal mesh for these extents
              EXPECT_EQ(run_any(c), 0);
              ++ran;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(ran, 120);
}

// A wave kernel whose rank dies (SIGKILL) in the middle of the run, on a tile past `die_from`
// along the last dimension.
bool g_die_here = false;
struct DyingWave : tp::kernels::Wave<2> {
  explicit DyingWave(tp::kernels::Wave<2> base) : tp::kernels::Wave<2>(std::move(base)) {}
  void compute_tile(const tp::exec::Box<2>& box, const tp::exec::SlabView<float, 2>& slab) const {
    if (g_die_here && box.lo[1] > 2000) std::raise(SIGKILL);
    tp::kernels::Wave<2>::compute_tile(box, slab);
  }
};

TEST(Pipeline, a_rank_killed_mid_run_ends_its_neighbours_waits_with_an_error) {
  for (auto faces : {tp::exec::FaceMode::copy, tp::exec::FaceMode::direct}) {
    SCOPED_TRACE(std::string(to_string(faces)));
    tp::plan::PlanRequest req;
    req.size = {64, 4000};
    req.deps = tp::plan::DependenceMatrix::unit(2);
    req.tile_height = 50;
    req.nodes = 3;
    req.cpus = 1;
    auto plan = tp::plan::Plan::make(req);
    ASSERT_TRUE(plan.has_value()) << plan.error().message;
    ASSERT_EQ(plan->map_dim(), 1);
    const DyingWave kernel(*tp::kernels::Wave<2>::make({64, 4000}));
    tp::comm::Config config;
    config.sync = tp::comm::SyncMode::block;
    config.peer_timeout = std::chrono::seconds(2);
    tp::exec::PipelineOptions options;
    options.faces = faces;
    const auto start = std::chrono::steady_clock::now();
    tp::comm::LaunchOptions keep_running;  // rank 2 must notice the death itself
    keep_running.stop_on_failure = false;
    auto launched = tp::comm::launch_local(
        3, config,
        [&](tp::comm::World& world) {
          g_die_here = world.rank() == 1;
          auto outcome = tp::exec::run_rank(kernel, *plan, world, options);
          if (outcome) return 0;
          std::fprintf(stderr, "rank %d: %s\n", world.rank(), outcome.error().message.c_str());
          return outcome.error().code == tp::Errc::peer_lost ? 3 : 4;
        },
        keep_running);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(launched.has_value()) << launched.error().message;
    EXPECT_EQ(launched->term_signals[1], SIGKILL);
    // Rank 2 consumes rank 1's faces: its wait fails (peer_lost) instead of hanging.
    EXPECT_EQ(launched->exit_codes[2], 3);
    EXPECT_LT(elapsed, 30.0);
  }
}

}  // namespace
