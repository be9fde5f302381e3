// The Kernel API plumbing: tilings, slab faces, the step team and the local runner (test kernels).
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/exec/spin_wait.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

namespace tp::exec {
namespace {

TEST(RectTiling, counts_boxes_and_groups) {
  auto t = RectTiling<3>::make(Box<3>{{1, 1, 1}, {11, 4, 8}}, {4, 3, 7});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->count(0), 3);
  EXPECT_EQ(t->count(1), 1);
  EXPECT_EQ(t->count(2), 1);
  EXPECT_EQ(t->tiles(), 3);
  EXPECT_EQ(t->steps(), 3);
  EXPECT_EQ(t->box_of({2, 0, 0}), (Box<3>{{9, 1, 1}, {11, 4, 8}}));
  auto u = RectTiling<2>::make(Box<2>{{0, 0}, {5, 7}}, {2, 3});
  ASSERT_TRUE(u.has_value());
  const auto g = u->groups();
  ASSERT_EQ(g.size(), static_cast<std::size_t>(u->steps()));
  std::size_t seen = 0;
  Index volume = 0;
  for (std::size_t s = 0; s < g.size(); ++s) {
    for (const auto& c : g[s]) {
      EXPECT_EQ(static_cast<std::size_t>(c[0] + c[1]), s);
      volume += u->box_of(c).volume();
      ++seen;
    }
  }
  EXPECT_EQ(seen, 9u);
  EXPECT_EQ(volume, 35);
}

TEST(RectTiling, rejects_bad_tiles) {
  auto t = RectTiling<2>::make(Box<2>{{0, 0}, {5, 7}}, {2, 0});
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().message, "tile size 0 in dimension 2: tile sizes must be >= 1");
  EXPECT_FALSE((RectTiling<2>::make(Box<2>{{0, 0}, {0, 7}}, {1, 1}).has_value()));
}

TEST(Slab, pack_unpack_round_trip_and_face_boxes) {
  const Box<3> bounds{{0, 0, 0}, {4, 5, 6}};
  std::vector<int> a(static_cast<std::size_t>(bounds.volume()));
  std::iota(a.begin(), a.end(), 0);
  SlabView<int, 3> v(a.data(), bounds);
  EXPECT_EQ(v.stride(0), 30);
  EXPECT_EQ(v.offset({1, 2, 3}), 30 + 12 + 3);
  const Box<3> tile{{1, 1, 1}, {4, 5, 6}};
  EXPECT_EQ(outgoing_face(tile, 2, 1), (Box<3>{{1, 1, 5}, {4, 5, 6}}));
  EXPECT_EQ(incoming_face(tile, 0, 1), (Box<3>{{0, 1, 1}, {1, 5, 6}}));
  const Box<3> face = outgoing_face(tile, 1, 2);
  std::vector<int> buf(static_cast<std::size_t>(face.volume()));
  pack<int, 3>(v, face, buf);
  EXPECT_EQ(buf.front(), *v.at({1, 3, 1}));
  EXPECT_EQ(buf.back(), *v.at({3, 4, 5}));
  std::vector<int> b(a.size(), -1);
  SlabView<int, 3> w(b.data(), bounds);
  unpack<int, 3>(buf, face, w);
  for_each_row(bounds, [&](const Point<3>& p) {
    for (Index k = 0; k < bounds.extent(2); ++k) {
      const Point<3> q{p[0], p[1], k};
      const bool in = face.contains(Box<3>{q, {q[0] + 1, q[1] + 1, q[2] + 1}});
      EXPECT_EQ(*w.at(q), in ? *v.at(q) : -1);
    }
  });
}

// A resident test kernel over uint64: A = A[i-1,j] + 3*A[i,j-1] + i*j (wrapping), A[i,0] = i,
// A[0,j] = j; result = the sum of the computed values.
struct Recurrence {
  static constexpr int dims = 2;
  static constexpr Storage storage = Storage::resident;
  using value_type = std::uint64_t;
  using result_type = std::uint64_t;
  static constexpr std::array<Dependence<2>, 2> deps{{{1, 0}, {0, 1}}};
  static result_type combine(result_type a, result_type b) { return a + b; }
  Index throw_at_row = -1;

  value_type boundary_value(const Point<2>& p) const {
    return static_cast<value_type>(p[0] == 0 ? p[1] : p[0]);
  }
  void compute_tile(const Box<2>& box, const SlabView<value_type, 2>& s) const {
    if (box.lo[0] <= throw_at_row && throw_at_row < box.hi[0] && box.lo[1] == 1) {
      throw std::runtime_error("boom");
    }
    for_each_row(box, [&](const Point<2>& first) {
      value_type* cur = s.at(first);
      const value_type* up = cur - s.stride(0);
      for (Index j = 0; j < box.extent(1); ++j) {
        cur[j] = up[j] + 3 * cur[j - 1] + static_cast<value_type>(first[0] * (first[1] + j));
      }
    });
  }
  result_type tile_result(const Box<2>& box, const SlabView<const value_type, 2>& s) const {
    result_type sum = 0;
    for_each_row(box, [&](const Point<2>& first) {
      for (Index j = 0; j < box.extent(1); ++j) sum += s.at(first)[j];
    });
    return sum;
  }
};

// The same recurrence in frontier form: face 0 = the tile's last row, face 1 = its last column.
struct FrontierRecurrence {
  static constexpr int dims = 2;
  static constexpr Storage storage = Storage::frontier;
  using face_type = std::uint64_t;
  using result_type = std::uint64_t;
  static constexpr std::array<Dependence<2>, 2> deps{{{1, 0}, {0, 1}}};
  static result_type combine(result_type a, result_type b) { return a + b; }
  Index throw_at_row = -1;  ///< a tile holding this row throws

  std::size_t face_size(int k, const Box<2>& box) const {
    return static_cast<std::size_t>(box.extent(1 - k));
  }
  void boundary_face(int k, const Box<2>& box, std::span<face_type> f) const {
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<face_type>(box.lo[1 - k]) + i;
  }
  result_type compute_tile(const Box<2>& box, const FaceSet<const face_type, 2>& in,
                           const FaceSet<face_type, 2>& out) const {
    if (throw_at_row >= box.lo[0] && throw_at_row < box.hi[0]) throw std::runtime_error("boom");
    result_type sum = 0;
    std::copy(in[0].begin(), in[0].end(), out[0].begin());
    for (Index i = box.lo[0]; i < box.hi[0]; ++i) {
      const auto r = static_cast<std::size_t>(i - box.lo[0]);
      face_type left = in[1][r];
      for (Index j = box.lo[1]; j < box.hi[1]; ++j) {
        face_type& v = out[0][static_cast<std::size_t>(j - box.lo[1])];
        v = v + 3 * left + static_cast<face_type>(i * j);
        left = v;
        sum += v;
      }
      out[1][r] = left;
    }
    return sum;
  }
};

// FrontierRecurrence with a preparation: each thread records the rows it prepared, and a tile
// of a row after the first must find its rows prepared on its own thread.
struct PreparedRecurrence : FrontierRecurrence {
  struct Log {
    std::mutex m;
    std::set<std::pair<std::thread::id, Index>> prepared;  ///< (thread, first row)
    std::set<Index> unprepared;                            ///< rows of tiles computed before
  };
  std::shared_ptr<Log> log = std::make_shared<Log>();
  bool throw_in_prepare = false;

  void prepare_rows(const Box<2>& box) const {
    {
      const std::lock_guard lock(log->m);
      log->prepared.insert({std::this_thread::get_id(), box.lo[0]});
    }
    if (throw_in_prepare) throw std::runtime_error("no tables");
  }
  result_type compute_tile(const Box<2>& box, const FaceSet<const face_type, 2>& in,
                           const FaceSet<face_type, 2>& out) const {
    {
      const std::lock_guard lock(log->m);
      if (box.lo[0] > 1 && !log->prepared.contains({std::this_thread::get_id(), box.lo[0]})) {
        log->unprepared.insert(box.lo[0]);
      }
    }
    return FrontierRecurrence::compute_tile(box, in, out);
  }
};

static_assert(PreparedKernel<PreparedRecurrence> && !PreparedKernel<FrontierRecurrence>);
static_assert(ResidentKernel<Recurrence> && !FrontierKernel<Recurrence>);
static_assert(FrontierKernel<FrontierRecurrence> && Kernel<FrontierRecurrence>);
static_assert(halo_width<Recurrence>(0) == 1);

std::uint64_t recurrence_reference(Index n0, Index n1) {
  std::vector<std::uint64_t> a(static_cast<std::size_t>((n0 + 1) * (n1 + 1)));
  auto at = [&](Index i, Index j) -> std::uint64_t& {
    return a[static_cast<std::size_t>(i * (n1 + 1) + j)];
  };
  std::uint64_t sum = 0;
  for (Index i = 0; i <= n0; ++i) {
    for (Index j = 0; j <= n1; ++j) {
      if (i == 0 || j == 0) {
        at(i, j) = static_cast<std::uint64_t>(i == 0 ? j : i);
      } else {
        at(i, j) = at(i - 1, j) + 3 * at(i, j - 1) + static_cast<std::uint64_t>(i * j);
        sum += at(i, j);
      }
    }
  }
  return sum;
}

Expected<std::uint64_t> run_resident(const Recurrence& k, Index n0, Index n1, Point<2> tile,
                                     int threads) {
  const Box<2> bounds{{0, 0}, {n0 + 1, n1 + 1}};
  const Box<2> space{{1, 1}, {n0 + 1, n1 + 1}};
  std::vector<std::uint64_t> a(static_cast<std::size_t>(bounds.volume()), 99);
  SlabView<std::uint64_t, 2> v(a.data(), bounds);
  fill_halo(k, v, space);
  auto tiling = RectTiling<2>::make(space, tile);
  TP_ASSERT(tiling.has_value());
  return run_local(k, v, *tiling, threads);
}

TEST(LocalRunner, resident_and_frontier_match_the_reference) {
  for (int threads : {1, 2, 3}) {
    for (const Point<2>& tile : {Point<2>{1, 1}, Point<2>{3, 5}, Point<2>{7, 2}, Point<2>{50, 50},
                                 Point<2>{23, 4}, Point<2>{2, 31}}) {
      const std::uint64_t ref = recurrence_reference(23, 31);
      auto r = run_resident(Recurrence{}, 23, 31, tile, threads);
      ASSERT_TRUE(r.has_value());
      EXPECT_EQ(*r, ref) << "resident, tile " << tile[0] << "x" << tile[1];
      auto tiling = RectTiling<2>::make(Box<2>{{1, 1}, {24, 32}}, tile);
      ASSERT_TRUE(tiling.has_value());
      auto f = run_local(FrontierRecurrence{}, *tiling, threads);
      ASSERT_TRUE(f.has_value());
      EXPECT_EQ(*f, ref) << "frontier, tile " << tile[0] << "x" << tile[1];
    }
  }
}

TEST(LocalRunner, each_thread_prepares_its_rows_before_their_tiles) {
  const std::uint64_t ref = recurrence_reference(23, 31);
  for (int threads : {1, 2, 3}) {
    for (const bool throws : {false, true}) {
      PreparedRecurrence k;
      k.throw_in_prepare = throws;  // a failed preparation changes nothing
      auto tiling = RectTiling<2>::make(Box<2>{{1, 1}, {24, 32}}, {4, 8});
      ASSERT_TRUE(tiling.has_value());
      auto f = run_local(k, *tiling, threads);
      ASSERT_TRUE(f.has_value()) << f.error().message;
      EXPECT_EQ(*f, ref);
      EXPECT_TRUE(k.log->unprepared.empty()) << threads << " threads";
      std::set<Index> rows;
      for (const auto& [thread, row] : k.log->prepared) rows.insert(row);
      EXPECT_EQ(rows, (std::set<Index>{5, 9, 13, 17, 21})) << "rows after the first, once each";
      EXPECT_EQ(k.log->prepared.size(), 5u);
    }
  }
}

TEST(LocalRunner, a_throwing_kernel_stops_the_run_with_an_error) {
  Recurrence k;
  k.throw_at_row = 10;
  for (int threads : {1, 2}) {
    auto r = run_resident(k, 23, 31, {4, 8}, threads);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::internal);
    EXPECT_EQ(r.error().message, "kernel failed in tile (2, 0): boom");
  }
}

TEST(LocalRunner, a_throwing_frontier_kernel_stops_the_pipelined_rows) {
  // Rows of tiles pipelined over the threads: the threads waiting on the failed row must leave.
  FrontierRecurrence k;
  k.throw_at_row = 10;
  auto tiling = RectTiling<2>::make(Box<2>{{1, 1}, {24, 32}}, {4, 8});
  ASSERT_TRUE(tiling.has_value());
  for (int threads : {1, 2, 3}) {
    auto r = run_local(k, *tiling, threads);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::internal);
    EXPECT_EQ(r.error().message, "kernel failed in tile (2, 0): boom");
  }
}

TEST(StepTeam, every_step_completes_before_the_next_starts) {
  for (int threads : {1, 2, 3}) {
    std::vector<std::atomic<int>> done(50);
    std::atomic<int> violations{0};
    run_steps(threads, 50, [&](int, Index s) {
      if (s > 0 && done[static_cast<std::size_t>(s - 1)].load() != threads) ++violations;
      ++done[static_cast<std::size_t>(s)];
    });
    EXPECT_EQ(violations.load(), 0);
    for (auto& d : done) EXPECT_EQ(d.load(), threads);
  }
}

TEST(StepTeam, every_wait_mode_orders_the_steps_and_publishes_their_writes) {
  // Plain (non-atomic) writes of step s read by other threads in step s + 1: the barrier must
  // order them in every mode (ThreadSanitizer checks the happens-before in its build).
  using tp::comm::SyncMode;
  const std::vector<TeamWait> waits = {{SyncMode::poll, std::chrono::nanoseconds(0)},
                                       {SyncMode::block, std::chrono::nanoseconds(0)},
                                       {SyncMode::hybrid, std::chrono::microseconds(50)},
                                       {SyncMode::hybrid, std::chrono::nanoseconds(0)}};
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  for (const TeamWait& wait : waits) {
    for (int threads : {1, 2, 3, 4}) {
      // Spinning threads beyond the cores wait for a time slice at every step: seconds.
      const bool spins = wait.sync == SyncMode::poll || wait.spin.count() > 0;
      if (spins && threads > std::max(2, cores)) continue;
      constexpr Index steps = 200;
      // Two rows: step s writes row s % 2 and reads row (s - 1) % 2, which step s - 1 wrote.
      std::vector<std::vector<Index>> cell(
          2, std::vector<Index>(static_cast<std::size_t>(threads), -1));
      std::atomic<int> violations{0};
      run_steps(
          threads, steps,
          [&](int t, Index s) {
            if (s > 0) {
              for (Index v : cell[static_cast<std::size_t>((s - 1) % 2)]) {
                if (v != s - 1) ++violations;
              }
            }
            cell[static_cast<std::size_t>(s % 2)][static_cast<std::size_t>(t)] = s;
          },
          wait);
      EXPECT_EQ(violations.load(), 0) << tp::comm::to_string(wait.sync) << " " << threads;
      std::vector<std::atomic<int>> done(static_cast<std::size_t>(steps));
      run_steps(
          threads, steps,
          [&](int, Index s) {
            if (s > 0 && done[static_cast<std::size_t>(s - 1)].load() != threads) ++violations;
            ++done[static_cast<std::size_t>(s)];
          },
          wait);
      EXPECT_EQ(violations.load(), 0) << tp::comm::to_string(wait.sync) << " " << threads;
    }
  }
}

TEST(SpinWait, returns_the_first_ready_value_spinning_or_after_sleeping) {
  std::atomic<int> word{3};
  EXPECT_EQ(spin_then_wait(word, [](int v) { return v >= 3; }), 3);
  // Not ready: a writer stores and notifies later; with no spin the waiter sleeps (futex path),
  // with a spin shorter than the delay it spins, then sleeps.
  for (const auto spin : {std::chrono::nanoseconds(0), std::chrono::nanoseconds(200000)}) {
    word.store(0);
    std::jthread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      word.store(4);  // not yet ready: the waiter must wait again
      word.notify_all();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      word.store(7);
      word.notify_all();
    });
    EXPECT_EQ(spin_then_wait(
                  word, [](int v) { return v >= 5; }, spin),
              7);
  }
}

// A waiter spins only where each thread of the host has a CPU of its own in the affinity mask
// (a batch system's cpuset, taskset), not the machine's count.
TEST(SpinWait, spins_only_where_each_thread_has_a_cpu_of_the_affinity_mask) {
  using tp::exec::affinity_cpus;
  using tp::exec::dedicated_spin;
  using tp::exec::team_spin;
  const std::int64_t n = affinity_cpus();
  ASSERT_GE(n, 1);
  EXPECT_EQ(dedicated_spin(n), team_spin);
  EXPECT_EQ(dedicated_spin(1), team_spin);
  EXPECT_EQ(dedicated_spin(n + 1), std::chrono::nanoseconds(0));
  EXPECT_EQ(dedicated_spin(0), std::chrono::nanoseconds(0));
#ifdef __linux__
  // This thread restricted to one of its CPUs: two threads no longer spin.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  int first = 0;
  while (!CPU_ISSET(first, &mine)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(affinity_cpus(), 1);
  EXPECT_EQ(dedicated_spin(1), team_spin);
  EXPECT_EQ(dedicated_spin(2), std::chrono::nanoseconds(0));
  ASSERT_EQ(sched_setaffinity(0, sizeof mine, &mine), 0);
  EXPECT_EQ(affinity_cpus(), n);
#endif
}

#ifdef __linux__
TEST(StepTeam, workers_run_on_the_creators_cpus_once_the_team_starts) {
  // Workers start away from the creator's CPU (ADR 0033) and then take its CPU set back.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof mine, &mine), 0);
  for (int threads : {2, 3}) {
    std::vector<int> same(static_cast<std::size_t>(threads), 0);
    run_steps(threads, 2, [&](int t, Index) {
      cpu_set_t theirs;
      CPU_ZERO(&theirs);
      if (pthread_getaffinity_np(pthread_self(), sizeof theirs, &theirs) == 0) {
        same[static_cast<std::size_t>(t)] = CPU_EQUAL(&theirs, &mine) ? 1 : 0;
      }
    });
    for (int t = 0; t < threads; ++t) EXPECT_EQ(same[static_cast<std::size_t>(t)], 1) << t;
  }
}
#endif

TEST(StepTeam, rethrows_the_first_exception_and_skips_later_steps) {
  std::atomic<int> after{0};
  EXPECT_THROW(run_steps(2, 10,
                         [&](int t, Index s) {
                           if (s == 3 && t == 1) throw std::logic_error("x");
                           if (s > 3) ++after;
                         }),
               std::logic_error);
  EXPECT_EQ(after.load(), 0);
}

}  // namespace
}  // namespace tp::exec
