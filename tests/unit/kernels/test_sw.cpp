// sw: the tiled frontier kernel and the sequential DP against a naive full-matrix Gotoh DP.
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/kernels/sw.hpp>

#include "naive_sw.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

namespace tp::kernels {
namespace {

SwResult tiled(const ScoreMatrix& m, const std::string& q, const std::string& t, GapCosts g,
               exec::Point<2> tile, int threads) {
  const auto qe = enc(m, q), te = enc(m, t);
  auto k = SwKernel::make(m, qe, te, g);
  EXPECT_TRUE(k.has_value());
  auto tiling = exec::RectTiling<2>::make(k->space(), tile);
  EXPECT_TRUE(tiling.has_value());
  auto r = exec::run_local(*k, *tiling, threads);
  EXPECT_TRUE(r.has_value());
  return *r;
}

TEST(Sw, hand_computed_scores) {
  const auto& b = ScoreMatrix::blosum62();
  const GapCosts g{10, 1};
  // W-W 11 + C-C 9.
  EXPECT_EQ(naive_sw(b, "WC", "WC", g), (SwResult{20, 2, 2}));
  // One gap of length 1 costs 10, of length 2 costs 11: WWWW vs WW--WW? 44 - 11 = 33 > 22.
  EXPECT_EQ(naive_sw(b, "WWAAWW", "WWWW", g).score, 33);
  EXPECT_EQ(tiled(b, "WWAAWW", "WWWW", g, {2, 1}, 2).score, 33);
  // No positive pair: score 0 and no end.
  EXPECT_EQ(naive_sw(b, "A", "W", g), (SwResult{0, 0, 0}));
  EXPECT_EQ(tiled(b, "A", "W", g, {1, 1}, 1), (SwResult{0, 0, 0}));
  // Ties: the first maximum in row-major order (query 1, target 1).
  EXPECT_EQ(tiled(ScoreMatrix::ednafull(), "AA", "AA", g, {1, 1}, 2), (SwResult{10, 2, 2}));
  EXPECT_EQ(tiled(ScoreMatrix::ednafull(), "A", "AAA", g, {1, 1}, 2), (SwResult{5, 1, 1}));
}

TEST(Sw, gap_of_length_l_costs_open_plus_l_minus_1_extend) {
  const auto& b = ScoreMatrix::blosum62();
  const std::string q = std::string(10, 'W') + "PPPP" + std::string(10, 'W');
  const std::string t(20, 'W');
  // 20 W/W pairs (11 each) around one 4-long gap; any other alignment loses a W (11 + 4).
  for (const GapCosts g : {GapCosts{10, 1}, GapCosts{16, 4}, GapCosts{0, 0}, GapCosts{7, 3}}) {
    const int expected = 220 - (g.open + 3 * g.extend);
    EXPECT_EQ(naive_sw(b, q, t, g).score, expected) << g.open << "/" << g.extend;
    EXPECT_EQ(tiled(b, q, t, g, {3, 4}, 2).score, expected) << g.open << "/" << g.extend;
    EXPECT_EQ(tiled(b, t, q, g, {5, 2}, 1).score, expected) << g.open << "/" << g.extend;
  }
}

TEST(Sw, random_inputs_match_the_naive_dp_in_every_tiling) {
  std::mt19937_64 rng(20260421);
  const std::string protein = "ARNDCQEGHILKMFPSTWYVBZX*";
  const std::string dna = "ACGTACGTACGTNRYSWKMBDHVU";
  const GapCosts gaps[] = {{10, 1}, {5, 2}, {1, 1}, {0, 0}, {12, 0}, {2, 8}};
  for (int round = 0; round < 120; ++round) {
    const bool is_dna = round % 2 == 1;
    const auto& m = is_dna ? ScoreMatrix::ednafull() : ScoreMatrix::blosum62();
    const auto& letters = is_dna ? dna : protein;
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
    const std::size_t len_t = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
    std::string q = random_seq(rng, letters, n), t = random_seq(rng, letters, len_t);
    if (round % 5 == 0) t = q.substr(0, n / 2) + random_seq(rng, letters, 3) + q.substr(n / 2);
    const GapCosts g = gaps[static_cast<std::size_t>(round) % std::size(gaps)];
    const SwResult ref = naive_sw(m, q, t, g);
    const auto qe = enc(m, q), te = enc(m, t);
    ASSERT_EQ(sw_sequential(m, qe, te, g), ref) << "round " << round << " " << q << " " << t;
    for (int trial = 0; trial < 4; ++trial) {
      const exec::Point<2> tile{std::uniform_int_distribution<exec::Index>(1, 12)(rng),
                                std::uniform_int_distribution<exec::Index>(1, 12)(rng)};
      ASSERT_EQ(tiled(m, q, t, g, tile, 1 + trial % 2), ref)
          << "round " << round << " tile " << tile[0] << "x" << tile[1];
    }
  }
}

TEST(Sw, eight_row_strips_match_the_scalar_dp) {
  // Tiles of 8 rows or more take the 8-lane path (on AVX2 machines); sw_sequential never does.
  std::mt19937_64 rng(88);
  const std::string protein = "ARNDCQEGHILKMFPSTWYV";
  const auto& b = ScoreMatrix::blosum62();
  for (int round = 0; round < 12; ++round) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(8, 260)(rng);
    const std::size_t m = std::uniform_int_distribution<std::size_t>(1, 300)(rng);
    const std::string q = random_seq(rng, protein, n);
    std::string t = random_seq(rng, protein, m);
    if (round % 2 == 0) t = t.substr(0, m / 3) + q.substr(n / 4, n / 2) + t.substr(m / 3);
    const GapCosts g = round % 3 == 0 ? GapCosts{10, 1} : GapCosts{4, 2};
    const auto qe = enc(b, q), te = enc(b, t);
    const SwResult ref = sw_sequential(b, qe, te, g);
    if (round < 4) {
      ASSERT_EQ(naive_sw(b, q, t, g), ref);
    }
    for (const exec::Point<2>& tile :
         {exec::Point<2>{8, 1}, exec::Point<2>{8, 5}, exec::Point<2>{16, 70},
          exec::Point<2>{13, 64}, exec::Point<2>{37, 200}, exec::Point<2>{1000, 1000}}) {
      ASSERT_EQ(tiled(b, q, t, g, tile, 2), ref)
          << "round " << round << " tile " << tile[0] << "x" << tile[1];
    }
  }
}

TEST(Sw, edge_inputs) {
  const auto& b = ScoreMatrix::blosum62();
  const GapCosts g{10, 1};
  for (const auto& [q, t] : std::vector<std::pair<std::string, std::string>>{
           {"W", "W"}, {"A", "WWWWWWWW"}, {"PPPP", "WWWW"}, {"W", "AAAAWAAAA"}, {"****", "*"}}) {
    const SwResult ref = naive_sw(b, q, t, g);
    for (const exec::Point<2>& tile :
         {exec::Point<2>{1, 1}, exec::Point<2>{1, 3}, exec::Point<2>{100, 100}}) {
      EXPECT_EQ(tiled(b, q, t, g, tile, 2), ref) << q << " vs " << t;
      EXPECT_EQ(tiled(b, t, q, g, tile, 1).score, ref.score) << t << " vs " << q;
    }
  }
  // A long run of gaps: WWWW...(30 A)...WWWW vs WWWWWWWW, gap 30 with extend 0.
  const std::string q = "WWWW" + std::string(30, 'A') + "WWWW";
  const SwResult r = tiled(b, q, "WWWWWWWW", GapCosts{5, 0}, {7, 3}, 2);
  EXPECT_EQ(r, naive_sw(b, q, "WWWWWWWW", GapCosts{5, 0}));
  EXPECT_EQ(r.score, 88 - 5);
}

TEST(Sw, default_tile_is_one_row_of_tiles_per_thread) {
  // One thread: one row of tiles 8192 wide.
  EXPECT_EQ(sw_default_tile(30000, 30000, 1), (std::array<std::int64_t, 2>{30000, 8192}));
  // More: one row per thread (a band per row of tiles where it fits), target / (16 threads) wide.
  EXPECT_EQ(sw_default_tile(30000, 30000, 2), (std::array<std::int64_t, 2>{15000, 938}));
  EXPECT_EQ(sw_default_tile(30001, 30000, 2), (std::array<std::int64_t, 2>{15001, 938}));
  EXPECT_EQ(sw_default_tile(100000, 100000, 2), (std::array<std::int64_t, 2>{50000, 2048}));
  EXPECT_EQ(sw_default_tile(20000, 20000, 3), (std::array<std::int64_t, 2>{6667, 417}));
  // Clamped to 256-2048 wide; a short query still gets one row per thread.
  EXPECT_EQ(sw_default_tile(5, 1000, 4), (std::array<std::int64_t, 2>{2, 256}));
  EXPECT_EQ(sw_default_tile(1, 1, 2), (std::array<std::int64_t, 2>{1, 256}));
}

TEST(Sw, make_rejects_bad_parameters) {
  const auto& b = ScoreMatrix::blosum62();
  const std::vector<std::uint8_t> one{0}, none;
  EXPECT_FALSE(SwKernel::make(b, none, one, {}).has_value());
  EXPECT_FALSE(SwKernel::make(b, one, one, GapCosts{-1, 1}).has_value());
  EXPECT_TRUE(SwKernel::make(b, one, one, GapCosts{0, 0}).has_value());
}

}  // namespace
}  // namespace tp::kernels
