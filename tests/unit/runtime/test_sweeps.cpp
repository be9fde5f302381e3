// Repeated sweeps through the runtime's door (RunOptions::sweeps): a kernel that reads its own
// values of the previous sweep gives the plain loop's result after T sweeps on ranks x threads,
// both schedules, copied and direct faces and the communication thread; a kernel's after_sweep
// hook (the p2p benchmark's corner feedback, across ranks) runs between sweeps.
#include <tilepipe/run.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace {

using tp::exec::Box;
using tp::exec::Index;
using tp::exec::Point;
using tp::exec::SlabView;
using tp::runtime::RunOptions;

constexpr std::int64_t modulus = 1000003;

/// u[i][j] = (u[i][j] + u[i-1][j] + 2 u[i][j-1]) mod p, in place: every sweep reads the last
/// sweep's value of the point itself. Integers, so any order of summing gives the same result.
struct Accumulate {
  static constexpr int dims = 2;
  static constexpr tp::exec::Storage storage = tp::exec::Storage::resident;
  using value_type = std::int64_t;
  using result_type = std::uint64_t;
  static constexpr std::array<tp::exec::Dependence<2>, 2> deps{{{1, 0}, {0, 1}}};
  static result_type combine(result_type a, result_type b) { return a + b; }
  value_type boundary_value(const Point<2>& p) const { return (7 * p[0] + 13 * p[1]) % 101; }
  static value_type step(value_type self, value_type up, value_type left) {
    return (self + up + 2 * left) % modulus;
  }
  void compute_tile(const Box<2>& box, const SlabView<value_type, 2>& slab) const {
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      value_type* row = slab.at(first);
      const value_type* up = row - slab.stride(0);
      for (Index j = 0; j < box.extent(1); ++j) row[j] = step(row[j], up[j], row[j - 1]);
    });
  }
  result_type tile_result(const Box<2>& box, const SlabView<const value_type, 2>& slab) const {
    result_type sum = 0;
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      for (Index j = 0; j < box.extent(1); ++j) {
        sum += static_cast<result_type>(slab.at(first)[j]) *
               static_cast<result_type>(first[0] + first[1] + j);
      }
    });
    return sum;
  }
};

/// Accumulate with the corner feedback between sweeps: u[1][1] += u[N1][N2] (mod p), the value
/// sent from the rank that computes the last point to the one that computes the first.
struct Feedback : Accumulate {
  Index n1 = 0, n2 = 0;
  tp::Status after_sweep(int, const tp::exec::RankSlab<value_type, 2>& slab,
                         std::span<const Box<2>> owned, tp::comm::World& world) const {
    constexpr int tag = 1000;
    const Point<2> first{1, 1};
    const Point<2> last{n1, n2};
    // A block plan's rank has one box, a block-cyclic plan's one per cycle (ADR 0022).
    const auto holds = [&](const Point<2>& p) {
      return std::any_of(owned.begin(), owned.end(), [&](const Box<2>& b) {
        return p[0] >= b.lo[0] && p[0] < b.hi[0] && p[1] >= b.lo[1] && p[1] < b.hi[1];
      });
    };
    const bool has_first = holds(first);
    const bool has_last = holds(last);
    if (has_first && world.rank() != 0) return tp::fail(tp::Errc::internal, "(1,1) not on rank 0");
    value_type corner = 0;
    if (has_last && has_first) {
      corner = *slab.at(last);
    } else if (has_last) {
      TP_TRY(world.send(0, tag, std::as_bytes(std::span<const value_type>(slab.at(last), 1))));
    } else if (has_first) {
      auto got = world.recv(tp::comm::any_source, tag,
                            std::as_writable_bytes(std::span<value_type>(&corner, 1)));
      if (!got) return tp::Unexpected{got.error()};
    }
    if (has_first) *slab.at(first) = (*slab.at(first) + corner) % modulus;
    return {};
  }
};

static_assert(tp::exec::ResidentKernel<Accumulate>);
static_assert(tp::exec::detail::SweepHook<Feedback>);
static_assert(!tp::exec::detail::SweepHook<Accumulate>);

/// The plain loop: T sweeps over the (N1+1) x (N2+1) array, with the feedback if asked.
std::uint64_t plain(Index n1, Index n2, int sweeps, bool feedback) {
  const Accumulate k;
  const auto w = static_cast<std::size_t>(n2 + 1);
  std::vector<std::int64_t> u(static_cast<std::size_t>(n1 + 1) * w);
  for (Index i = 0; i <= n1; ++i) {
    for (Index j = 0; j <= n2; ++j) {
      if (i == 0 || j == 0) u[static_cast<std::size_t>(i) * w + j] = k.boundary_value({i, j});
    }
  }
  const auto at = [&](Index i, Index j) -> std::int64_t& {
    return u[static_cast<std::size_t>(i) * w + static_cast<std::size_t>(j)];
  };
  for (int s = 0; s < sweeps; ++s) {
    if (s > 0 && feedback) at(1, 1) = (at(1, 1) + at(n1, n2)) % modulus;
    for (Index i = 1; i <= n1; ++i) {
      for (Index j = 1; j <= n2; ++j)
        at(i, j) = Accumulate::step(at(i, j), at(i - 1, j), at(i, j - 1));
    }
  }
  std::uint64_t sum = 0;
  for (Index i = 1; i <= n1; ++i) {
    for (Index j = 1; j <= n2; ++j) {
      sum += static_cast<std::uint64_t>(at(i, j)) * static_cast<std::uint64_t>(i + j);
    }
  }
  return sum;
}

TEST(RunSweeps, each_sweep_reads_the_last_on_ranks_x_threads) {
  struct Case {
    int nodes, cpus;
    tp::plan::ScheduleKind schedule;
    tp::exec::FaceMode faces;
    bool comm_thread;
  };
  using tp::exec::FaceMode;
  using tp::plan::ScheduleKind;
  const Index n1 = 41, n2 = 67;
  for (const int sweeps : {1, 2, 5}) {
    const std::uint64_t want = plain(n1, n2, sweeps, false);
    if (sweeps > 1) {
      EXPECT_NE(want, plain(n1, n2, 1, false));  // the sweeps do change the array
    }
    for (const Case& c : {Case{1, 1, ScheduleKind::overlap, FaceMode::automatic, false},
                          Case{2, 1, ScheduleKind::overlap, FaceMode::copy, false},
                          Case{2, 1, ScheduleKind::blocking, FaceMode::direct, false},
                          Case{3, 1, ScheduleKind::overlap, FaceMode::direct, false},
                          Case{2, 2, ScheduleKind::overlap, FaceMode::copy, true},
                          Case{1, 2, ScheduleKind::blocking, FaceMode::automatic, false}}) {
      RunOptions o;
      o.nodes = c.nodes;
      o.cpus = c.cpus;
      o.tile_height = 9;
      o.schedule = c.schedule;
      o.faces = c.faces;
      o.comm_thread = c.comm_thread;
      o.comm.sync = tp::comm::SyncMode::block;
      o.sweeps = sweeps;
      o.verify = true;  // the reference runs as many sweeps
      auto r = tp::runtime::run(Accumulate{}, {n1, n2}, o);
      ASSERT_TRUE(r.has_value()) << r.error().message;
      SCOPED_TRACE(std::to_string(sweeps) + " sweeps on " + std::to_string(c.nodes) + " x " +
                   std::to_string(c.cpus));
      EXPECT_EQ(r->result, want);
      ASSERT_TRUE(r->verified.has_value());
      EXPECT_TRUE(*r->verified);
    }
  }
}

TEST(RunSweeps, the_after_sweep_hook_feeds_the_corner_back_across_ranks) {
  const Index n1 = 30, n2 = 50;
  Feedback k;
  k.n1 = n1;
  k.n2 = n2;
  const std::uint64_t want = plain(n1, n2, 4, true);
  EXPECT_NE(want, plain(n1, n2, 4, false));
  // Block-cyclic factors 1-3 (ADR 0022): the hook is given every box of its rank; the last
  // point is then on the rank of the last row's cycle.
  for (const Index cyclic : {1, 2, 3}) {
    for (const int nodes : {1, 2, 3}) {
      RunOptions o;
      o.nodes = nodes;
      o.cpus = 1 + (nodes + static_cast<int>(cyclic)) % 2;
      o.cyclic = tp::plan::Index{cyclic};
      o.tile_height = 8;
      o.comm.sync = tp::comm::SyncMode::block;
      o.sweeps = 4;
      auto r = tp::runtime::run(k, {n1, n2}, o);
      ASSERT_TRUE(r.has_value()) << r.error().message;
      EXPECT_EQ(r->result, want) << nodes << "x" << o.cpus << " ranks, cyclic " << cyclic;
      EXPECT_EQ(r->planned.plan.cyclic().front(), cyclic);
    }
  }
}

TEST(RunSweeps, bad_sweep_counts_and_kinds_are_refused_before_any_rank_starts) {
  RunOptions o;
  o.sweeps = 0;
  auto zero = tp::runtime::run(Accumulate{}, {8, 8}, o);
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().option, "sweeps");
  EXPECT_TRUE(zero.error().is_user_error());
  Feedback k;
  k.n1 = 8;
  k.n2 = 8;
  o.sweeps = 3;
  o.verify = true;  // the reference cannot run a hook that communicates
  auto hooked = tp::runtime::run(k, {8, 8}, o);
  ASSERT_FALSE(hooked.has_value());
  EXPECT_EQ(hooked.error().option, "verify");
}

}  // namespace
