// The runtime's door on forked ranks x threads: results bit for bit against one tile in order
// (resident and frontier kernels), the report and spans back in the caller, errors as data.
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/run.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>

namespace {

using tp::exec::Box;
using tp::exec::Index;
using tp::exec::Point;
using tp::exec::SlabView;
using tp::runtime::RunOptions;

/// A wave kernel whose tile at a given lowest point throws (an error naming rank and tile).
struct Throwing : tp::kernels::Wave<2> {
  explicit Throwing(tp::kernels::Wave<2> w) : Wave<2>(w) {}
  Point<2> bad{};
  void compute_tile(const Box<2>& box, const SlabView<float, 2>& slab) const {
    if (box.lo == bad) throw std::runtime_error("bad tile");
    Wave<2>::compute_tile(box, slab);
  }
};

tp::kernels::Wave<2> wave(Index a, Index b) {
  return *tp::kernels::Wave<2>::make({a, b});
}

TEST(RunDoor, resident_kernel_matches_one_tile_on_ranks_x_threads) {
  for (const auto& [nodes, cpus] : {std::pair{1, 1}, {2, 1}, {3, 1}, {1, 2}, {2, 2}}) {
    for (auto schedule : {tp::plan::ScheduleKind::blocking, tp::plan::ScheduleKind::overlap}) {
      RunOptions o;
      o.nodes = nodes;
      o.cpus = cpus;
      o.tile_height = 7;
      o.schedule = schedule;
      o.verify = true;
      o.comm.sync = tp::comm::SyncMode::block;
      auto r = tp::runtime::run(wave(37, 53), {37, 53}, o);
      ASSERT_TRUE(r.has_value()) << r.error().message;
      EXPECT_TRUE(r->root);
      ASSERT_TRUE(r->verified.has_value());
      EXPECT_TRUE(*r->verified) << nodes << " x " << cpus;
      const auto reference = tp::kernels::wave_reference({37, 53});
      EXPECT_EQ(r->result, tp::kernels::wave_reference_checksum(reference, {37, 53}));
      ASSERT_EQ(r->summary.ranks.size(), static_cast<std::size_t>(nodes));
      Index points = 0;
      for (const auto& rank : r->summary.ranks) points += rank.points;
      EXPECT_EQ(points, 37 * 53);
      EXPECT_EQ(r->planned.plan.nodes(), nodes);
      EXPECT_EQ(r->planned.plan.cpus(), cpus);
    }
  }
}

TEST(RunDoor, frontier_kernel_matches_one_tile) {
  std::mt19937 rng(11);
  const auto& m = tp::kernels::ScoreMatrix::blosum62();
  std::uniform_int_distribution<int> residue(0, 19);
  std::vector<std::uint8_t> q(57);
  std::vector<std::uint8_t> t(130);
  for (auto& x : q) x = static_cast<std::uint8_t>(residue(rng));
  for (auto& x : t) x = static_cast<std::uint8_t>(residue(rng));
  auto kernel = tp::kernels::SwKernel::make(m, q, t, {10, 1});
  ASSERT_TRUE(kernel.has_value());
  RunOptions o;
  o.nodes = 2;
  o.cpus = 2;
  o.tile_height = 16;
  o.verify = true;
  o.comm.sync = tp::comm::SyncMode::block;
  auto r = tp::runtime::run(*kernel, {57, 130}, o);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->verified.has_value());
  EXPECT_TRUE(*r->verified);
  EXPECT_GT(r->result.score, 0);
}

TEST(RunDoor, spans_of_every_rank_come_back_when_traced) {
  RunOptions o;
  o.nodes = 2;
  o.cpus = 1;
  o.tile_height = 8;
  o.trace = true;
  o.comm.sync = tp::comm::SyncMode::block;
  auto r = tp::runtime::run(wave(20, 64), {20, 64}, o);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->spans.size(), 2U);
  EXPECT_FALSE(r->spans[0].empty());
  EXPECT_FALSE(r->spans[1].empty());
  EXPECT_FALSE(r->verified.has_value());
}

TEST(RunDoor, a_throwing_kernel_names_rank_and_tile) {
  Throwing k(wave(16, 32));
  k.bad = {9, 1};  // the first tile of the second rank's row (2 ranks, 8 rows each)
  RunOptions o;
  o.nodes = 2;
  o.cpus = 1;
  o.tile_height = 8;
  o.mesh = tp::plan::Index{2};
  o.map_dim = 2;
  o.comm.sync = tp::comm::SyncMode::block;
  o.comm.peer_timeout = std::chrono::seconds(5);
  auto r = tp::runtime::run(k, {16, 32}, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, tp::Errc::internal);
  EXPECT_EQ(r.error().rank, 1);
  EXPECT_EQ(r.error().tile, (std::vector<std::int64_t>{9, 1}));
  EXPECT_NE(r.error().message.find("bad tile"), std::string::npos) << r.error().message;
}

TEST(RunDoor, bad_input_is_the_users_error_before_any_rank_starts) {
  RunOptions o;
  o.nodes = 2;  // 4x4 tiles: 4 rows across the mapping dimension, more than the 2 x 1 CPUs
  o.cpus = 1;
  o.tile_extents = tp::plan::Index{2, 2};
  auto r = tp::runtime::run(wave(8, 8), {8, 8}, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.error().is_user_error()) << r.error().message;
  EXPECT_EQ(r.error().rank, -1);

  RunOptions mpi;
  mpi.nodes = 2;
  mpi.tile_height = 4;
  mpi.comm.transport = tp::comm::TransportKind::mpi;
  mpi.launch = tp::runtime::LaunchMode::fork;
  auto m = tp::runtime::run(wave(8, 8), {8, 8}, mpi);
  ASSERT_FALSE(m.has_value());
  EXPECT_TRUE(m.error().is_user_error());
  EXPECT_EQ(m.error().option, "transport");

  auto dims = tp::runtime::run(wave(8, 8), {8, 8, 8}, RunOptions{});
  ASSERT_FALSE(dims.has_value());
  EXPECT_TRUE(dims.error().is_user_error());
}

TEST(RunDoor, hybrid_waits_spin_long_when_every_thread_has_a_cpu) {
  using tp::runtime::spin_for_dedicated_cpus;
  tp::comm::Config c;  // hybrid, 50 us
  const auto base = c.spin_ns;
  EXPECT_EQ(spin_for_dedicated_cpus(c, 1).spin_ns, tp::exec::team_spin);
  EXPECT_EQ(spin_for_dedicated_cpus(c, std::int64_t{1} << 20).spin_ns, base);  // oversubscribed
  EXPECT_EQ(spin_for_dedicated_cpus(c, 0).spin_ns, base);
  c.sync = tp::comm::SyncMode::block;
  EXPECT_EQ(spin_for_dedicated_cpus(c, 1).spin_ns, base);
  c.sync = tp::comm::SyncMode::poll;
  EXPECT_EQ(spin_for_dedicated_cpus(c, 1).spin_ns, base);
  // The launcher's count of ranks on this host.
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "3", 1);
  EXPECT_EQ(tp::runtime::mpi_local_size(), 3);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "x", 1);
  EXPECT_EQ(tp::runtime::mpi_local_size(), 0);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
}

TEST(RunDoor, default_cpus_come_from_the_affinity_mask) {
  const auto cpus = tp::runtime::affinity_cpus();
  EXPECT_GE(cpus, 1);
  RunOptions o;
  o.nodes = 1;
  o.tile_height = 4;
  auto r = tp::runtime::run(wave(64, 64), {64, 64}, o);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->planned.plan.cpus(), std::min<std::int64_t>(cpus, 64));
}

}  // namespace

namespace {

TEST(RunDoor, forked_ranks_share_the_affinity_masks_cpus_by_default) {
  for (const int nodes : {1, 2}) {
    RunOptions o;
    o.nodes = nodes;
    o.comm.sync = tp::comm::SyncMode::block;
    auto r = tp::runtime::run(wave(64, 64), {64, 64}, o);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    const auto mask = tp::runtime::affinity_cpus();
    EXPECT_EQ(r->planned.plan.cpus(), std::max<std::int64_t>(1, mask / nodes)) << nodes;
  }
}

}  // namespace
