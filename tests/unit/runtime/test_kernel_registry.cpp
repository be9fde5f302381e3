// The kernel registry in one process (no dlopen): make_entry's plan information and entry points,
// names unique, find's error listing the names; the loader's own refusals are in
// tests/cli/test_plugin_cli.cpp (built plugins).
#include "../../cli/plugins/relax.hpp"
#include "03_lcs/lcs.hpp"

#include <tilepipe/runtime/kernel_entry.hpp>

#include <gtest/gtest.h>

namespace {

using tp::runtime::KernelRegistry;
using tp::runtime::make_entry;

TEST(KernelRegistry, entry_carries_the_kernels_plan_information) {
  const auto e = make_entry<lcs::Lcs>("lcs");
  EXPECT_EQ(e.name, "lcs");
  EXPECT_EQ(e.storage, tp::exec::Storage::frontier);
  EXPECT_EQ(e.dims, 2);
  EXPECT_EQ(e.deps, (std::vector<std::vector<std::int64_t>>{{1, 0}, {0, 1}, {1, 1}}));
  ASSERT_EQ(e.params.size(), 2u);
  EXPECT_EQ(e.params[1].name, "alphabet");
  EXPECT_FALSE(e.time_loop);       // what only a built-in kernel declares (ADR 0023)
  EXPECT_EQ(e.workload, nullptr);  // one sweep for the cost model
  // Frontier: the probe walks a row of tiles of the plugin's kernel (seconds per point).
  ASSERT_NE(e.cost_probe, nullptr);
  auto defaults = tp::exec::ParamValues::parse(e.params, {});
  ASSERT_TRUE(defaults);
  auto probe = e.cost_probe({32, 1}, 1, 16, 2048, *defaults);
  ASSERT_TRUE(probe) << probe.error().message;
  EXPECT_GT((*probe)(16), 0);
  EXPECT_FALSE(e.cost_probe({32, 1, 1}, 1, 16, 2048, *defaults));  // three extents
  auto bad = tp::exec::ParamValues::parse(e.params, {"alphabet=300"});
  ASSERT_TRUE(bad);
  auto st = e.check({10, 10}, *bad);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "alphabet=300 must be 1..256");
  EXPECT_FALSE(e.check({10, 10, 10}, *bad));  // three extents for a 2-D kernel
}

// A resident time-loop kernel's probe is made for the smallest loop nest whose space covers its
// row (nest_covering; a frontier kernel's probe places its row inside the nest, the next test).
// relax1d's skew (t, i) -> (t, i + t) maps the nest T x N to the box T x (N + T - 1), so the row
// 5 x 20 needs T = 5 and N = 16; a row narrower than T sweeps takes the smallest nest, N = 1.
TEST(KernelRegistry, a_time_loop_kernels_probe_runs_the_smallest_nest_covering_its_row) {
  using tp::runtime::detail::nest_covering;
  EXPECT_EQ(*nest_covering<relax::Relax>({5, 20}), (tp::plan::Index{5, 16}));
  EXPECT_EQ(*nest_covering<relax::Relax>({7, 3}), (tp::plan::Index{7, 1}));
  EXPECT_EQ(*nest_covering<lcs::Lcs>({7, 9}), (tp::plan::Index{7, 9}));  // no transformation
  const auto e = make_entry<relax::Relax>("relax1d");
  ASSERT_TRUE(e.time_loop);
  ASSERT_NE(e.cost_probe, nullptr);
  auto p = tp::exec::ParamValues::parse(e.params, {"iterations=3"});
  ASSERT_TRUE(p);
  auto probe = e.cost_probe({4, 1}, 1, 16, 4096, *p);  // tiles 4 sweeps x 16 points
  ASSERT_TRUE(probe) << probe.error().message;
  EXPECT_GT((*probe)(16), 0);
  EXPECT_GT((*probe)(4), 0);
  EXPECT_EQ(p->integer("iterations"), 3);  // the probe's own count, not the caller's values
  EXPECT_EQ(p->with_integer("iterations", 8).to_string(), "iterations=8");
}

/// Only the loop nest's dependences of a 3-D time loop (t, i, j) whose update reads i+1 and j+1
/// of the previous sweep: the planner skews both space dimensions by t.
struct Skew3d {
  static constexpr int dims = 3;
  static constexpr std::array<tp::exec::Dependence<3>, 5> original_deps{
      {{1, -1, 0}, {1, 0, -1}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
};

// Every point of the row maps into the loop nest: y = lo + x - 1 in the transformed space, the
// nest's point T^-1 y within 1..nest (brute force over the row's points).
template <class K>
void expect_row_inside(const tp::plan::Index& row) {
  auto placed = tp::runtime::detail::row_inside_nest<K>(row);
  ASSERT_TRUE(placed) << placed.error().message;
  auto loop = tp::plan::DependenceMatrix::make(K::dims, tp::runtime::detail::loop_deps_of<K>());
  ASSERT_TRUE(loop);
  auto t = tp::plan::Transformation::find(*loop);
  ASSERT_TRUE(t);
  auto box = t->image(placed->nest);
  ASSERT_TRUE(box);
  const auto dims = row.size();
  tp::plan::Index x = placed->origin;
  std::int64_t points = 0;
  while (true) {
    tp::plan::Index y(dims);
    for (std::size_t d = 0; d < dims; ++d) {
      ASSERT_GE(x[d], 1);
      ASSERT_LE(x[d], box->extents[d]);
      y[d] = box->lo[d] + x[d] - 1;
    }
    const auto in_nest = t->unapply(y);
    for (std::size_t d = 0; d < dims; ++d) {
      ASSERT_GE(in_nest[d], 1) << "row point outside the nest";
      ASSERT_LE(in_nest[d], placed->nest[d]) << "row point outside the nest";
    }
    ++points;
    bool done = true;  // the next point in row-major order, or done after the last
    for (std::size_t d = dims; d-- > 0;) {
      if (++x[d] < placed->origin[d] + row[d]) {
        done = false;
        break;
      }
      x[d] = placed->origin[d];
    }
    if (done) break;
  }
  std::int64_t expected = 1;
  for (const auto e : row) expected *= e;
  EXPECT_EQ(points, expected);
}

// A time-loop kernel's frontier probe starts its row inside the loop nest, as a run's interior
// tiles lie (at the space's low corner part of each tile is outside the nest: sor's probe
// measured 0.15 ns per point there against its runs' 0.95). relax1d's skew (t, i) -> (t, i + t):
// the row 5 x 20 lies in the nest T = 5, N = 24 from x_2 = 5, as sor's built-in probe places it.
TEST(KernelRegistry, a_time_loop_kernels_probe_row_lies_inside_its_loop_nest) {
  using tp::runtime::detail::row_inside_nest;
  auto r = row_inside_nest<relax::Relax>({5, 20});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->nest, (tp::plan::Index{5, 24}));
  EXPECT_EQ(r->origin, (tp::plan::Index{1, 5}));
  r = row_inside_nest<lcs::Lcs>({7, 9});  // no transformation: the row itself
  ASSERT_TRUE(r);
  EXPECT_EQ(r->nest, (tp::plan::Index{7, 9}));
  EXPECT_EQ(r->origin, (tp::plan::Index{1, 1}));
  expect_row_inside<relax::Relax>({5, 20});
  expect_row_inside<relax::Relax>({1, 3});
  expect_row_inside<relax::Relax>({16, 7});
  r = row_inside_nest<Skew3d>({4, 6, 9});  // (t, i, j) -> (t, i + t, j + t)
  ASSERT_TRUE(r);
  EXPECT_EQ(r->nest, (tp::plan::Index{4, 9, 12}));
  EXPECT_EQ(r->origin, (tp::plan::Index{1, 4, 4}));
  expect_row_inside<Skew3d>({4, 6, 9});
  expect_row_inside<Skew3d>({3, 1, 5});
}

/// lcs declaring a workload for the cost model: two sweeps, 4-byte faces.
struct TwoSweepLcs : lcs::Lcs {
  static tp::model::Workload workload(const tp::plan::Index& size, const tp::exec::ParamValues&) {
    tp::model::Workload w;
    w.sweeps = 2;
    w.element_bytes = 4;
    w.between_sweep_bytes = size[0];
    return w;
  }
};

TEST(KernelRegistry, a_kernel_types_workload_reaches_its_entry) {
  const auto e = tp::runtime::describe_entry<TwoSweepLcs>("lcs2");
  EXPECT_EQ(e.name, "lcs2");
  EXPECT_EQ(e.deps, make_entry<lcs::Lcs>("lcs").deps);
  ASSERT_NE(e.workload, nullptr);
  auto defaults = tp::exec::ParamValues::parse(e.params, {});
  ASSERT_TRUE(defaults);
  const tp::model::Workload w = e.workload({70, 50}, *defaults);
  EXPECT_EQ(w.sweeps, 2);
  EXPECT_EQ(w.element_bytes, 4);
  EXPECT_EQ(w.between_sweep_bytes, 70);
  EXPECT_EQ(e.check, nullptr);  // describe_entry: no entry points
}

TEST(KernelRegistry, entry_runs_the_door_and_reports_the_result_as_text) {
  const auto e = make_entry<lcs::Lcs>("lcs");
  auto params = tp::exec::ParamValues::parse(e.params, {"seed=3"});
  ASSERT_TRUE(params);
  tp::runtime::RunOptions o;
  o.nodes = 1;
  o.cpus = 2;
  o.tile_height = 16;
  o.verify = true;
  o.launch = tp::runtime::LaunchMode::fork;
  auto r = e.run({70, 50}, *params, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->result, lcs::Lcs::format_result(lcs::plain_loop(70, 50, 3, 4)));
  EXPECT_FALSE(r->checksum);
  EXPECT_EQ(r->verified, true);
}

TEST(KernelRegistry, names_are_unique_and_find_lists_them) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.add(make_entry<lcs::Lcs>("lcs"), "a.so"));
  ASSERT_TRUE(registry.add(make_entry<lcs::Lcs>("lcs2"), "b.so"));
  auto again = registry.add(make_entry<lcs::Lcs>("lcs"), "c.so");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().option, "plugin");
  EXPECT_EQ(again.error().message, "c.so: kernel 'lcs' is registered already (from a.so)");
  EXPECT_EQ(registry.names(), "lcs|lcs2");
  const auto entries = registry.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]->name, "lcs");
  EXPECT_EQ(entries[1]->name, "lcs2");
  auto found = registry.find("lcs2");
  ASSERT_TRUE(found);
  EXPECT_EQ((*found)->name, "lcs2");
  auto missing = registry.find("x");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().option, "kernel");
  EXPECT_EQ(missing.error().message, "'x' is not a kernel of a.so, b.so (it has lcs|lcs2)");
}

TEST(KernelRegistry, a_library_that_does_not_load_is_refused_with_dlerror) {
  KernelRegistry registry;
  auto st = tp::runtime::load_plugin("/nonexistent/libx.so", registry);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().option, "plugin");
  EXPECT_EQ(st.error().message,
            "/nonexistent/libx.so: does not load: /nonexistent/libx.so: cannot open shared "
            "object file: No such file or directory");
  EXPECT_TRUE(registry.empty());
}

}  // namespace
