// Unit and compile-time tests of overflow-checked arithmetic and floor/ceil division.
#include <tilepipe/support/checked_math.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

static_assert(tp::floor_div(-1, 4) == -1);
static_assert(tp::floor_div(-4, 4) == -1);
static_assert(tp::floor_div(7, 4) == 1);
static_assert(tp::ceil_div(7, 4) == 2);
static_assert(tp::ceil_div(8, 4) == 2);
static_assert(tp::ceil_div(0, 4) == 0);

TEST(CheckedMath, detects_overflow) {
  EXPECT_FALSE(tp::checked_mul(INT64_MAX / 2 + 1, 2));
  EXPECT_EQ(*tp::checked_mul(3, 4), 12);
  EXPECT_FALSE(tp::checked_add(INT64_MAX, 1));
  EXPECT_EQ(*tp::checked_add(-5, 5), 0);
}

TEST(CheckedMath, floor_div_matches_floating_floor) {
  for (std::int64_t a = -50; a <= 50; ++a) {
    for (std::int64_t b = 1; b <= 7; ++b) {
      const auto expected =
          static_cast<std::int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
      EXPECT_EQ(tp::floor_div(a, b), expected) << a << "/" << b;
    }
  }
}

}  // namespace
