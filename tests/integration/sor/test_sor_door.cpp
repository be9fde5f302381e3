// sor2d/sor3d through the runtime's door on forked ranks x threads (both schedules, both
// groupings, time tiles of several heights): the checksum and the .npy of the interior after the
// last sweep equal the plain loop's bit for bit.
#include <tilepipe/kernels/sor.hpp>
#include <tilepipe/plan/transform.hpp>
#include <tilepipe/run.hpp>

#include "door_cases.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

namespace {

using tp::exec::Index;
using tp::runtime::RunOptions;

// The interior of the plain loop's (N_1+2) x ... array, row-major.
std::vector<double> interior(const std::vector<double>& a, const std::vector<Index>& n) {
  std::vector<double> v;
  if (n.size() == 2) {
    for (Index i = 1; i <= n[0]; ++i) {
      for (Index j = 1; j <= n[1]; ++j)
        v.push_back(a[static_cast<std::size_t>(i * (n[1] + 2) + j)]);
    }
  } else {
    for (Index i = 1; i <= n[0]; ++i) {
      for (Index j = 1; j <= n[1]; ++j) {
        for (Index k = 1; k <= n[2]; ++k) {
          v.push_back(a[static_cast<std::size_t>((i * (n[1] + 2) + j) * (n[2] + 2) + k)]);
        }
      }
    }
  }
  return v;
}

std::string shape_text(const std::vector<Index>& n) {
  std::string s = "(";
  for (std::size_t d = 0; d < n.size(); ++d) s += (d ? ", " : "") + std::to_string(n[d]);
  return s + ")";
}

std::string output_path(int trial) {
  return tp::test::temp_npy_path("sor_door_" + std::to_string(trial));
}

template <int S>
void check(const tp::exec::Point<S>& n, std::int64_t t, double w, const RunOptions& o,
           const std::string& what) {
  auto k = tp::kernels::Sor<S>::make(n, t, w);
  ASSERT_TRUE(k.has_value()) << what;
  const auto e = k->exec_size();
  auto r = tp::runtime::run(*k, tp::plan::Index(e.begin(), e.end()), o);
  ASSERT_TRUE(r.has_value()) << what << ": " << r.error().message;
  ASSERT_TRUE(r->root);
  std::vector<Index> size(n.begin(), n.end());
  const auto reference = S == 2 ? tp::kernels::sor2d_reference(n[0], n[1], t, w)
                                : tp::kernels::sor3d_reference(n[0], n[1], n[S - 1], t, w);
  EXPECT_EQ(r->result, tp::kernels::sor_reference_checksum(reference, size)) << what;
  if (!o.output.empty()) {
    std::string shape;
    const auto written = tp::test::read_npy(o.output, &shape);
    std::filesystem::remove(o.output);
    EXPECT_EQ(shape, shape_text(size)) << what;
    tp::test::expect_same_bits(written, interior(reference, size), what);
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (o.verify) {
    ASSERT_TRUE(r->verified.has_value());
    EXPECT_TRUE(*r->verified) << what;
  }
  EXPECT_EQ(r->planned.plan.nodes(), o.nodes) << what;
}

// The kernel computes in a fixed skew: it must be the planner's choice for its dependences.
template <int S>
void expect_planner_skew() {
  using K = tp::kernels::Sor<S>;
  std::vector<tp::plan::Index> vectors;
  for (const auto& d : K::original_deps) vectors.emplace_back(d.begin(), d.end());
  auto deps = tp::plan::DependenceMatrix::make(K::dims, vectors);
  ASSERT_TRUE(deps.has_value());
  auto t = tp::plan::Transformation::find(*deps);
  ASSERT_TRUE(t.has_value());
  std::vector<tp::plan::Index> rows;
  for (const auto& r : K::skew) rows.emplace_back(r.begin(), r.end());
  EXPECT_EQ(t->rows(), rows);
  std::vector<tp::plan::Index> moved;
  for (const auto& d : K::deps) moved.emplace_back(d.begin(), d.end());
  EXPECT_EQ(t->apply(*deps).vectors(), moved);
  // The planned box of 3 sweeps over 7^S is the space the kernel asks the executor for.
  tp::plan::Index size{3};
  tp::exec::Point<S> n{};
  for (int s = 0; s < S; ++s) size.push_back(7), n[s] = 7;
  auto box = t->image(size);
  ASSERT_TRUE(box.has_value());
  const auto e = K::make(n, 3, 1.0)->exec_size();
  EXPECT_EQ(box->extents, tp::plan::Index(e.begin(), e.end()));
}

TEST(SorDoor, the_kernels_skew_is_the_planners_choice) {
  expect_planner_skew<2>();
  expect_planner_skew<3>();
}

// The dependences of sor2d in the skewed space (t, i, j) the door plans.
const std::vector<tp::plan::Index> kSorDeps{{0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}};

// Random grids (extents of 1 included), sweep counts, omega, time-tile heights and tile widths
// that do not divide the extents, on 1-3 ranks x 1-2 CPUs; the seed is printed with each case.
TEST(SorDoor, sor2d_on_ranks_x_threads_equals_the_plain_loop) {
  const unsigned seed = 1313;
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 16; ++trial) {
    std::uniform_int_distribution<Index> ext(1, 23), tl(2, 5);
    const std::int64_t sweeps[] = {1, 2, 3, 5, 9};
    const std::int64_t t = sweeps[trial % 5];
    Index n1 = trial % 7 == 3 ? 1 : ext(rng), n2 = trial % 5 == 1 ? 1 : ext(rng);
    const double w = std::uniform_real_distribution<double>(0.2, 1.9)(rng);
    RunOptions o;
    o.nodes = 1 + trial % 3;
    o.cpus = 1 + (trial / 3) % 2;
    o.schedule = trial % 2 ? tp::plan::ScheduleKind::blocking : tp::plan::ScheduleKind::overlap;
    o.grouping =
        (trial / 2) % 2 ? tp::plan::GroupingKind::vertical : tp::plan::GroupingKind::hyperplane;
    // The tile height along map_dim (1: time tiles of tl sweeps, often fewer than T); the
    // planner gives the other dimensions one row of tiles per CPU.
    o.tile_height = tl(rng);
    o.map_dim = 1 + trial % 3;
    o.verify = trial % 4 == 0;
    o.output = output_path(trial);
    o.comm.sync = tp::comm::SyncMode::block;
    // Tiles along the other dimensions at least as wide as the dependences (one row per CPU):
    // a grid too small for this mesh grows (an extent of 1 stays 1 where the mesh allows it).
    for (int grow = 0; grow < 8 && !tp::test::plannable({t, n1 + t - 1, n2 + t - 1}, kSorDeps, o);
         ++grow) {
      if (grow % 2 == 0 || n2 == 1) n1 += 3;
      if (grow % 2 == 1 || n1 == 1) n2 += 3;
    }
    const std::string what = "seed " + std::to_string(seed) + " trial " + std::to_string(trial) +
                             ": " + std::to_string(n1) + "x" + std::to_string(n2) +
                             " T=" + std::to_string(t) + " on " + std::to_string(o.nodes) + "x" +
                             std::to_string(o.cpus) + " map " + std::to_string(o.map_dim);
    check<2>({n1, n2}, t, w, o, what);
  }
}

TEST(SorDoor, sor3d_on_ranks_x_threads_equals_the_plain_loop) {
  const unsigned seed = 77;
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 6; ++trial) {
    std::uniform_int_distribution<Index> ext(1, 9), tl(2, 4);
    const std::int64_t t = 1 + trial % 4;
    const Index n1 = ext(rng), n2 = ext(rng), n3 = trial == 2 ? 1 : ext(rng);
    RunOptions o;
    o.nodes = 1 + trial % 3;
    o.cpus = 1 + trial % 2;
    o.schedule = trial % 2 ? tp::plan::ScheduleKind::blocking : tp::plan::ScheduleKind::overlap;
    o.tile_height = tl(rng);
    o.map_dim = 4;
    o.verify = trial == 0;
    if (trial % 2 == 0) o.output = output_path(100 + trial);
    o.comm.sync = tp::comm::SyncMode::block;
    const std::string what = "seed " + std::to_string(seed) + " trial " + std::to_string(trial) +
                             ": " + std::to_string(n1) + "x" + std::to_string(n2) + "x" +
                             std::to_string(n3) + " T=" + std::to_string(t);
    check<3>({n1, n2, n3}, t, 1.25, o, what);
  }
}

}  // namespace
