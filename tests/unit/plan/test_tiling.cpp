// Unit tests of tilings: tile_of, legality (HD >= 0, |HD| < 1), D^S and the tile space.
#include <tilepipe/plan/tiling.hpp>

#include <gtest/gtest.h>

#include <set>

namespace {

using tp::plan::DependenceMatrix;
using tp::plan::Index;
using tp::plan::IterationSpace;
using tp::plan::TileSpace;
using tp::plan::Tiling;

TEST(Tiling, rectangular_tile_of_starts_at_iteration_one) {
  auto t = *Tiling::rectangular({4, 1024});
  EXPECT_EQ(t.tile_of({1, 1}), (Index{0, 0}));
  EXPECT_EQ(t.tile_of({4, 1024}), (Index{0, 0}));
  EXPECT_EQ(t.tile_of({5, 1025}), (Index{1, 1}));
  EXPECT_EQ(t.grain(), tp::plan::Rational(4096));
}

TEST(Tiling, rejects_zero_tile_size_naming_the_dimension) {
  auto t = Tiling::rectangular({4, 0, 2});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message, "tile size 0 in dimension 2: tile sizes must be >= 1");
}

TEST(Tiling, negative_dependence_needs_skewing) {
  auto t = *Tiling::rectangular({4, 4});
  auto d = *DependenceMatrix::parse("1,0;1,-1");
  auto legal = check_legal(t, d);
  ASSERT_FALSE(legal);
  EXPECT_EQ(legal.error().code, tp::Errc::illegal_tiling);
  EXPECT_EQ(legal.error().message,
            "illegal tiling: dependence (1, -1) has (H d)_2 = -1/4 < 0 (HD >= 0 fails, tiles "
            "would not be atomic): the space must be skewed first");
}

TEST(Tiling, dependence_as_long_as_the_tile_is_illegal) {
  auto t = *Tiling::rectangular({4, 2});
  auto legal = check_legal(t, *DependenceMatrix::parse("1,0;0,2"));
  ASSERT_FALSE(legal);
  EXPECT_EQ(legal.error().message,
            "illegal tiling: dependence (0, 2) is not shorter than the tile side in dimension 2 "
            "(tile size 2; |HD| < 1 fails)");
  EXPECT_TRUE(check_legal(t, *DependenceMatrix::parse("1,0;0,1")));
}

TEST(Tiling, skewed_matrix_makes_a_negative_dependence_legal) {
  // H = [[1/4, 0], [1/4, 1/4]]: (H (1,-1))_2 = 0, so the dependence (1,-1) is legal.
  auto h = *tp::plan::parse_rational_matrix("1/4,0;1/4,1/4", "H");
  auto t = *Tiling::general(h);
  EXPECT_FALSE(t.is_rectangular());
  EXPECT_TRUE(check_legal(t, *DependenceMatrix::parse("1,-1;0,1")));
}

TEST(Tiling, tile_dependences_of_unit_and_diagonal_vectors) {
  auto t = *Tiling::rectangular({4, 4});
  EXPECT_EQ(*tile_dependences(t, DependenceMatrix::unit(2)), (std::vector<Index>{{0, 1}, {1, 0}}));
  EXPECT_EQ(*tile_dependences(t, *DependenceMatrix::parse("1,0;0,1;1,1")),
            (std::vector<Index>{{0, 1}, {1, 0}, {1, 1}}));
}

TEST(Tiling, tile_dependences_by_enumeration_match_the_definition) {
  // A diagonal H with a non-unit numerator takes the enumeration path.
  auto h = *tp::plan::parse_rational_matrix("2/7,0;0,1/3", "H");
  auto t = *Tiling::general(h);
  ASSERT_FALSE(t.is_rectangular());
  auto ds = *tile_dependences(t, *DependenceMatrix::parse("1,0;0,1;1,1"));
  // Brute force from the definition: d^S = floor(H(j0 + d)) for all j0 with floor(H j0) = 0.
  std::set<Index> expected;
  for (std::int64_t a = -10; a <= 10; ++a) {
    for (std::int64_t b = -10; b <= 10; ++b) {
      if (h.apply_floor({a, b}) != Index{0, 0}) continue;
      for (const Index& d : std::vector<Index>{{1, 0}, {0, 1}, {1, 1}}) {
        auto x = h.apply_floor({a + d[0], b + d[1]});
        if (x != Index{0, 0}) expected.insert(x);
      }
    }
  }
  EXPECT_EQ(ds, std::vector<Index>(expected.begin(), expected.end()));
}

TEST(TileSpace, partial_tiles_at_upper_boundaries) {
  auto space = *IterationSpace::make({10, 7});
  auto t = *Tiling::rectangular({4, 3});
  auto ts = *TileSpace::make(space, t);
  EXPECT_EQ(ts.counts(), (Index{3, 3}));
  EXPECT_EQ(ts.size(), 9);
  auto last = tile_box(space, t, {2, 2});
  EXPECT_EQ(last.lo, (Index{9, 7}));
  EXPECT_EQ(last.hi, (Index{10, 7}));
}

TEST(TileSpace, general_matrix_enumerates_exactly_the_touched_tiles) {
  auto space = *IterationSpace::make({9, 9});
  auto t = *Tiling::general(*tp::plan::parse_rational_matrix("1/3,0;1/6,1/6", "H"));
  auto ts = *TileSpace::make(space, t);
  std::set<Index> touched;
  for (std::int64_t i = 1; i <= 9; ++i) {
    for (std::int64_t j = 1; j <= 9; ++j) touched.insert(t.tile_of({i, j}));
  }
  EXPECT_EQ(ts.size(), static_cast<std::int64_t>(touched.size()));
  std::set<Index> visited;
  ts.for_each([&](const Index& tile) { visited.insert(tile); });
  EXPECT_EQ(visited, touched);
  EXPECT_FALSE(ts.is_box());
}

TEST(Tiling, huge_matrix_entries_overflow_into_errors_not_aborts) {
  // The fuzzer's finding (tests/fuzz/corpus/fuzz_plan_values/tiling-matrix-overflow-abort): H d
  // = 11 * 950619563651710338/625 does not fit 64 bits.
  auto h = *tp::plan::parse_rational_matrix("1/4,0;0,1520991301842736.5408", "H");
  auto t = *Tiling::general(h);
  auto legal = check_legal(t, *DependenceMatrix::parse("1,0;0,11"));
  ASSERT_FALSE(legal);
  EXPECT_EQ(legal.error().code, tp::Errc::out_of_range);
  EXPECT_EQ(legal.error().message,
            "tiling matrix: H d overflows 64 bits for dependence (0, 11) (entries of H too large)");
  // Legal for (1, 0) alone, but the tile of point (1, 64) is 63 * that entry: the tile space
  // overflows.
  const auto deps = *DependenceMatrix::parse("1,0");
  ASSERT_TRUE(check_legal(t, deps));
  EXPECT_TRUE(tile_dependences(t, deps));
  auto ts = TileSpace::make(*IterationSpace::make({64, 64}), t);
  ASSERT_FALSE(ts);
  EXPECT_EQ(ts.error().code, tp::Errc::out_of_range);
  EXPECT_EQ(ts.error().message,
            "tiling matrix: the tiles' coordinates overflow 64 bits (entries of H too large)");
  EXPECT_EQ(t.h().checked_apply({1, 11}), std::nullopt);
  EXPECT_EQ(t.h().checked_apply_floor({4, 0}), (std::optional<Index>{Index{1, 0}}));
}

TEST(IterationSpace, rejects_overflowing_point_counts_and_bad_dims) {
  auto big = IterationSpace::make({1LL << 40, 1LL << 40});
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, tp::Errc::out_of_range);
  EXPECT_FALSE(IterationSpace::make({5}));
  EXPECT_FALSE(IterationSpace::make({2, 2, 2, 2, 2, 2, 2}));
  EXPECT_TRUE(IterationSpace::make({2, 2, 2, 2, 2, 2}));
}

TEST(DependenceMatrix, rejects_zero_and_ragged_vectors) {
  EXPECT_FALSE(DependenceMatrix::parse("0,0;1,0"));
  auto ragged = DependenceMatrix::parse("1,0;0,1,0");
  ASSERT_FALSE(ragged);
  EXPECT_EQ(ragged.error().message, "--deps: vector 2 has 3 entries but vector 1 has 2");
  EXPECT_FALSE(DependenceMatrix::parse("1,x"));
}

}  // namespace
