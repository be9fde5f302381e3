// A rank's slab holds its own rows of tiles only (ADR 0028): with a block-cyclic plan, one part
// per cycle vector, so its points are the rank's share of the space plus each part's halo,
// whatever the cyclic factor; exec::slab_points (the door's memory estimate) is the layout's.
#include <tilepipe/exec/pipeline_tasks.hpp>

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <vector>

namespace rank_slab_test {

using tp::exec::Box;
using tp::exec::Index;

tp::plan::Plan make_plan(tp::plan::Index size, std::int64_t height, std::int64_t nodes,
                         std::int64_t cpus, int map_dim, std::int64_t cyclic,
                         std::optional<tp::plan::Index> mesh = std::nullopt) {
  tp::plan::PlanRequest req;
  req.size = std::move(size);
  req.deps = tp::plan::DependenceMatrix::unit(static_cast<int>(req.size.size()));
  req.tile_height = height;
  req.nodes = nodes;
  req.cpus = cpus;
  req.map_dim = map_dim;
  req.cyclic = {cyclic};
  req.mesh = std::move(mesh);
  auto plan = tp::plan::Plan::make(req);
  EXPECT_TRUE(plan.has_value()) << plan.error().message;
  return std::move(*plan);
}

template <int D>
Index volume_of(const std::vector<Box<D>>& boxes) {
  Index v = 0;
  for (const auto& b : boxes) v += b.volume();
  return v;
}

// 96 x 40 mapped along 40 on 2 ranks x 2 CPUs, factors 1-3: 4, 8 and 12 rows of 24, 12 and 8
// points; every rank owns 48 rows of 40 points in K parts, each with one halo row and column.
TEST(RankSlab, cyclic_slab_holds_only_the_ranks_rows_whatever_the_factor) {
  const std::array<int, 2> halo{1, 1};
  for (std::int64_t k = 1; k <= 3; ++k) {
    const auto plan = make_plan({96, 40}, 8, 2, 2, 2, k);
    for (int r = 0; r < 2; ++r) {
      auto layout = tp::exec::build_rank_layout<2>(plan, r, halo, true);
      ASSERT_TRUE(layout.has_value()) << layout.error().message;
      ASSERT_EQ(layout->parts.size(), static_cast<std::size_t>(k)) << "K " << k;
      EXPECT_EQ(volume_of(layout->parts), 48 * 40) << "K " << k;
      EXPECT_EQ(tp::exec::slab_volume(*layout), (48 + k) * (40 + 1)) << "K " << k << " rank " << r;
      EXPECT_EQ(tp::exec::slab_points(plan, r, halo), tp::exec::slab_volume(*layout));
      // Every tile and every face region lies in the part its task or line names.
      for (const auto& step : layout->steps) {
        for (const auto& task : step.tasks) {
          const auto p = static_cast<std::size_t>(task.part);
          EXPECT_TRUE(layout->parts[p].contains(task.box));
        }
      }
      for (const auto* lines : {&layout->recv_lines, &layout->send_lines}) {
        for (const auto& line : *lines) {
          ASSERT_EQ(line.parts.size(), line.regions.size());
          for (std::size_t s = 0; s < line.regions.size(); ++s) {
            const auto p = static_cast<std::size_t>(line.parts[s]);
            EXPECT_TRUE(layout->part_slabs[p].contains(line.regions[s]));
          }
        }
      }
    }
  }
}

// 3-D, cycles along two dimensions (4 ranks as a 2x2 mesh, factor 2: 4 parts per rank), and an
// idle rank: the estimate equals the layout on every rank.
TEST(RankSlab, slab_points_equals_the_layout_in_3d_and_on_idle_ranks) {
  const std::array<int, 3> halo{1, 1, 1};
  const auto plan = make_plan({20, 17, 33}, 5, 4, 1, 3, 2, tp::plan::Index{2, 2});
  Index owned = 0;
  for (int r = 0; r < 4; ++r) {
    auto layout = tp::exec::build_rank_layout<3>(plan, r, halo, false);
    ASSERT_TRUE(layout.has_value()) << layout.error().message;
    EXPECT_EQ(layout->parts.size(), 4u) << r;
    EXPECT_EQ(tp::exec::slab_points(plan, r, halo), tp::exec::slab_volume(*layout)) << r;
    owned += volume_of(layout->parts);
  }
  EXPECT_EQ(owned, 20 * 17 * 33);
  // 3 rows of tiles over 4 ranks: rank 3 is idle (no part, no point).
  const std::array<int, 2> halo2{1, 1};
  const auto few = make_plan({3, 50}, 10, 4, 1, 2, 1);
  for (int r = 0; r < 4; ++r) {
    auto layout = tp::exec::build_rank_layout<2>(few, r, halo2, false);
    ASSERT_TRUE(layout.has_value());
    EXPECT_EQ(tp::exec::slab_points(few, r, halo2), tp::exec::slab_volume(*layout)) << r;
    EXPECT_EQ(layout->parts.empty(), tp::exec::slab_volume(*layout) == 0) << r;
  }
}

}  // namespace rank_slab_test
