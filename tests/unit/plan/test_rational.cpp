// Unit tests of exact rationals and rational matrices (inverse, determinant, parsing).
#include <tilepipe/plan/rational_matrix.hpp>

#include <gtest/gtest.h>

namespace {

using tp::plan::Rational;
using tp::plan::RationalMatrix;

TEST(Rational, reduces_and_orders) {
  EXPECT_EQ(Rational(2, 8), Rational(1, 4));
  EXPECT_EQ(Rational(3, -6), Rational(-1, 2));
  EXPECT_LT(Rational(1, 3), Rational(1, 2));
  EXPECT_EQ(Rational(1, 4) + Rational(1, 4), Rational(1, 2));
  EXPECT_EQ(Rational(2, 3) * Rational(3, 4), Rational(1, 2));
  EXPECT_EQ(Rational(1, 2) / Rational(1, 4), Rational(2));
}

TEST(Rational, floor_rounds_toward_minus_infinity) {
  EXPECT_EQ(Rational(7, 4).floor(), 1);
  EXPECT_EQ(Rational(-1, 4).floor(), -1);
  EXPECT_EQ(Rational(-8, 4).floor(), -2);
  EXPECT_EQ(Rational(0).floor(), 0);
}

TEST(Rational, detects_overflow) {
  EXPECT_FALSE(checked_mul(Rational(INT64_MAX / 2), Rational(3)));
  EXPECT_TRUE(checked_mul(Rational(INT64_MAX / 2), Rational(1, 3)));
}

TEST(Rational, parses_fractions_decimals_and_integers) {
  EXPECT_EQ(*tp::plan::parse_rational("1/4", "H"), Rational(1, 4));
  EXPECT_EQ(*tp::plan::parse_rational("-3/6", "H"), Rational(-1, 2));
  EXPECT_EQ(*tp::plan::parse_rational("0.125", "H"), Rational(1, 8));
  EXPECT_EQ(*tp::plan::parse_rational("-0.5", "H"), Rational(-1, 2));
  EXPECT_EQ(*tp::plan::parse_rational("7", "H"), Rational(7));
  EXPECT_FALSE(tp::plan::parse_rational("1/0", "H"));
  EXPECT_FALSE(tp::plan::parse_rational("abc", "H"));
  EXPECT_FALSE(tp::plan::parse_rational("1.", "H"));
}

TEST(RationalMatrix, inverts_the_seed_grouping_matrix) {
  // Seed 002 Example 2: P^G = [[2,0,0],[0,1,0],[-2,-1,1]], H^G = [[1/2,0,0],[0,1,0],[1,1,1]].
  auto pg = *tp::plan::parse_rational_matrix("2,0,0;0,1,0;-2,-1,1", "P");
  auto hg = *tp::plan::parse_rational_matrix("1/2,0,0;0,1,0;1,1,1", "H");
  auto inv = pg.inverse();
  ASSERT_TRUE(inv);
  EXPECT_EQ(*inv, hg);
  EXPECT_EQ(*pg.determinant(), Rational(2));
}

TEST(RationalMatrix, rejects_singular_matrix) {
  auto m = *tp::plan::parse_rational_matrix("1,2;2,4", "H");
  auto inv = m.inverse();
  ASSERT_FALSE(inv);
  EXPECT_NE(inv.error().message.find("singular"), std::string::npos);
  EXPECT_EQ(*m.determinant(), Rational(0));
}

TEST(RationalMatrix, rejects_non_square_text) {
  auto m = tp::plan::parse_rational_matrix("1,0;0", "--tiling-matrix");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "--tiling-matrix: row 2 has 1 entries but the matrix has 2 rows (it must be square)");
}

TEST(RationalMatrix, inverse_times_matrix_is_identity_for_random_matrices) {
  std::uint64_t state = 12345;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::int64_t>((state >> 33) % 9) - 4;
  };
  int inverted = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + trial % 4;
    RationalMatrix m(n);
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) m.at(r, c) = Rational(next(), 1 + (next() + 4) % 3);
    }
    auto inv = m.inverse();
    if (!inv) {
      EXPECT_EQ(*m.determinant(), Rational(0));
      continue;
    }
    ++inverted;
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) {
        Rational s = 0;
        for (int k = 0; k < n; ++k) s = s + m.at(r, k) * inv->at(k, c);
        EXPECT_EQ(s, Rational(r == c ? 1 : 0));
      }
    }
  }
  EXPECT_GT(inverted, 100);
}

}  // namespace
