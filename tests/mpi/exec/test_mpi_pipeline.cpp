// The rank pipelines under mpirun (2-3 ranks, shm among the job's ranks or the MPI transport):
// resident (wave2d/3d; both schedules and groupings, 1-2 CPUs, copied and automatic faces, the
// communication thread) and frontier (Smith-Waterman, hyperplane and vertical) kernels give the
// sequential reference's result bit for bit. Every rank runs every case collectively.
#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/gather.hpp>
#include <tilepipe/exec/pipeline.hpp>
#include <tilepipe/exec/pipeline_frontier.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/wave.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

namespace {

using tp::plan::GroupingKind;
using tp::plan::ScheduleKind;

tp::comm::World* g_world = nullptr;

// The plan for `size` on every rank of the job, or nullopt when no mesh fits (the same answer on
// every rank, so all skip the case together).
std::optional<tp::plan::Plan> plan_for(const std::vector<std::int64_t>& size,
                                       tp::plan::DependenceMatrix deps, std::int64_t height,
                                       int cpus, ScheduleKind s, GroupingKind g, int map_dim = 0) {
  tp::plan::PlanRequest req;
  req.size = size;
  req.deps = std::move(deps);
  req.tile_height = height;
  req.nodes = g_world->size();
  req.cpus = cpus;
  req.schedule = s;
  req.grouping = g;
  req.map_dim = map_dim;
  auto plan = tp::plan::Plan::make(req);
  if (!plan) return std::nullopt;
  return std::move(*plan);
}

template <int D>
void check_wave(const std::vector<std::int64_t>& size, int& ran) {
  const auto expected =
      tp::kernels::wave_reference_checksum(tp::kernels::wave_reference(size), size);
  tp::exec::Point<D> n{};
  for (int d = 0; d < D; ++d) n[d] = size[static_cast<std::size_t>(d)];
  const auto kernel = *tp::kernels::Wave<D>::make(n);
  for (int cpus = 1; cpus <= 2; ++cpus) {
    for (auto s : {ScheduleKind::blocking, ScheduleKind::overlap}) {
      for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
        for (int variant = 0; variant < 3; ++variant) {
          // 0: copied faces, 1: automatic faces, 2: the communication thread (hyperplane only).
          if (variant == 2 && g == GroupingKind::vertical) continue;
          auto plan = plan_for(size, tp::plan::DependenceMatrix::unit(D), 5, cpus, s, g);
          if (!plan) continue;
          SCOPED_TRACE("cpus " + std::to_string(cpus) + " " + std::string(to_string(s)) + " " +
                       std::string(to_string(g)) + " variant " + std::to_string(variant));
          tp::exec::PipelineOptions options;
          options.faces = variant == 0 ? tp::exec::FaceMode::copy : tp::exec::FaceMode::automatic;
          options.comm_thread = variant == 2;
          auto outcome = tp::exec::run_rank(kernel, *plan, *g_world, options);
          ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
          auto total = tp::exec::gather_outcomes<tp::kernels::Wave<D>>(*g_world, *outcome);
          ASSERT_TRUE(total.has_value()) << total.error().message;
          if (g_world->rank() == 0) {
            ASSERT_TRUE(total->has_value());
            EXPECT_EQ((*total)->result, expected);
            std::int64_t points = 0;
            for (const auto& r : (*total)->summary.ranks) points += r.points;
            EXPECT_EQ(points, plan->space().points());
          }
          ++ran;
        }
      }
    }
  }
}

TEST(MpiPipeline, resident_kernels_match_the_sequential_reference) {
  int ran = 0;
  check_wave<2>({37, 53}, ran);
  check_wave<3>({9, 11, 29}, ran);
  EXPECT_GE(ran, 20);
}

TEST(MpiPipeline, smith_waterman_matches_the_sequential_dp) {
  std::mt19937_64 rng(20261124);  // the same pair on every rank
  const std::string letters = "ARNDCQEGHILKMFPSTWYV";
  std::string q, t;
  for (int i = 0; i < 150; ++i) q += letters[rng() % letters.size()];
  for (int i = 0; i < 230; ++i) t += letters[rng() % letters.size()];
  const auto& m = tp::kernels::ScoreMatrix::blosum62();
  const auto qe = *m.encode(q, "query");
  const auto te = *m.encode(t, "target");
  const tp::kernels::GapCosts gaps{10, 1};
  const auto expected = tp::kernels::sw_sequential(m, qe, te, gaps);
  const auto kernel = *tp::kernels::SwKernel::make(m, qe, te, gaps);
  int ran = 0;
  for (int cpus = 1; cpus <= 2; ++cpus) {
    for (auto s : {ScheduleKind::blocking, ScheduleKind::overlap}) {
      for (auto g : {GroupingKind::hyperplane, GroupingKind::vertical}) {
        auto plan = plan_for({150, 230}, *tp::plan::DependenceMatrix::parse("1,0;0,1;1,1"), 16,
                             cpus, s, g, 2);
        if (!plan) continue;
        SCOPED_TRACE("cpus " + std::to_string(cpus) + " " + std::string(to_string(s)) + " " +
                     std::string(to_string(g)));
        tp::exec::PipelineOptions options;
        options.subtiles = g == GroupingKind::vertical ? 3 : 0;
        auto outcome = tp::exec::run_rank(kernel, *plan, *g_world, options);
        ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
        auto total = tp::exec::gather_outcomes<tp::kernels::SwKernel>(*g_world, *outcome);
        ASSERT_TRUE(total.has_value()) << total.error().message;
        if (g_world->rank() == 0) {
          EXPECT_EQ((*total)->result, expected);
        }
        ++ran;
      }
    }
  }
  EXPECT_GE(ran, 4);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  tp::comm::Config cfg;
  cfg.sync = tp::comm::SyncMode::block;  // more ranks than cores: no spinning
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--transport=", 0) == 0) {
      auto t = tp::comm::parse_transport(a.substr(12), "--transport");
      if (!t) {
        std::fprintf(stderr, "%s\n", t.error().message.c_str());
        return 2;
      }
      cfg.transport = *t;
    }
  }
  auto world = tp::comm::World::from_mpi(cfg);
  if (!world) {
    std::fprintf(stderr, "tilepipe: error: %s\n", world.error().message.c_str());
    return 1;
  }
  g_world = &*world;
  if (world->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
