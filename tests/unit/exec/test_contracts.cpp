// Death tests: the executor's contracts (TP_EXPECTS) abort with the expression and its place,
// never run on with bad arguments.
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/exec/pipeline_tasks.hpp>
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/exec/step_team.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

using tp::exec::Box;
using tp::exec::SlabView;

TEST(ExecContracts, run_steps_needs_a_thread) {
  EXPECT_DEATH(tp::exec::run_steps(0, 1, [](int, tp::exec::Index) {}),
               "precondition violated: threads >= 1 && steps >= 0");
}

TEST(ExecContracts, row_split_needs_rows_that_fit) {
  const tp::exec::RowSplit split{1, 0.5, 4};
  EXPECT_DEATH((void)tp::exec::split_row_bounds(0, 10, 0, split), "precondition violated: q >= 1");
  EXPECT_DEATH((void)tp::exec::split_row_bounds(0, 10, 3, split),
               "precondition violated: .*hi - lo >= q \\* split.min_width");
}

TEST(ExecContracts, pack_needs_the_region_inside_the_slab_and_room_for_it) {
  std::vector<float> data(16);
  const SlabView<float, 2> slab(data.data(), Box<2>{{0, 0}, {4, 4}});
  std::vector<float> out(4);
  const auto pack = [&](const Box<2>& region) {
    tp::exec::pack<float, 2>(slab, region, std::span<float>(out));
  };
  EXPECT_DEATH(pack(Box<2>{{2, 2}, {5, 3}}),
               "precondition violated: slab.bounds\\(\\).contains\\(region\\)");
  EXPECT_DEATH(pack(Box<2>{{0, 0}, {3, 3}}),
               "precondition violated: .*out.size\\(\\).* >= region.volume\\(\\)");
}

TEST(ExecContracts, copy_region_needs_both_slabs_to_hold_it) {
  std::vector<float> a(16), b(4);
  const SlabView<float, 2> from(a.data(), Box<2>{{0, 0}, {4, 4}});
  const SlabView<float, 2> to(b.data(), Box<2>{{0, 0}, {2, 2}});
  const auto copy = [&] { tp::exec::copy_region<float, 2>(from, Box<2>{{1, 1}, {3, 3}}, to); };
  EXPECT_DEATH(copy(),
               "precondition violated: from.bounds\\(\\).contains\\(region\\) && "
               "to.bounds\\(\\).contains\\(region\\)");
}

}  // namespace
