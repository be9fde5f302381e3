// Unit tests of the command-line value parsers.
#include <tilepipe/support/parse.hpp>

#include <gtest/gtest.h>

namespace {

TEST(ParseInt, accepts_whole_numbers_in_range) {
  EXPECT_EQ(*tp::parse_int("42", "--n"), 42);
  EXPECT_EQ(*tp::parse_int(" -7 ", "--n"), -7);
  EXPECT_EQ(*tp::parse_int("+3", "--n"), 3);
}

TEST(ParseInt, rejects_non_numbers_with_the_value_named) {
  auto r = tp::parse_int("12a", "--nodes");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "--nodes: '12a' is not a whole number");
  EXPECT_TRUE(r.error().is_user_error());
  EXPECT_FALSE(tp::parse_int("", "--nodes"));
  EXPECT_FALSE(tp::parse_int("1.5", "--nodes"));
}

TEST(ParseInt, rejects_values_outside_64_bits_and_range) {
  auto r = tp::parse_int("99999999999999999999", "--size");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, tp::Errc::out_of_range);
  auto low = tp::parse_int("0", "--cpus", 1);
  ASSERT_FALSE(low);
  EXPECT_EQ(low.error().message, "--cpus: 0 must be >= 1");
}

TEST(ParseExtents, splits_on_x) {
  auto r = tp::parse_extents("12x12x524288", "--size");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (std::vector<std::int64_t>{12, 12, 524288}));
}

TEST(ParseExtents, rejects_zero_negative_and_empty_pieces) {
  auto zero = tp::parse_extents("12x0x5", "--size");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "--size dimension 2: 0 must be >= 1");
  auto neg = tp::parse_extents("-3x4", "--size");
  ASSERT_FALSE(neg);
  EXPECT_EQ(neg.error().message, "--size dimension 1: -3 must be >= 1");
  EXPECT_FALSE(tp::parse_extents("4xx4", "--size"));
  EXPECT_FALSE(tp::parse_extents("", "--size"));
}

TEST(ParseBytes, understands_binary_suffixes) {
  EXPECT_EQ(*tp::parse_bytes("0", "--sizes"), 0);
  EXPECT_EQ(*tp::parse_bytes("16KiB", "--sizes"), 16384);
  EXPECT_EQ(*tp::parse_bytes("4MiB", "--sizes"), 4 << 20);
  EXPECT_EQ(*tp::parse_bytes("1G", "--sizes"), 1LL << 30);
  EXPECT_FALSE(tp::parse_bytes("4XB", "--sizes"));
  EXPECT_FALSE(tp::parse_bytes("-1", "--sizes"));
  EXPECT_FALSE(tp::parse_bytes("99999999999GiB", "--sizes"));
}

}  // namespace
