// sw traceback against EMBOSS water: start and end of the alignment where the optimum is unique.
// water is required (make deps installs emboss): without it this test fails, it does not skip.
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/sw_align.hpp>

#include "plain_alignment.hpp"
#include "water_runner.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace tp::kernels {
namespace {

TEST(SwTracebackWater, starts_and_ends_match_emboss_water_where_the_optimum_is_unique) {
  ASSERT_STRNE(TP_WATER_PROGRAM, "")
      << "EMBOSS water not found: `make deps` installs it (Debian package emboss)";
  std::mt19937_64 rng(14014);
  const std::string protein = "ARNDCQEGHILKMFPSTWYV";
  const std::string dna = "ACGT";
  const GapCosts gaps[] = {{10, 1}, {12, 2}, {8, 1}};
  int compared = 0;
  for (int round = 0; round < 10; ++round) {
    const bool is_dna = round % 2 == 1;
    const auto& m = is_dna ? ScoreMatrix::ednafull() : ScoreMatrix::blosum62();
    const std::string& letters = is_dna ? dna : protein;
    std::uniform_int_distribution<std::size_t> pick(0, letters.size() - 1);
    auto seq = [&](std::size_t n) {
      std::string s;
      for (std::size_t i = 0; i < n; ++i) s += letters[pick(rng)];
      return s;
    };
    // A shared core with a substitution and a gap in each copy, between unrelated flanks.
    const std::string core = seq(40 + rng() % 60);
    std::string a = core, b = core;
    a.erase(a.size() / 3, 2 + rng() % 3);
    b.insert(2 * b.size() / 3, seq(1 + rng() % 4));
    b[b.size() / 2] = letters[pick(rng)];
    a = seq(rng() % 30) + a + seq(rng() % 30);
    b = seq(rng() % 30) + b + seq(rng() % 30);
    const GapCosts g = gaps[static_cast<std::size_t>(round) % std::size(gaps)];
    const Plain plain = plain_local(m, a, b, g);
    if (plain.score <= 0 || plain.end_count != 1 || plain.start_count != 1) continue;
    const auto ae = m.encode(a, "a"), be = m.encode(b, "b");
    ASSERT_TRUE(ae.has_value() && be.has_value());
    const SwResult end = sw_sequential(m, *ae, *be, g);
    const auto ours = sw_traceback(m, *ae, *be, g, end);
    ASSERT_TRUE(ours.has_value());
    const WaterAlignment w =
        run_water(a, b, is_dna ? "EDNAFULL" : "EBLOSUM62", is_dna ? "nucleotide" : "protein", g);
    SCOPED_TRACE(::testing::Message() << "round " << round << " " << a << " " << b);
    EXPECT_EQ(w.score, static_cast<double>(ours->score));
    EXPECT_EQ(w.start[0], ours->query_start);
    EXPECT_EQ(w.stop[0], ours->query_end);
    EXPECT_EQ(w.start[1], ours->target_start);
    EXPECT_EQ(w.stop[1], ours->target_end);
    ++compared;
  }
  EXPECT_GE(compared, 5);
}

}  // namespace
}  // namespace tp::kernels
