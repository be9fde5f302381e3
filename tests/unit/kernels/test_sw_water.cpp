// sw against EMBOSS water on small random inputs: scores always, end positions when unique.
#include <tilepipe/kernels/sw.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "naive_sw.hpp"
#include "water_runner.hpp"

namespace tp::kernels {
namespace {

TEST(SwWater, scores_and_unique_ends_match_emboss_water) {
  std::mt19937_64 rng(7070);
  const std::string protein = "ARNDCQEGHILKMFPSTWYVARNDCQEGHILKMFPSTWYVBZX";
  const std::string dna = "ACGTACGTACGTACGTNRYKM";
  const GapCosts gaps[] = {{10, 1}, {5, 2}, {12, 3}, {8, 8}};
  int compared_ends = 0;
  for (int round = 0; round < 40; ++round) {
    const bool is_dna = round % 2 == 1;
    const auto& m = is_dna ? ScoreMatrix::ednafull() : ScoreMatrix::blosum62();
    const std::string& letters = is_dna ? dna : protein;
    auto seq = [&](std::size_t n) {
      std::string s;
      for (std::size_t i = 0; i < n; ++i) {
        s += letters[std::uniform_int_distribution<std::size_t>(0, letters.size() - 1)(rng)];
      }
      return s;
    };
    const std::string q = seq(std::uniform_int_distribution<std::size_t>(5, 70)(rng));
    std::string t = seq(std::uniform_int_distribution<std::size_t>(5, 70)(rng));
    if (round % 3 == 0) t = q.substr(q.size() / 4) + seq(4) + q.substr(0, q.size() / 2);
    const GapCosts g = gaps[static_cast<std::size_t>(round) % std::size(gaps)];
    int max_count = 0;
    const SwResult ref = naive_sw(m, q, t, g, &max_count);
    const auto qe = m.encode(q, "q"), te = m.encode(t, "t");
    ASSERT_TRUE(qe.has_value() && te.has_value());
    const SwResult ours = sw_sequential(m, *qe, *te, g);
    ASSERT_EQ(ours, ref);
    if (ours.score <= 0) continue;  // water reports its best negative pair; we report 0
    const WaterAlignment w =
        run_water(q, t, is_dna ? "EDNAFULL" : "EBLOSUM62", is_dna ? "nucleotide" : "protein", g);
    EXPECT_EQ(w.score, static_cast<double>(ours.score))
        << "round " << round << " " << q << " " << t;
    if (max_count == 1) {
      ++compared_ends;
      EXPECT_EQ(w.stop[0], ours.end_query) << "round " << round;
      EXPECT_EQ(w.stop[1], ours.end_target) << "round " << round;
    }
  }
  EXPECT_GE(compared_ends, 10);
}

// EMBOSS matrices by name (emboss-data's files, looked up as water looks them up) on protein pairs
// with U, which water scores 0 against every letter where the matrix has no U.
TEST(SwWater, emboss_matrices_by_name_and_u_match_emboss_water) {
  std::mt19937_64 rng(5050);
  const std::string protein = "ARNDCQEGHILKMFPSTWYVARNDCQEGHILKMFPSTWYVBZXU";
  const char* names[] = {"EBLOSUM50", "EPAM250", "EBLOSUM80", "EPAM120"};
  const GapCosts gaps[] = {{10, 1}, {8, 2}, {12, 3}};
  int compared_ends = 0;
  for (int round = 0; round < 24; ++round) {
    const char* name = names[round % std::size(names)];
    const auto m = ScoreMatrix::by_name_or_file(name);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    auto seq = [&](std::size_t n) {
      std::string s;
      for (std::size_t i = 0; i < n; ++i) {
        s += protein[std::uniform_int_distribution<std::size_t>(0, protein.size() - 1)(rng)];
      }
      return s;
    };
    const std::string q = seq(std::uniform_int_distribution<std::size_t>(5, 70)(rng));
    std::string t = seq(std::uniform_int_distribution<std::size_t>(5, 70)(rng));
    if (round % 2 == 0) t = q.substr(q.size() / 4) + seq(4) + q.substr(0, q.size() / 2);
    const GapCosts g = gaps[static_cast<std::size_t>(round) % std::size(gaps)];
    int max_count = 0;
    const SwResult ref = naive_sw(*m, q, t, g, &max_count);
    const auto qe = m->encode(q, "q"), te = m->encode(t, "t");
    ASSERT_TRUE(qe.has_value() && te.has_value());
    ASSERT_EQ(sw_sequential(*m, *qe, *te, g), ref);
    if (ref.score <= 0) continue;
    const WaterAlignment w = run_water(q, t, name, "protein", g);
    EXPECT_EQ(w.score, static_cast<double>(ref.score)) << name << " " << q << " " << t;
    if (max_count == 1) {
      ++compared_ends;
      EXPECT_EQ(w.stop[0], ref.end_query) << name << " round " << round;
      EXPECT_EQ(w.stop[1], ref.end_target) << name << " round " << round;
    }
  }
  EXPECT_GE(compared_ends, 6);
}

}  // namespace
}  // namespace tp::kernels
