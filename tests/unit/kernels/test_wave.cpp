// wave2d/3d/4d: formula checks against hand and independent values, tiled runs vs the reference.
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/kernels/wave.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

namespace tp::kernels {
namespace {

TEST(Wave, splitmix64_matches_published_vectors) {
  // The first two outputs of the splitmix64 generator seeded with 0.
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(golden_gamma), 0x6e789e6aa1b965f4ULL);
}

TEST(Wave, boundary_values_follow_the_formula) {
  EXPECT_EQ(wave_boundary_value<2>({0, 0}), 0.0f);
  EXPECT_EQ(wave_boundary_value<2>({0, 1}), 13.0f / 101.0f);
  EXPECT_EQ(wave_boundary_value<3>({2, 0, 5}), 58.0f / 101.0f);  // 14 + 145 = 159 = 101 + 58
  EXPECT_EQ(wave_boundary_value<3>({3, 0, 5}), 65.0f / 101.0f);  // 21 + 145 = 166 -> 65
  EXPECT_EQ(wave_boundary_value<4>({0, 1, 1, 1}), 73.0f / 101.0f);
  // The sum is taken in 64 bits: 31 * 2^40 mod 101.
  const std::int64_t big = std::int64_t{1} << 40;
  EXPECT_EQ(wave_boundary_value<4>({0, 0, 0, big}), static_cast<float>((31 * big) % 101) / 101.0f);
}

TEST(Wave, tiny_2d_array_by_hand) {
  const auto a = wave2d_reference(1, 2);  // 2 x 3 array
  const float b01 = 13.0f / 101.0f, b02 = 26.0f / 101.0f, b10 = 7.0f / 101.0f;
  const float a11 = 0.45f * b01 + 0.55f * b10;
  const float a12 = 0.45f * b02 + 0.55f * a11;
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[0], 0.0f);
  EXPECT_EQ(a[1], b01);
  EXPECT_EQ(a[3], b10);
  EXPECT_EQ(a[4], a11);
  EXPECT_EQ(a[5], a12);
  const std::uint64_t expected = wave_point_hash(4, a11) + wave_point_hash(5, a12);
  EXPECT_EQ(wave_reference_checksum(a, {1, 2}), expected);
  EXPECT_EQ(wave_point_hash(4, a11), splitmix64(4 * golden_gamma + std::bit_cast<uint32_t>(a11)));
}

TEST(Wave, order_of_operations_is_left_to_right_without_fma) {
  // 3-D point (1,1,1): ((w1*A[0,1,1] + w2*A[1,0,1]) + w3*A[1,1,0]), each step rounded.
  const auto a = wave3d_reference(1, 1, 1);
  const float x = wave_boundary_value<3>({0, 1, 1});
  const float y = wave_boundary_value<3>({1, 0, 1});
  const float z = wave_boundary_value<3>({1, 1, 0});
  const volatile float p1 = 0.25f * x, p2 = 0.35f * y, p3 = 0.4f * z;
  const volatile float s12 = p1 + p2;
  const float expected = s12 + p3;
  EXPECT_EQ(std::bit_cast<uint32_t>(a[7]), std::bit_cast<uint32_t>(expected));
}

// Golden values from tests/data/wave_golden.py, an independent float32 model in Python.
struct Golden {
  std::vector<Index> n;
  std::uint64_t checksum;
  std::uint32_t last_bits;
};

TEST(Wave, reference_matches_independent_model) {
  const Golden cases[] = {
      {{1, 1}, 0x6d030ca5d667360cULL, 0x3dc4b06a},
      {{3, 4}, 0xeff31c0bb235698cULL, 0x3e63162e},
      {{5, 7}, 0x2379edd52758996aULL, 0x3ea1f8db},
      {{2, 3, 4}, 0xbde4933e21a5e6d4ULL, 0x3eef9cee},
      {{4, 3, 5}, 0x1ecdad84b7d280bcULL, 0x3eeb09e0},
      {{2, 2, 3, 2}, 0xded30711f4377233ULL, 0x3f005df3},
  };
  for (const auto& c : cases) {
    const auto a = wave_reference(c.n);
    EXPECT_EQ(wave_reference_checksum(a, c.n), c.checksum) << c.n.size() << "-D";
    EXPECT_EQ(std::bit_cast<uint32_t>(a.back()), c.last_bits) << c.n.size() << "-D";
  }
}

TEST(Wave, format_checksum_is_16_lowercase_hex_digits) {
  EXPECT_EQ(format_checksum(0xABCULL), "0000000000000abc");
  EXPECT_EQ(format_checksum(0xded30711f4377233ULL), "ded30711f4377233");
}

TEST(Wave, make_rejects_bad_sizes) {
  EXPECT_FALSE(Wave<2>::make({0, 3}).has_value());
  EXPECT_FALSE(Wave<3>::make({1LL << 30, 1LL << 30, 1LL << 30}).has_value());
  EXPECT_TRUE(Wave<3>::make({1, 1, 1}).has_value());
}

// Computes the space tile by tile in a random legal order (any topological order of the tile
// grid: a random linear extension), on one slab, and returns the checksum of tile_result sums.
template <int D>
std::uint64_t tiled_checksum(const Point<D>& n, const Point<D>& tile, std::mt19937_64& rng,
                             std::vector<float>& out) {
  auto wave = Wave<D>::make(n);
  EXPECT_TRUE(wave.has_value());
  const auto box = wave->array_box();
  std::vector<float> slab_data(static_cast<std::size_t>(box.volume()), -1.0f);
  exec::SlabView<float, D> slab(slab_data.data(), box);
  exec::fill_halo(*wave, slab, wave->space());
  auto tiling = exec::RectTiling<D>::make(wave->space(), tile);
  EXPECT_TRUE(tiling.has_value());
  // done[c] counts finished predecessors; pick a random ready tile each time.
  const Index total = tiling->tiles();
  std::vector<Point<D>> ready{Point<D>{}};
  std::vector<int> waiting(static_cast<std::size_t>(total), 0);
  auto lin = [&](const Point<D>& c) {
    Index l = 0;
    for (int d = 0; d < D; ++d) l = l * tiling->count(d) + c[d];
    return static_cast<std::size_t>(l);
  };
  std::uint64_t sum = 0;
  for (Index done = 0; done < total; ++done) {
    EXPECT_FALSE(ready.empty());
    std::uniform_int_distribution<std::size_t> pick(0, ready.size() - 1);
    const std::size_t i = pick(rng);
    const Point<D> c = ready[i];
    ready[i] = ready.back();
    ready.pop_back();
    wave->compute_tile(tiling->box_of(c), slab);
    sum += wave->tile_result(tiling->box_of(c), slab);
    for (int d = 0; d < D; ++d) {
      Point<D> s = c;
      if (++s[d] >= tiling->count(d)) continue;
      int preds = 0;
      for (int e = 0; e < D; ++e) preds += s[e] > 0 ? 1 : 0;
      if (++waiting[lin(s)] == preds) ready.push_back(s);
    }
  }
  out = std::move(slab_data);
  return sum;
}

template <int D>
void check_random_tilings(std::uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed);
  for (int r = 0; r < rounds; ++r) {
    Point<D> n{}, tile{};
    std::vector<Index> nv;
    const Index max_n = D == 2 ? 40 : D == 3 ? 14 : 7;
    for (int d = 0; d < D; ++d) {
      n[d] = std::uniform_int_distribution<Index>(1, max_n)(rng);
      tile[d] = std::uniform_int_distribution<Index>(1, n[d] + 2)(rng);
      nv.push_back(n[d]);
    }
    const auto ref = wave_reference(nv);
    std::vector<float> tiled;
    const std::uint64_t sum = tiled_checksum<D>(n, tile, rng, tiled);
    ASSERT_EQ(sum, wave_reference_checksum(ref, nv)) << "seed " << seed << " round " << r;
    ASSERT_EQ(tiled.size(), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(tiled[i]), std::bit_cast<uint32_t>(ref[i]))
          << "seed " << seed << " round " << r << " element " << i;
    }
  }
}

TEST(Wave, tiles_in_random_order_match_reference_2d) {
  check_random_tilings<2>(0x2d, 300);
}
TEST(Wave, tiles_in_random_order_match_reference_3d) {
  check_random_tilings<3>(0x3d, 150);
}
TEST(Wave, tiles_in_random_order_match_reference_4d) {
  check_random_tilings<4>(0x4d, 80);
}

template <int D>
void check_runner(const Point<D>& n, const Point<D>& tile, int threads) {
  auto wave = Wave<D>::make(n);
  ASSERT_TRUE(wave.has_value());
  const auto box = wave->array_box();
  std::vector<float> data(static_cast<std::size_t>(box.volume()));
  exec::SlabView<float, D> slab(data.data(), box);
  exec::fill_halo(*wave, slab, wave->space());
  auto tiling = exec::RectTiling<D>::make(wave->space(), tile);
  ASSERT_TRUE(tiling.has_value());
  auto sum = exec::run_local(*wave, slab, *tiling, threads);
  ASSERT_TRUE(sum.has_value()) << sum.error().message;
  const std::vector<Index> nv(n.begin(), n.end());
  const auto ref = wave_reference(nv);
  EXPECT_EQ(format_checksum(*sum), format_checksum(wave_reference_checksum(ref, nv)));
  EXPECT_EQ(data, ref);
}

TEST(Wave, local_runner_matches_reference) {
  for (int threads : {1, 2}) {
    check_runner<2>({37, 29}, {8, 5}, threads);
    check_runner<3>({9, 11, 40}, {4, 3, 7}, threads);
    check_runner<3>({16, 16, 300}, {16, 16, 64}, threads);
    check_runner<4>({5, 6, 4, 9}, {2, 4, 3, 4}, threads);
  }
}

}  // namespace
}  // namespace tp::kernels
