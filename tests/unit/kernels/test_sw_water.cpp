// sw against EMBOSS water on small random inputs: scores always, end positions when unique.
#include <tilepipe/kernels/sw.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>

#include "naive_sw.hpp"
#include "water_runner.hpp"

namespace tp::kernels {
namespace {

std::string random_letters(std::mt19937_64& rng, const std::string& letters, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    s += letters[std::uniform_int_distribution<std::size_t>(0, letters.size() - 1)(rng)];
  }
  return s;
}

// A random pair of 5-70 letters each; `related`: the target made of two pieces of the query with
// 4 random letters between them.
std::pair<std::string, std::string> random_pair(std::mt19937_64& rng, const std::string& letters,
                                                bool related) {
  const std::string q =
      random_letters(rng, letters, std::uniform_int_distribution<std::size_t>(5, 70)(rng));
  std::string t =
      random_letters(rng, letters, std::uniform_int_distribution<std::size_t>(5, 70)(rng));
  if (related) {
    t = q.substr(q.size() / 4) + random_letters(rng, letters, 4) + q.substr(0, q.size() / 2);
  }
  return {q, t};
}

// One pair against naive_sw, sw_sequential and water (`name`, `type`): the score when positive,
// the end when the optimum is unique (counted in `compared_ends`).
void compare_with_water(const ScoreMatrix& m, const char* name, const char* type,
                        const std::string& q, const std::string& t, GapCosts g,
                        int& compared_ends) {
  int max_count = 0;
  const SwResult ref = naive_sw(m, q, t, g, &max_count);
  const auto qe = m.encode(q, "q"), te = m.encode(t, "t");
  ASSERT_TRUE(qe.has_value() && te.has_value());
  ASSERT_EQ(sw_sequential(m, *qe, *te, g), ref);
  if (ref.score <= 0) return;  // water reports its best negative pair; we report 0
  const WaterAlignment w = run_water(q, t, name, type, g);
  EXPECT_EQ(w.score, static_cast<double>(ref.score)) << name << " " << q << " " << t;
  if (max_count == 1) {
    ++compared_ends;
    EXPECT_EQ(w.stop[0], ref.end_query) << name << " " << q << " " << t;
    EXPECT_EQ(w.stop[1], ref.end_target) << name << " " << q << " " << t;
  }
}

TEST(SwWater, scores_and_unique_ends_match_emboss_water) {
  std::mt19937_64 rng(7070);
  const std::string protein = "ARNDCQEGHILKMFPSTWYVARNDCQEGHILKMFPSTWYVBZX";
  const std::string dna = "ACGTACGTACGTACGTNRYKM";
  const GapCosts gaps[] = {{10, 1}, {5, 2}, {12, 3}, {8, 8}};
  int compared_ends = 0;
  for (int round = 0; round < 40; ++round) {
    const bool is_dna = round % 2 == 1;
    const auto& m = is_dna ? ScoreMatrix::ednafull() : ScoreMatrix::blosum62();
    const auto [q, t] = random_pair(rng, is_dna ? dna : protein, round % 3 == 0);
    const GapCosts g = gaps[static_cast<std::size_t>(round) % std::size(gaps)];
    compare_with_water(m, is_dna ? "EDNAFULL" : "EBLOSUM62", is_dna ? "nucleotide" : "protein", q,
                       t, g, compared_ends);
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
    const auto [q, t] = random_pair(rng, protein, round % 2 == 0);
    const GapCosts g = gaps[static_cast<std::size_t>(round) % std::size(gaps)];
    compare_with_water(*m, name, "protein", q, t, g, compared_ends);
  }
  EXPECT_GE(compared_ends, 6);
}

}  // namespace
}  // namespace tp::kernels
