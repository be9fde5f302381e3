// The rank pipeline with a communication thread against the sequential reference: nodes 1-4 x
// CPUs 1-3 x dimensions 2-4 x both schedules x copied and direct faces, extents that do not divide
// the tiles, measured and forced shares, give the reference checksum bit for bit; the re-cut rows
// keep node boundaries.
#include <tilepipe/comm/launch.hpp>
#include <tilepipe/exec/gather.hpp>
#include <tilepipe/exec/pipeline.hpp>
#include <tilepipe/kernels/wave.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using tp::plan::GroupingKind;
using tp::plan::ScheduleKind;

std::optional<tp::plan::Plan> make_plan(const std::vector<std::int64_t>& size, std::int64_t height,
                                        int nodes, int cpus, ScheduleKind s, GroupingKind g) {
  tp::plan::PlanRequest req;
  req.size = size;
  req.deps = tp::plan::DependenceMatrix::unit(static_cast<int>(size.size()));
  req.tile_height = height;
  req.nodes = nodes;
  req.cpus = cpus;
  req.schedule = s;
  req.grouping = g;
  auto plan = tp::plan::Plan::make(req);
  if (!plan) return std::nullopt;
  return std::move(*plan);
}

// Runs the plan with a communication thread; 0 when the checksum is the reference's, every point
// was computed once, and every rank reports the same share (0 with one CPU, 1 when blocking
// and not forced).
template <int D>
int run_case(const tp::plan::Plan& plan, double forced, std::uint64_t expected,
             tp::exec::FaceMode faces) {
  tp::exec::Point<D> n{};
  for (int d = 0; d < D; ++d) n[d] = plan.space().extent(d);
  const auto kernel = *tp::kernels::Wave<D>::make(n);
  tp::comm::Config config;
  config.sync = tp::comm::SyncMode::block;
  tp::exec::PipelineOptions options;
  options.comm_thread = true;
  options.comm_thread_share = forced;
  options.faces = faces;
  auto launched =
      tp::comm::launch_local(static_cast<int>(plan.nodes()), config, [&](tp::comm::World& world) {
        auto outcome = tp::exec::run_rank(kernel, plan, world, options);
        if (!outcome) {
          std::fprintf(stderr, "rank %d: %s\n", world.rank(), outcome.error().message.c_str());
          return 3;
        }
        auto total = tp::exec::gather_outcomes<tp::kernels::Wave<D>>(world, *outcome);
        if (!total) return 4;
        if (world.rank() != 0) return 0;
        if ((*total)->result != expected) {
          std::fprintf(stderr, "checksum %016llx, expected %016llx\n",
                       static_cast<unsigned long long>((*total)->result),
                       static_cast<unsigned long long>(expected));
          return 5;
        }
        std::int64_t points = 0;
        std::set<double> shares;
        for (const auto& r : (*total)->summary.ranks) {
          points += r.points;
          shares.insert(r.comm_thread.share);
          if (r.direct_faces != (faces == tp::exec::FaceMode::direct && plan.nodes() > 1)) {
            return 13;
          }
          if (!r.comm_thread.on ||
              r.threads != static_cast<int>(plan.cpus()) + (plan.cpus() == 1 ? 1 : 0)) {
            return 6;
          }
        }
        if (points != plan.space().points()) return 7;
        if (shares.size() != 1) return 8;
        const double share = *shares.begin();
        if (share < 0 || share > 1) return 9;
        if (plan.cpus() == 1 && share != 0) return 10;
        const bool blocking = plan.schedule().kind() == ScheduleKind::blocking;
        if (plan.cpus() > 1 && forced < 0 && blocking && share != 1) return 11;
        if (plan.cpus() > 1 && forced >= 0 && share != forced) return 12;
        return 0;
      });
  if (!launched) {
    ADD_FAILURE() << launched.error().message;
    return 1;
  }
  return launched->status();
}

int run_any(const tp::plan::Plan& plan, const std::vector<std::int64_t>& size, double forced,
            tp::exec::FaceMode faces) {
  const auto reference = tp::kernels::wave_reference(size);
  const auto expected = tp::kernels::wave_reference_checksum(reference, size);
  switch (size.size()) {
    case 2:
      return run_case<2>(plan, forced, expected, faces);
    case 3:
      return run_case<3>(plan, forced, expected, faces);
    default:
      return run_case<4>(plan, forced, expected, faces);
  }
}

TEST(PipelineCommThread, matches_the_sequential_reference_with_the_measured_share) {
  const std::vector<std::vector<std::int64_t>> sizes = {{23, 37}, {9, 11, 29}, {6, 7, 5, 13}};
  int ran = 0;
  for (const auto& size : sizes) {
    for (int nodes = 1; nodes <= 4; ++nodes) {
      for (int cpus = 1; cpus <= 3; ++cpus) {
        for (auto s : {ScheduleKind::blocking, ScheduleKind::overlap}) {
          auto plan = make_plan(size, 4, nodes, cpus, s, GroupingKind::hyperplane);
          if (!plan) continue;  // no legal mesh for these extents
          for (auto faces : {tp::exec::FaceMode::copy, tp::exec::FaceMode::direct}) {
            SCOPED_TRACE(::testing::Message()
                         << "dims " << size.size() << " nodes " << nodes << " cpus " << cpus << " "
                         << to_string(s) << " faces " << to_string(faces));
            EXPECT_EQ(run_any(*plan, size, -1, faces), 0);
            ++ran;
          }
        }
      }
    }
  }
  EXPECT_GT(ran, 100);
}

TEST(PipelineCommThread, matches_the_reference_for_every_forced_share) {
  // Shares between "a row of one point" and "an equal row", on 2 and 3 CPUs per node.
  const std::vector<std::vector<std::int64_t>> sizes = {{31, 40}, {13, 11, 29}, {7, 9, 5, 11}};
  int ran = 0;
  for (const auto& size : sizes) {
    for (int nodes : {1, 2, 3}) {
      for (int cpus : {2, 3}) {
        for (double share : {0.0, 0.3, 0.7, 1.0}) {
          auto plan =
              make_plan(size, 3, nodes, cpus, ScheduleKind::overlap, GroupingKind::hyperplane);
          if (!plan) continue;
          for (auto faces : {tp::exec::FaceMode::copy, tp::exec::FaceMode::direct}) {
            SCOPED_TRACE(::testing::Message()
                         << "dims " << size.size() << " nodes " << nodes << " cpus " << cpus
                         << " share " << share << " faces " << to_string(faces));
            EXPECT_EQ(run_any(*plan, size, share, faces), 0);
            ++ran;
          }
        }
      }
    }
  }
  EXPECT_GT(ran, 60);
}

TEST(PipelineCommThread, vertical_grouping_is_refused) {
  auto plan = make_plan({9, 11, 29}, 4, 1, 2, ScheduleKind::overlap, GroupingKind::vertical);
  ASSERT_TRUE(plan);
  const auto ok = tp::exec::check_comm_thread(*plan);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, tp::Errc::invalid_argument);
  EXPECT_NE(ok.error().message.find("hyperplane grouping only"), std::string::npos);
}

TEST(RowSplit, bounds_keep_the_ends_and_give_row_zero_its_share) {
  tp::exec::RowSplit split{1, 0.5, 1};
  EXPECT_EQ(tp::exec::split_row_bounds(1, 17, 2, split), (std::vector<std::int64_t>{1, 5, 17}));
  split.share = 0;  // clamped to one point
  EXPECT_EQ(tp::exec::split_row_bounds(1, 17, 2, split), (std::vector<std::int64_t>{1, 2, 17}));
  split.share = 1;  // equal rows; the remainder goes to the first of the others
  EXPECT_EQ(tp::exec::split_row_bounds(0, 10, 3, split), (std::vector<std::int64_t>{0, 3, 7, 10}));
  split.share = 0.5;
  split.min_width = 2;
  EXPECT_EQ(tp::exec::split_row_bounds(0, 6, 3, split), (std::vector<std::int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(tp::exec::split_row_bounds(4, 9, 1, split), (std::vector<std::int64_t>{4, 9}));
}

TEST(RowSplit, tile_boxes_tile_each_node_and_keep_node_boundaries) {
  // 2 nodes x 3 CPUs along dimension 1 of a 2-D space: rows re-cut inside each node only.
  auto plan = make_plan({40, 50}, 5, 2, 3, ScheduleKind::overlap, GroupingKind::hyperplane);
  ASSERT_TRUE(plan);
  const int k = 1 - plan->map_dim();
  tp::exec::RowSplit split{k, 0.25, 1};
  for (int rank = 0; rank < 2; ++rank) {
    std::set<std::pair<std::int64_t, std::int64_t>> plan_rows, split_rows;
    std::int64_t lo = 1 << 30, hi = 0, points = 0;
    for (const auto& tile : plan->tiles_of(rank)) {
      const auto a = tp::exec::split_tile_box<2>(*plan, tile, {});
      const auto b = tp::exec::split_tile_box<2>(*plan, tile, split);
      EXPECT_EQ(a.lo[1 - k], b.lo[1 - k]);
      EXPECT_EQ(a.hi[1 - k], b.hi[1 - k]);
      plan_rows.insert({a.lo[k], a.hi[k]});
      split_rows.insert({b.lo[k], b.hi[k]});
      lo = std::min(lo, a.lo[k]);
      hi = std::max(hi, a.hi[k]);
      points += b.volume();
    }
    std::int64_t plan_points = 0;
    for (const auto& tile : plan->tiles_of(rank)) {
      plan_points += tp::exec::split_tile_box<2>(*plan, tile, {}).volume();
    }
    EXPECT_EQ(points, plan_points);
    ASSERT_EQ(split_rows.size(), 3u);
    EXPECT_EQ(split_rows.begin()->first, lo);
    EXPECT_EQ(split_rows.rbegin()->second, hi);
    const auto equal = static_cast<double>(hi - lo) / 3;
    EXPECT_EQ(split_rows.begin()->second - lo, std::llround(0.25 * equal));
    EXPECT_NE(plan_rows, split_rows);
  }
}

}  // namespace
