// sweep3d through the runtime's door on forked ranks x threads (both schedules and groupings, S2
// and S4, 1-3 source iterations, tiles that do not divide the grid, extents of 1), octants paired
// (the default: I x J x 2K, ADR 0021) and one after another: the checksum and the .npy of phi
// equal the plain loop's bit for bit.
#include <tilepipe/comm/launch.hpp>
#include <tilepipe/exec/gather.hpp>
#include <tilepipe/exec/pipeline.hpp>
#include <tilepipe/kernels/sweep3d.hpp>
#include <tilepipe/run.hpp>

#include "door_cases.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>

#include <unistd.h>

namespace {

using tp::exec::Index;
using tp::kernels::Sweep3dParams;
using tp::runtime::RunOptions;

void check(const tp::exec::Point<3>& n, const Sweep3dParams& p, RunOptions o,
           const std::string& what) {
  auto k = tp::kernels::Sweep3d::make(n, p);
  ASSERT_TRUE(k.has_value()) << what;
  o.sweeps = k->sweeps();
  const tp::exec::Point<3> space = k->space();
  EXPECT_EQ(space[2], (p.paired != 0 ? 2 : 1) * n[2]) << what;
  auto r = tp::runtime::run(*k, {space[0], space[1], space[2]}, o);
  ASSERT_TRUE(r.has_value()) << what << ": " << r.error().message;
  ASSERT_TRUE(r->root);
  const auto phi = tp::kernels::sweep3d_reference(n, p);
  EXPECT_EQ(r->result, tp::kernels::sweep3d_checksum(phi)) << what;
  EXPECT_EQ(r->planned.plan.nodes(), o.nodes) << what;
  if (!o.output.empty()) {
    tp::test::expect_same_bits(tp::test::read_npy(o.output), phi, what);
  }
}

// Random grids (extents of 1 included), tiles of 2-4 that rarely divide them, S2/S4, 1-3
// iterations with c = 0 or 0.5, 1-3 ranks x 1-2 CPUs, both schedules and groupings, copied or
// direct faces; the seed is printed with each case. Even trials give the tile's extents (a mesh
// needs one row of tiles per CPU across the mapping dimension k: the rows over i and j are drawn
// to match), odd ones a tile height along a random mapping dimension (the planner's tiles).
TEST(Sweep3dDoor, on_ranks_x_threads_equals_the_plain_loop) {
  const unsigned seed = 2026;
  std::mt19937 rng(seed);
  const auto dir =
      std::filesystem::temp_directory_path() / ("tp_sweep3d_door_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int ones = 0, given_tiles = 0, ragged = 0;
  const auto draw = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 14; ++trial) {
    Sweep3dParams p;
    p.angles = trial % 4 < 2 ? 1 : 3;
    p.iterations = 1 + trial % 3;
    p.c = (trial / 3) % 2 ? 0.5 : 0.0;
    p.sigma_t = std::uniform_real_distribution<double>(0.1, 3.0)(rng);
    p.source = std::uniform_real_distribution<double>(0.0, 2.0)(rng);
    p.paired = trial % 5 == 4 ? 0 : 1;  // octants one after another on 2x2 and 1x2
    // Mirrored roles (the default, ADR 0024/0026) but in every third trial: the exchange between
    // sweeps of the fixed boxes.
    p.mirror_from = trial % 3 == 2 ? 0 : 1;
    RunOptions o;
    o.nodes = 1 + trial % 3;
    o.cpus = 1 + (trial / 3) % 2;
    o.schedule =
        (trial / 2) % 2 ? tp::plan::ScheduleKind::blocking : tp::plan::ScheduleKind::overlap;
    o.grouping =
        (trial / 4) % 2 ? tp::plan::GroupingKind::vertical : tp::plan::GroupingKind::hyperplane;
    o.faces = trial % 3 == 1 ? tp::exec::FaceMode::copy : tp::exec::FaceMode::automatic;
    o.comm.sync = tp::comm::SyncMode::block;
    tp::exec::Point<3> n{};
    if (trial % 2 == 0) {
      // rows = a x b tiles over (i, j), a * b = ranks x CPUs; an extent with one row of tiles
      // may be 1 (its tile of 2 is longer than the grid).
      const Index rows = o.nodes * o.cpus;
      const Index a = rows % 2 == 0 && draw(0, 1) == 1 ? 2 : 1;
      const std::array<Index, 2> split{a, rows / a};
      tp::plan::Index tile(3);
      for (std::size_t d = 0; d < 2; ++d) {
        const Index r = split[d];
        n[d] = r == 1 ? draw(1, 4) : draw(2 * r, 2 * r + 3);
        tile[d] = r == 1 ? std::max<Index>(2, n[d]) : (n[d] + r - 1) / r;
      }
      n[2] = draw(1, 9);
      tile[2] = draw(2, 4);  // along 2K: rarely a divisor of K, so tiles straddle k = K
      o.tile_extents = tile;
      o.map_dim = 3;
    } else {
      for (auto& e : n) e = draw(1, 7);
      o.tile_height = draw(2, 4);
      o.map_dim = static_cast<int>(draw(1, 3));
      // A grid too small for this mesh grows (an extent of 1 stays where it can).
      for (int grow = 0; grow < 8 && !tp::test::plannable({n[0], n[1], 2 * n[2]},
                                                          {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, o);
           ++grow) {
        n[static_cast<std::size_t>(grow % 3)] += 2;
      }
    }
    if (trial % 4 == 3) o.output = (dir / ("phi" + std::to_string(trial) + ".npy")).string();
    const std::string what =
        "seed " + std::to_string(seed) + " trial " + std::to_string(trial) + ": " +
        std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]) +
        " angles " + std::to_string(p.angles) + " T=" + std::to_string(p.iterations) + " on " +
        std::to_string(o.nodes) + "x" + std::to_string(o.cpus) + " paired " +
        std::to_string(p.paired) + " mirror_from " + std::to_string(p.mirror_from);
    ones += (n[0] == 1 || n[1] == 1 || n[2] == 1) ? 1 : 0;
    if (o.tile_extents) {
      ++given_tiles;
      for (std::size_t d = 0; d < 3; ++d) ragged += n[d] % (*o.tile_extents)[d] != 0 ? 1 : 0;
    }
    check(n, p, o, what);
  }
  std::filesystem::remove_all(dir);
  // What the cases must have covered.
  EXPECT_GE(ones, 2);
  EXPECT_EQ(given_tiles, 7);
  EXPECT_GE(ragged, 4);
}

// One cell, S2: phi computed by hand from the formula (vacuum inflow: psi = src / (((S + c) + c)
// + c), c = 2 / sqrt(3); p = 0.0 + psi / 8 per octant; phi = the eight p summed from 0.0; the
// next source Q + C * phi), through the door on one rank with a tile larger than the grid.
TEST(Sweep3dDoor, one_cell_s2_is_the_hand_computed_value) {
  const double mu = 1.0 / std::sqrt(3.0);
  const double c = 2.0 * mu;
  const std::string path = tp::test::temp_npy_path("sweep3d_cell");
  Sweep3dParams p;
  p.sigma_t = 0.75;
  p.source = 3.0;
  p.iterations = 2;
  p.c = 0.5;
  double phi = 0.0;
  for (int t = 0; t < 2; ++t) {
    const double src = 3.0 + 0.5 * phi;
    const double psi = (((src + c * 0.0) + c * 0.0) + c * 0.0) / (((0.75 + c) + c) + c);
    phi = 0.0;
    for (int o = 0; o < 8; ++o) phi = phi + (0.0 + 0.125 * psi);
  }
  auto k = tp::kernels::Sweep3d::make({1, 1, 1}, p);
  ASSERT_TRUE(k.has_value());
  RunOptions o;
  o.nodes = 1;
  o.cpus = 1;
  o.tile_extents = tp::plan::Index{2, 2, 2};
  o.sweeps = k->sweeps();
  o.output = path;
  auto r = tp::runtime::run(*k, {1, 1, 2}, o);  // paired: octant o | 4 in the second cell
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->result, tp::kernels::sweep3d_point_hash(0, phi));
  const auto written = tp::test::read_npy(path);
  ASSERT_EQ(written.size(), 1U);
  EXPECT_EQ(written[0], phi);
  std::filesystem::remove(path);
}

// From the second iteration on, the sweep computes the source of each cell at home on its rank
// (Q + C * phi_prev) and takes the others' from their homes: ranks along k with uneven rows of
// tiles give rows of points partly at home (2-3 points, reflected), partly not, in the octants
// that reflect k. Paired, the space is 2K along k: the ranks' rows straddle k = K (a rank with
// cells of both halves, homes only in the first), or end there (the second rank has no home).
TEST(Sweep3dDoor, sources_at_home_and_received_on_meshes_across_k) {
  Sweep3dParams p;
  p.angles = 3;
  p.iterations = 3;
  p.c = 0.5;
  p.sigma_t = 0.37;
  p.source = 1.3;
  struct Case {
    tp::exec::Point<3> n;
    int nodes, cpus;
    tp::plan::Index tile;
    std::int64_t paired;
  };
  const std::array<Case, 7> cases{{{{5, 4, 7}, 2, 1, {2, 4, 5}, 0},
                                   {{5, 4, 7}, 2, 2, {2, 2, 5}, 0},
                                   {{4, 3, 8}, 3, 1, {2, 3, 3}, 0},
                                   {{5, 4, 7}, 2, 1, {2, 4, 8}, 1},
                                   {{5, 4, 7}, 2, 1, {2, 4, 7}, 1},
                                   {{5, 4, 7}, 2, 2, {2, 2, 8}, 1},
                                   {{4, 3, 8}, 3, 1, {2, 3, 6}, 1}}};
  for (const Case& c : cases) {
    p.paired = c.paired;
    RunOptions o;
    o.nodes = c.nodes;
    o.cpus = c.cpus;
    o.map_dim = 1;
    o.mesh = tp::plan::Index{1, c.nodes};  // the ranks along k
    o.tile_extents = c.tile;
    o.comm.sync = tp::comm::SyncMode::block;
    o.comm_thread = c.cpus == 2;  // the other pipeline calls the kernel's hooks too
    check(c.n, p, o,
          std::to_string(c.n[2]) + " along k on " + std::to_string(o.nodes) + "x" +
              std::to_string(o.cpus) + " paired " + std::to_string(c.paired));
  }
}

// 4 ranks, both variants, both schedules: a 2 x 2 mesh over (i, j) pipelined along k (KBA;
// paired, a rank's rows hold both halves), and 4 ranks along k (paired: the second rank's rows
// straddle k = K, the last two hold no home cell), T = 2 with c != 0, phi written.
TEST(Sweep3dDoor, paired_and_serial_on_4_ranks_equal_the_plain_loop) {
  Sweep3dParams p;
  p.angles = 3;
  p.iterations = 2;
  p.c = 0.4;
  p.sigma_t = 0.9;
  const tp::exec::Point<3> n{4, 4, 7};
  for (std::int64_t paired : {1, 0}) {
    p.paired = paired;
    for (const bool along_k : {false, true}) {
      RunOptions o;
      o.nodes = 4;
      o.cpus = 1;
      o.comm.sync = tp::comm::SyncMode::block;
      o.schedule = along_k ? tp::plan::ScheduleKind::blocking : tp::plan::ScheduleKind::overlap;
      if (along_k) {
        o.map_dim = 1;
        o.mesh = tp::plan::Index{1, 4};
        // Rows of 2, 2, 2, 1 points along K; paired 4, 4, 4, 2 along 2K (5..8 straddles K).
        o.tile_extents = tp::plan::Index{2, 4, paired != 0 ? 4 : 2};
      } else {
        o.map_dim = 3;
        o.mesh = tp::plan::Index{2, 2};
        o.tile_extents = tp::plan::Index{2, 2, 3};
      }
      o.output = tp::test::temp_npy_path("sweep3d_4ranks");
      check(n, p, o,
            std::string(along_k ? "along k" : "2x2 mesh") + " paired " + std::to_string(paired));
      std::filesystem::remove(o.output);
    }
  }
}

// Mirrored roles (ADR 0024): in a sweep whose octant reflects a mesh dimension, the rank at mesh
// coordinate c plays the rank at p - 1 - c. Where the ranks' rows are mirror-symmetric (even
// splits, extents of 1 across an unsplit dimension, a 2 x 2 mesh), every rank sweeps its own
// cells: no rank sends a value between sweeps. Where they are not (5 = 3 + 2 along i), only
// the layer the mirrored rows miss moves: rank 1 plays rows 1..3, whose cells are 5, 4, 3 (3 is
// rank 0's), rank 0 plays rows 4..5 (cells 2, 1: its own); so rank 1 sends the 12 p_o of that
// layer in each of the 8 sweeps that reflect i (4 per iteration; paired: 2, each with two
// halves) and rank 0 its 12 sources before each of iteration 2's: 96 and 48 values (all of its
// cells in every such sweep, 2 layers, before). Both variants, T = 2, c = 0.5, both schedules,
// 1-2 CPUs (CPU rows inside a rank need no symmetry), copied and direct faces; each rank's
// count from its own kernel (exec's run_rank on forked ranks), phi bit for bit the plain loop's.
// mirror_from: the sweeps ask for mirrored roles only from that many iterations on (0: never;
// the default 1: always, ADR 0026); octant 1 (paired: the pair 1, 5) reflects i, so sweep 1
// asks for bit 0 when mirrored.
TEST(Sweep3dDoor, sweeps_mirror_from_mirror_from_iterations_on) {
  EXPECT_EQ(Sweep3dParams{}.mirror_from, 1);
  auto by_default = tp::kernels::Sweep3d::make({4, 4, 4}, {});
  ASSERT_TRUE(by_default) << by_default.error().message;
  EXPECT_EQ(by_default->mirror(1), 1U);  // one iteration, mirrored
  for (const std::int64_t paired : {0, 1}) {
    for (const auto& [iterations, from, want] :
         {std::tuple{1, 3, 0U}, {2, 3, 0U}, {3, 3, 1U}, {2, 2, 1U}, {1, 1, 1U}, {5, 0, 0U}}) {
      Sweep3dParams p;
      p.paired = paired;
      p.iterations = iterations;
      p.mirror_from = from;
      auto k = tp::kernels::Sweep3d::make({4, 4, 4}, p);
      ASSERT_TRUE(k) << k.error().message;
      EXPECT_EQ(k->mirror(1), want) << "T " << iterations << ", mirror_from " << from;
      EXPECT_EQ(k->mirror(0), 0U);  // octant 0 reflects nothing
    }
  }
  Sweep3dParams bad;
  bad.mirror_from = -1;
  auto k = tp::kernels::Sweep3d::make({4, 4, 4}, bad);
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().message, "mirror_from -1: must be >= 0 (0: never mirror)");
}

TEST(Sweep3dDoor, mirrored_roles_keep_cells_at_home_where_the_rows_are_symmetric) {
  Sweep3dParams p;
  p.angles = 3;
  p.iterations = 2;
  p.c = 0.5;
  p.sigma_t = 0.8;
  struct Case {
    tp::exec::Point<3> n;
    int nodes, cpus;
    tp::plan::Index mesh, tile;
    std::array<std::int64_t, 2> moved;  // values ranks 0 and 1 send (the others: none)
  };
  const std::array<Case, 5> cases{{{{6, 3, 5}, 2, 1, {2, 1}, {3, 3, 3}, {0, 0}},
                                   {{6, 4, 3}, 2, 2, {2, 1}, {3, 2, 2}, {0, 0}},
                                   {{1, 4, 3}, 2, 1, {1, 2}, {2, 2, 2}, {0, 0}},
                                   {{4, 4, 1}, 4, 1, {2, 2}, {2, 2, 2}, {0, 0}},
                                   {{5, 3, 4}, 2, 1, {2, 1}, {3, 3, 3}, {48, 96}}}};
  int trial = 0;
  for (const Case& c : cases) {
    for (const std::int64_t paired : {1, 0}) {
      p.paired = paired;
      auto k = tp::kernels::Sweep3d::make(c.n, p);
      ASSERT_TRUE(k.has_value());
      const tp::exec::Point<3> space = k->space();
      tp::plan::PlanRequest req;
      req.size = {space[0], space[1], space[2]};
      req.deps = tp::plan::DependenceMatrix::unit(3);
      req.tile_kind = tp::plan::TileSpecKind::extents;
      req.tile_extents = c.tile;
      req.nodes = c.nodes;
      req.cpus = c.cpus;
      req.mesh = c.mesh;
      req.map_dim = 3;
      req.schedule = trial % 2 ? tp::plan::ScheduleKind::blocking : tp::plan::ScheduleKind::overlap;
      auto plan = tp::plan::Plan::make(req);
      ASSERT_TRUE(plan.has_value()) << plan.error().message;
      tp::exec::PipelineOptions options;
      options.sweeps = k->sweeps();
      options.faces = trial % 3 == 0 ? tp::exec::FaceMode::copy : tp::exec::FaceMode::automatic;
      ++trial;
      const std::string what = std::to_string(c.n[0]) + "x" + std::to_string(c.n[1]) + "x" +
                               std::to_string(c.n[2]) + " on " + std::to_string(c.nodes) + "x" +
                               std::to_string(c.cpus) + " paired " + std::to_string(paired);
      const auto expected = tp::kernels::sweep3d_checksum(tp::kernels::sweep3d_reference(c.n, p));
      tp::comm::Config config;
      config.sync = tp::comm::SyncMode::block;
      auto launched = tp::comm::launch_local(c.nodes, config, [&](tp::comm::World& world) {
        auto outcome = tp::exec::run_rank(*k, *plan, world, options);
        if (!outcome) {
          std::fprintf(stderr, "rank %d: %s\n", world.rank(), outcome.error().message.c_str());
          return 3;
        }
        const auto r = static_cast<std::size_t>(world.rank());
        const std::int64_t want = r < 2 ? c.moved[r] : 0;
        if (k->values_moved() != want) {
          std::fprintf(stderr, "rank %d sent %lld values, expected %lld\n", world.rank(),
                       static_cast<long long>(k->values_moved()), static_cast<long long>(want));
          return 4;
        }
        auto total = tp::exec::gather_outcomes<tp::kernels::Sweep3d>(world, *outcome);
        if (!total) return 5;
        if (world.rank() != 0) return 0;
        return (*total)->result == expected ? 0 : 6;
      });
      ASSERT_TRUE(launched.has_value()) << what << ": " << launched.error().message;
      EXPECT_EQ(launched->status(), 0) << what;
    }
  }
}

// Block-cyclic plans (ADR 0022): a rank's points are one box per cycle, and the hooks trade
// between every two boxes, a rank's own two included. The kernel asks for mirrored roles (the
// default) and the executor drops them (every role the identity, ADR 0024): the only plans
// where a rank sweeps several boxes. Factors 2-3 on 1-3 ranks x 1-2 CPUs, paired
// and not, T = 2 with c = 0.5, mapped along k (KBA: cycles over i and j) or along i (cycles over
// j and k: paired, a rank's boxes lie in both halves), phi written: the plain loop's bits.
TEST(Sweep3dDoor, cyclic_plans_equal_the_plain_loop) {
  Sweep3dParams p;
  p.angles = 1;
  p.iterations = 2;
  p.c = 0.5;
  p.sigma_t = 1.1;
  p.source = 0.7;
  const tp::exec::Point<3> n{9, 8, 5};
  int variant = 0;
  int ran = 0;
  for (const Index factor : {2, 3}) {
    for (const int nodes : {1, 2, 3}) {
      for (const int cpus : {1, 2}) {
        const int v = variant++;
        p.paired = v % 2;
        RunOptions o;
        o.nodes = nodes;
        o.cpus = cpus;
        o.cyclic = tp::plan::Index{factor};
        o.map_dim = (v / 2) % 2 != 0 ? 1 : 3;
        o.tile_height = 2;
        o.schedule =
            v % 3 != 0 ? tp::plan::ScheduleKind::overlap : tp::plan::ScheduleKind::blocking;
        o.grouping =
            v % 4 == 3 ? tp::plan::GroupingKind::vertical : tp::plan::GroupingKind::hyperplane;
        o.faces = v % 5 == 1 ? tp::exec::FaceMode::copy : tp::exec::FaceMode::automatic;
        o.comm.sync = tp::comm::SyncMode::block;
        o.output = tp::test::temp_npy_path("sweep3d_cyclic");
        const std::string what = "cyclic " + std::to_string(factor) + " on " +
                                 std::to_string(nodes) + "x" + std::to_string(cpus) + " paired " +
                                 std::to_string(p.paired) + " map_dim " + std::to_string(o.map_dim);
        auto k = tp::kernels::Sweep3d::make(n, p);
        ASSERT_TRUE(k.has_value()) << what;
        o.sweeps = k->sweeps();
        const tp::exec::Point<3> space = k->space();
        auto r = tp::runtime::run(*k, {space[0], space[1], space[2]}, o);
        if (!r && r.error().message.find("larger than the rows allow") != std::string::npos) {
          continue;  // a factor these rows cannot fill (refused before any work)
        }
        ASSERT_TRUE(r.has_value()) << what << ": " << r.error().message;
        ASSERT_TRUE(r->root);
        ++ran;
        EXPECT_EQ(r->planned.plan.cyclic().front(), factor) << what;
        const auto phi = tp::kernels::sweep3d_reference(n, p);
        EXPECT_EQ(r->result, tp::kernels::sweep3d_checksum(phi)) << what;
        tp::test::expect_same_bits(tp::test::read_npy(o.output), phi, what);
        std::filesystem::remove(o.output);
      }
    }
  }
  EXPECT_GE(ran, 8);
}

// The door's own verification would run the kernel without its after_sweep hook: refused.
TEST(Sweep3dDoor, the_doors_verification_is_refused) {
  auto k = tp::kernels::Sweep3d::make({3, 3, 3}, {});
  ASSERT_TRUE(k.has_value());
  RunOptions o;
  o.nodes = 1;
  o.tile_extents = tp::plan::Index{2, 2, 2};
  o.sweeps = k->sweeps();
  o.verify = true;
  auto r = tp::runtime::run(*k, {3, 3, 3}, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("after_sweep"), std::string::npos) << r.error().message;
}

// Even one sweep: the reference would not call the kernel's before_sweeps hook either.
TEST(Sweep3dDoor, the_doors_verification_of_one_sweep_is_refused) {
  auto k = tp::kernels::Sweep3d::make({3, 3, 3}, {});
  ASSERT_TRUE(k.has_value());
  RunOptions o;
  o.nodes = 1;
  o.tile_extents = tp::plan::Index{2, 2, 2};
  o.verify = true;
  auto r = tp::runtime::run(*k, {3, 3, 3}, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("before_sweeps"), std::string::npos) << r.error().message;
}

}  // namespace
