// sor2d/sor3d: the plain loop by hand, the skewed frontier kernel against it over random tilings.
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/kernels/sor.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

namespace tp::kernels {
namespace {

TEST(Sor, skewed_dependences_are_non_negative_images_of_the_original_ones) {
  const std::array<exec::Dependence<3>, 5> original{
      {{0, 1, 0}, {0, 0, 1}, {1, -1, 0}, {1, 0, -1}, {1, 0, 0}}};
  EXPECT_EQ(Sor<2>::original_deps, original);
  const std::array<exec::Dependence<3>, 5> skewed{
      {{0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}}};
  EXPECT_EQ(Sor<2>::deps, skewed);
  for (const auto& d : Sor<3>::deps) {
    for (const auto c : d) EXPECT_GE(c, 0);
  }
}

TEST(Sor, one_sweep_of_a_tiny_grid_by_hand) {
  const double w = 1.5;
  const auto u = sor2d_reference(1, 2, 1, w);  // 3 x 4 array, interior (1,1), (1,2)
  auto b = [](std::int64_t i, std::int64_t j) {
    return static_cast<double>((7 * i + 13 * j) % 101) / 101.0;
  };
  const double c0 = 1.0 - w, c1 = w / 4.0;
  const volatile double s11 = ((b(0, 1) + b(1, 0)) + b(2, 1)) + 0.0;
  const double u11 = c0 * 0.0 + c1 * s11;
  const volatile double s12 = ((b(0, 2) + u11) + b(2, 2)) + b(1, 3);
  const double u12 = c0 * 0.0 + c1 * s12;
  ASSERT_EQ(u.size(), 12u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(u[5]), std::bit_cast<std::uint64_t>(u11));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(u[6]), std::bit_cast<std::uint64_t>(u12));
  EXPECT_EQ(u[11], b(2, 3));
  EXPECT_EQ(sor_reference_checksum(u, {1, 2}), sor_point_hash(5, u11) + sor_point_hash(6, u12));
}

TEST(Sor, make_refuses_bad_parameters) {
  EXPECT_FALSE(Sor<2>::make({4, 4}, 0, 1.0));
  EXPECT_FALSE(Sor<2>::make({4, 4}, -3, 1.0));
  EXPECT_FALSE(Sor<2>::make({4, 4}, 1, 0.0));
  EXPECT_FALSE(Sor<2>::make({4, 4}, 1, 2.0));
  EXPECT_FALSE(Sor<2>::make({0, 4}, 1, 1.0));
  EXPECT_FALSE(Sor<3>::make({std::int64_t{1} << 40, 1 << 20, 1 << 20}, 1, 1.0));
  EXPECT_TRUE(Sor<3>::make({1, 1, 1}, 1, 1.9));
}

template <int S>
std::uint64_t tiled(const Sor<S>& k, const exec::Point<S + 1>& tile, int threads) {
  constexpr int D = S + 1;
  exec::Box<D> space;
  const auto e = k.exec_size();
  for (int d = 0; d < D; ++d) space.lo[d] = 1, space.hi[d] = 1 + e[d];
  auto tiling = exec::RectTiling<D>::make(space, tile);
  EXPECT_TRUE(tiling.has_value());
  auto r = exec::run_local(k, *tiling, threads);
  EXPECT_TRUE(r.has_value());
  return r ? *r : 0;
}

// Random grids (extents of 1 included), sweeps, omega and tiles (non-dividing, taller than one
// sweep): the tiled skewed run equals the plain loop bit for bit (the checksum hashes every bit).
TEST(Sor, random_tilings_equal_the_plain_loop_2d) {
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 60; ++trial) {
    std::uniform_int_distribution<std::int64_t> ext(1, 9), sweeps(1, 6), tl(1, 7);
    const std::int64_t n1 = ext(rng), n2 = ext(rng), t = sweeps(rng);
    const double w = std::uniform_real_distribution<double>(0.1, 1.9)(rng);
    auto k = Sor<2>::make({n1, n2}, t, w);
    ASSERT_TRUE(k.has_value());
    const exec::Point<3> tile{tl(rng), tl(rng), tl(rng)};
    const int threads = 1 + trial % 2;
    const auto want = sor_reference_checksum(sor2d_reference(n1, n2, t, w), {n1, n2});
    EXPECT_EQ(tiled<2>(*k, tile, threads), want)
        << "seed 20261125 trial " << trial << ": " << n1 << "x" << n2 << " T=" << t << " tile "
        << tile[0] << "x" << tile[1] << "x" << tile[2];
  }
}

TEST(Sor, random_tilings_equal_the_plain_loop_3d) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    std::uniform_int_distribution<std::int64_t> ext(1, 6), sweeps(1, 4), tl(1, 5);
    const std::int64_t n1 = ext(rng), n2 = ext(rng), n3 = ext(rng), t = sweeps(rng);
    const double w = std::uniform_real_distribution<double>(0.1, 1.9)(rng);
    auto k = Sor<3>::make({n1, n2, n3}, t, w);
    ASSERT_TRUE(k.has_value());
    const exec::Point<4> tile{tl(rng), tl(rng), tl(rng), tl(rng)};
    const auto want = sor_reference_checksum(sor3d_reference(n1, n2, n3, t, w), {n1, n2, n3});
    EXPECT_EQ(tiled<3>(*k, tile, 1 + trial % 2), want)
        << "seed 7 trial " << trial << ": " << n1 << "x" << n2 << "x" << n3 << " T=" << t;
  }
}

TEST(Sor, one_tile_over_everything_equals_the_plain_loop) {
  auto k = Sor<2>::make({13, 5}, 9, 1.3);
  ASSERT_TRUE(k.has_value());
  const auto e = k->exec_size();
  EXPECT_EQ(tiled<2>(*k, e, 1), sor_reference_checksum(sor2d_reference(13, 5, 9, 1.3), {13, 5}));
}

}  // namespace
}  // namespace tp::kernels

namespace tp::kernels {
namespace {

// computed_points counts the points of a box of the skewed space that are points of the loop
// nest (x_0 = t in 1..T, x_s + 1 - t in 1..N_s): brute force over random boxes, in and beyond
// the space.
TEST(Sor, computed_points_are_the_boxs_points_of_the_loop_nest) {
  std::mt19937_64 rng(27);
  for (int trial = 0; trial < 200; ++trial) {
    const exec::Point<2> n{static_cast<Index>(1 + rng() % 9), static_cast<Index>(1 + rng() % 9)};
    const auto t = static_cast<std::int64_t>(1 + rng() % 6);
    auto k = Sor<2>::make(n, t, 1.5);
    ASSERT_TRUE(k.has_value());
    exec::Box<3> box;
    const exec::Point<3> e = k->exec_size();
    for (int d = 0; d < 3; ++d) {
      box.lo[d] = 1 + static_cast<Index>(rng() % static_cast<std::uint64_t>(e[d] + 2));
      box.hi[d] = box.lo[d] + static_cast<Index>(rng() % static_cast<std::uint64_t>(e[d] + 2));
    }
    Index brute = 0;
    for (Index x0 = box.lo[0]; x0 < box.hi[0]; ++x0) {
      for (Index x1 = box.lo[1]; x1 < box.hi[1]; ++x1) {
        for (Index x2 = box.lo[2]; x2 < box.hi[2]; ++x2) {
          const Index i = x1 + 1 - x0;
          const Index j = x2 + 1 - x0;
          if (x0 >= 1 && x0 <= t && i >= 1 && i <= n[0] && j >= 1 && j <= n[1]) ++brute;
        }
      }
    }
    EXPECT_EQ(k->computed_points(box), brute) << trial;
  }
  // The whole executor space holds exactly the loop nest's T x N_1 x N_2 points.
  auto k = Sor<2>::make(exec::Point<2>{7, 5}, 3, 1.0);
  ASSERT_TRUE(k.has_value());
  exec::Box<3> all;
  for (int d = 0; d < 3; ++d) {
    all.lo[d] = 1;
    all.hi[d] = 1 + k->exec_size()[d];
  }
  EXPECT_EQ(k->computed_points(all), 3 * 7 * 5);
}

}  // namespace
}  // namespace tp::kernels
