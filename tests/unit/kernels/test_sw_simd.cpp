// sw SIMD tiles (each ISA forced, 16-bit with 32-bit retry, and 32-bit only) against the scalar DP.
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/kernels/sw.hpp>

#include "naive_sw.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace tp::kernels {
namespace {

const std::string protein_letters = "ARNDCQEGHILKMFPSTWYVBZX*";
const std::string dna_letters = "ACGTACGTACGTNRYSWKMBDHVU";

// Every tile function this CPU can run: the ISA and the narrowest lanes tried first.
struct Path {
  SwIsa isa;
  int min_bits;
};

std::vector<Path> paths() {
  std::vector<Path> out;
  for (const SwIsa isa : {SwIsa::scalar, SwIsa::sse41, SwIsa::avx2, SwIsa::avx512}) {
    if (!sw_isa_supported(isa)) continue;
    out.push_back({isa, 8});
    if (isa != SwIsa::scalar) {
      out.push_back({isa, 16});
      out.push_back({isa, 32});
    }
  }
  return out;
}

std::string name(const Path& p) {
  return std::string(to_string(p.isa)) + "/" + std::to_string(p.min_bits);
}

// A copy of s with about one residue in `rate` substituted and a few short insertions.
std::string mutate(std::mt19937_64& rng, const std::string& s, const std::string& letters,
                   std::size_t rate) {
  std::string out;
  for (const char c : s) {
    const std::size_t roll = rng() % rate;
    if (roll == 0) {
      out += letters[rng() % letters.size()];
    } else if (roll == 1 && rate > 20) {
      out += random_seq(rng, letters, 1 + rng() % 4) + c;
    } else {
      out += c;
    }
  }
  return out;
}

SwResult run(const ScoreMatrix& m, const std::vector<std::uint8_t>& q,
             const std::vector<std::uint8_t>& t, GapCosts g, const Path& p, exec::Point<2> tile,
             int threads, std::int64_t band_rows = 0) {
  auto k = SwKernel::make(m, q, t, g, SwOptions{p.isa, p.min_bits, band_rows});
  EXPECT_TRUE(k.has_value());
  EXPECT_EQ(k->isa(), p.isa);
  auto tiling = exec::RectTiling<2>::make(k->space(), tile);
  EXPECT_TRUE(tiling.has_value());
  auto r = exec::run_local(*k, *tiling, threads);
  EXPECT_TRUE(r.has_value());
  return *r;
}

TEST(SwSimd, the_cpu_can_run_the_isa_chosen_by_default) {
  const std::vector<std::uint8_t> one{0};
  auto k = SwKernel::make(ScoreMatrix::blosum62(), one, one, {});
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->isa(), best_sw_isa());
  EXPECT_TRUE(sw_isa_supported(SwIsa::scalar));
  EXPECT_EQ(*parse_sw_isa("avx2"), SwIsa::avx2);
  EXPECT_EQ(*parse_sw_isa("avx512"), SwIsa::avx512);
  EXPECT_FALSE(parse_sw_isa("avx512bw").has_value());
}

TEST(SwSimd, random_pairs_match_the_scalar_dp_on_every_path) {
  std::mt19937_64 rng(1414);
  // {90, 70} and {66, 120}: 2 min(open, extend) passes the 8-bit lanes' signed subtrahend (127),
  // so their F chain runs one vector at a time on every ISA (sw_striped_body.hpp's pair_f).
  const GapCosts gaps[] = {{10, 1}, {5, 2}, {1, 1},   {0, 0},   {12, 0},
                           {2, 8},  {3, 3}, {90, 70}, {66, 120}};
  const auto all = paths();
  for (int round = 0; round < 27; ++round) {
    const bool is_dna = round % 2 == 1;
    const auto& m = is_dna ? ScoreMatrix::ednafull() : ScoreMatrix::blosum62();
    const auto& letters = is_dna ? dna_letters : protein_letters;
    const std::size_t n = round < 4 ? 1 + rng() % 20 : 1 + rng() % 300;
    const std::size_t len_t = 1 + rng() % 250;
    const std::string q = random_seq(rng, letters, n);
    std::string t = random_seq(rng, letters, len_t);
    if (round % 3 == 0)
      t = t.substr(0, len_t / 2) + mutate(rng, q, letters, 8) + t.substr(len_t / 2);
    const GapCosts g = gaps[static_cast<std::size_t>(round) % std::size(gaps)];
    const auto qe = enc(m, q), te = enc(m, t);
    const SwResult ref = sw_sequential(m, qe, te, g);
    if (round < 6) {
      ASSERT_EQ(naive_sw(m, q, t, g), ref);
    }
    const exec::Point<2> tile{1 + static_cast<exec::Index>(rng() % 150),
                              16 + static_cast<exec::Index>(rng() % 120)};
    for (const Path& p : all) {
      for (const exec::Point<2>& shape : {tile, exec::Point<2>{5000, 5000}}) {
        ASSERT_EQ(run(m, qe, te, g, p, shape, 1 + round % 2), ref)
            << name(p) << " round " << round << " tile " << shape[0] << "x" << shape[1] << " gaps "
            << g.open << "/" << g.extend;
      }
    }
  }
}

TEST(SwSimd, ties_take_the_first_cell_in_row_major_order) {
  // Repeats make many cells share the best score.
  const auto& d = ScoreMatrix::ednafull();
  const std::string q = std::string(70, 'A') + "CGT" + std::string(40, 'A');
  const std::string t = "ACGTACGT" + std::string(45, 'A') + "TTT" + std::string(45, 'A');
  for (const GapCosts g : {GapCosts{10, 1}, GapCosts{0, 0}, GapCosts{1, 5}}) {
    const SwResult ref = naive_sw(d, q, t, g);
    const auto qe = enc(d, q), te = enc(d, t);
    for (const Path& p : paths()) {
      for (const exec::Point<2> tile : {exec::Point<2>{113, 109}, exec::Point<2>{17, 16}}) {
        ASSERT_EQ(run(d, qe, te, g, p, tile, 2), ref)
            << name(p) << " " << g.open << "/" << g.extend;
        ASSERT_EQ(run(d, te, qe, g, p, tile, 1), naive_sw(d, t, q, g)) << name(p);
      }
    }
  }
}

TEST(SwSimd, scores_above_32767_stay_in_unsigned_16_bit_lanes) {
  // W/W scores 11 and C/C 9: 3150 residues of mostly W score above 32767 (a signed 16-bit
  // integer's limit) and below 65535 (the 16-bit lanes', which hold x - 32768) when aligned.
  std::mt19937_64 rng(16);
  const auto& b = ScoreMatrix::blosum62();
  const std::string q = random_seq(rng, "WWWWWWWWWC", 3150);
  const std::string t = random_seq(rng, protein_letters, 50) + mutate(rng, q, "WC", 400);
  const auto qe = enc(b, q), te = enc(b, t);
  const GapCosts g{10, 1};
  const SwResult ref = sw_sequential(b, qe, te, g);
  ASSERT_GT(ref.score, 32767);
  ASSERT_LT(ref.score, 65535);
  for (const Path& p : paths()) {
    ASSERT_EQ(run(b, qe, te, g, p, {700, 900}, 2), ref) << name(p);
  }
}

// A two-letter matrix with large scores: short pairs pass the 8-bit and 16-bit lane limits.
ScoreMatrix big_matrix(int match, int mismatch) {
  auto m =
      ScoreMatrix::parse(fmt::format("   A  C\nA {0} {1}\nC {1} {0}\n", match, mismatch), "big");
  EXPECT_TRUE(m.has_value());
  return *m;
}

TEST(SwSimd, scores_at_the_narrow_lane_limits_overflow_into_wider_lanes) {
  // Identical pairs score length x match. 8 bits: a cell of 255 or more overflows, so EDNAFULL's
  // lengths 48-52 (240-260) fall on both sides, and match 127 (length 2: 254) and 51 (length 5:
  // 255) sit on it; 16 bits: 65535 or more overflows, so lengths 63-66 of match 1000 (63000-66000)
  // fall on both sides, and match 9362 (length 7: 65534) and 4369 (length 15: 65535) sit on it.
  // Each overflow is redone in wider lanes, in tiles that hold the whole pair and in tiles whose
  // in-faces pass the limit.
  const auto& d = ScoreMatrix::ednafull();
  const ScoreMatrix big = big_matrix(1000, -999);
  const ScoreMatrix m127 = big_matrix(127, -127), m51 = big_matrix(51, -51);
  const ScoreMatrix m9362 = big_matrix(9362, -9362), m4369 = big_matrix(4369, -1);
  std::mt19937_64 rng(255);
  struct Case {
    const ScoreMatrix* m;
    std::string letters;
    std::size_t from, to;
  };
  for (const Case& c :
       {Case{&d, "ACGT", 48, 52}, Case{&big, "AC", 63, 66}, Case{&m127, "AC", 1, 3},
        Case{&m51, "AC", 4, 6}, Case{&m9362, "AC", 7, 7}, Case{&m4369, "AC", 14, 16}}) {
    for (std::size_t len = c.from; len <= c.to; ++len) {
      const std::string q = random_seq(rng, c.letters, len);
      const std::string t = random_seq(rng, c.letters, 20) + q + random_seq(rng, c.letters, 7);
      const auto qe = enc(*c.m, q), te = enc(*c.m, t);
      const SwResult ref = sw_sequential(*c.m, qe, te, GapCosts{10, 1});
      ASSERT_EQ(ref.score, static_cast<std::int32_t>(len) * c.m->max_score());
      for (const Path& p : paths()) {
        for (const exec::Point<2> tile : {exec::Point<2>{100, 100}, exec::Point<2>{9, 17}}) {
          ASSERT_EQ(run(*c.m, qe, te, GapCosts{10, 1}, p, tile, 1), ref)
              << name(p) << " length " << len << " tile " << tile[0] << "x" << tile[1];
        }
      }
    }
  }
}

TEST(SwSimd, tiles_taller_than_a_band_carry_faces_between_bands) {
  // The alignment crosses row 700, where one band of 700 rows hands H and F to the next; bands of
  // 461 rows leave a last band of 8 rows, bands of 100 rows cut it many times.
  std::mt19937_64 rng(8192);
  const auto& b = ScoreMatrix::blosum62();
  const std::string core = random_seq(rng, protein_letters, 240);
  const std::string q =
      random_seq(rng, protein_letters, 600) + core + random_seq(rng, protein_letters, 90);
  const std::string t = random_seq(rng, protein_letters, 60) +
                        mutate(rng, core, protein_letters, 30) +
                        random_seq(rng, protein_letters, 40);
  const auto qe = enc(b, q), te = enc(b, t);
  for (const GapCosts g : {GapCosts{10, 1}, GapCosts{4, 6}}) {
    const SwResult ref = sw_sequential(b, qe, te, g);
    ASSERT_GT(ref.end_query, 700);
    for (const Path& p : paths()) {
      for (const std::int64_t band : {700, 461, 100}) {
        const exec::Point<2> tile =
            g.open == 10 ? exec::Point<2>{9000, 400} : exec::Point<2>{850, 77};
        ASSERT_EQ(run(b, qe, te, g, p, tile, 2, band), ref)
            << name(p) << " " << tile[0] << "x" << tile[1] << " bands of " << band;
      }
    }
  }
}

TEST(SwSimd, bands_default_to_band_vectors_of_the_first_lanes) {
  const std::vector<std::uint8_t> one{0};
  const auto& b = ScoreMatrix::blosum62();
  for (const Path& p : paths()) {
    if (p.isa == SwIsa::scalar) continue;
    const auto k = SwKernel::make(b, one, one, {}, SwOptions{p.isa, p.min_bits});
    ASSERT_TRUE(k.has_value());
    const std::int64_t lanes = (p.isa == SwIsa::avx512 ? 512
                                : p.isa == SwIsa::avx2 ? 256
                                                       : 128) /
                               p.min_bits;
    EXPECT_EQ(k->band_rows(), SwKernel::band_vectors * lanes) << name(p);
    EXPECT_EQ(SwKernel::make(b, one, one, {}, SwOptions{p.isa, p.min_bits, 8})->band_rows(), 8);
  }
  const auto bad = SwKernel::make(b, one, one, {}, SwOptions{{}, 8, 7});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "sw: SIMD bands of 7 rows (choose 0 for auto, or at least 8)");
}

// One tile from random in-faces: the out-faces and the result equal the scalar kernel's.
TEST(SwSimd, faces_out_equal_the_scalar_kernels_for_any_faces_in) {
  std::mt19937_64 rng(77);
  const auto& b = ScoreMatrix::blosum62();
  const std::int32_t ninf = SwKernel::minus_infinity;
  for (int round = 0; round < 42; ++round) {
    // Tall tiles from round 30: the faces go between rows and lanes in blocks of 8 vectors
    // (sw_avx2.cpp, sw_avx512.cpp), with padding in the last lanes and rows past the last block;
    // from round 36 in 8-bit lanes (64 AVX-512 lanes take blocks from 449 rows on).
    const exec::Index tall[] = {256, 263, 1000, 1031, 2311, 4096, 449, 512, 600, 1031, 2311, 4096};
    const exec::Index h = round < 30 ? 8 + static_cast<exec::Index>(rng() % 90) : tall[round - 30];
    const exec::Index w = 16 + static_cast<exec::Index>(rng() % 90);
    const auto qe = enc(b, random_seq(rng, protein_letters, static_cast<std::size_t>(h) + 5));
    const auto te = enc(b, random_seq(rng, protein_letters, static_cast<std::size_t>(w) + 7));
    const GapCosts g = round % 2 == 0 ? GapCosts{10, 1} : GapCosts{3, 4};
    // Face values within 8 bits, up to and past the 8-bit limit (254), within 16 bits, near the
    // signed 16-bit integer's limit, up to and past the 16-bit limit (65534), and beyond.
    const std::int32_t tops[] = {100, 257, 900, 32800, 65537, 70000};
    const std::int32_t top = round >= 36 ? tops[0] : tops[round % 6];
    const auto value = [&](bool gap) {
      if (gap && rng() % 4 == 0) return ninf;
      return static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(top)) -
             (gap ? g.open : 0);
    };
    const exec::Box<2> box{{3, 5}, {3 + h, 5 + w}};
    std::vector<std::int32_t> in0(static_cast<std::size_t>(2 * w + 1)),
        in1(static_cast<std::size_t>(2 * h));
    for (std::size_t i = 0; i < in0.size(); ++i) in0[i] = value(i > static_cast<std::size_t>(w));
    for (std::size_t i = 0; i < in1.size(); ++i) in1[i] = value(i >= static_cast<std::size_t>(h));
    const exec::FaceSet<const std::int32_t, 2> in{std::span<const std::int32_t>(in0),
                                                  std::span<const std::int32_t>(in1)};
    std::vector<std::int32_t> ref0(in0.size()), ref1(in1.size());
    const auto scalar = *SwKernel::make(b, qe, te, g, SwOptions{SwIsa::scalar, 8});
    const SwResult ref = scalar.compute_tile(box, in, {std::span(ref0), std::span(ref1)});
    for (const Path& p : paths()) {
      const auto k = *SwKernel::make(b, qe, te, g, SwOptions{p.isa, p.min_bits});
      std::vector<std::int32_t> out0(in0.size(), -7), out1(in1.size(), -7);
      const SwResult r = k.compute_tile(box, in, {std::span(out0), std::span(out1)});
      ASSERT_EQ(r, ref) << name(p) << " round " << round;
      ASSERT_EQ(out0, ref0) << name(p) << " round " << round;
      ASSERT_EQ(out1, ref1) << name(p) << " round " << round;
    }
  }
}

// The lanes a band takes follow the largest in-face value (sw.cpp's faces_max, 8 x int32 at a time
// with a scalar tail): one value past the 8-bit or the 16-bit limit, wherever it sits in any of the
// four faces, sends the band to wider lanes, so the tile equals the scalar kernel's.
TEST(SwSimd, one_face_value_past_the_lanes_limit_anywhere_widens_the_lanes) {
  std::mt19937_64 rng(91);
  const auto& b = ScoreMatrix::blosum62();
  const std::int32_t ninf = SwKernel::minus_infinity;
  const GapCosts g{10, 1};
  for (const exec::Index h : {37, 70}) {
    const exec::Index w = 19;
    const auto qe = enc(b, random_seq(rng, protein_letters, static_cast<std::size_t>(h)));
    const auto te = enc(b, random_seq(rng, protein_letters, static_cast<std::size_t>(w)));
    const exec::Box<2> box{{1, 1}, {1 + h, 1 + w}};
    std::vector<std::int32_t> base0(static_cast<std::size_t>(2 * w + 1), ninf),
        base1(static_cast<std::size_t>(2 * h), ninf);
    for (exec::Index c = 0; c <= w; ++c) base0[static_cast<std::size_t>(c)] = 3;
    for (exec::Index r = 0; r < h; ++r) base1[static_cast<std::size_t>(r)] = 5;
    const auto scalar = *SwKernel::make(b, qe, te, g, SwOptions{SwIsa::scalar, 8});
    for (const std::int32_t big : {300, 70000}) {
      for (std::size_t at = 0; at < base0.size() + base1.size(); ++at) {
        std::vector<std::int32_t> in0 = base0, in1 = base1;
        if (at < in0.size()) {
          in0[at] = big;
        } else {
          in1[at - in0.size()] = big;
        }
        const exec::FaceSet<const std::int32_t, 2> in{std::span<const std::int32_t>(in0),
                                                      std::span<const std::int32_t>(in1)};
        std::vector<std::int32_t> ref0(in0.size()), ref1(in1.size());
        const SwResult ref = scalar.compute_tile(box, in, {std::span(ref0), std::span(ref1)});
        for (const Path& p : paths()) {
          const auto k = *SwKernel::make(b, qe, te, g, SwOptions{p.isa, p.min_bits});
          std::vector<std::int32_t> out0(in0.size()), out1(in1.size());
          const SwResult r = k.compute_tile(box, in, {std::span(out0), std::span(out1)});
          ASSERT_EQ(r, ref) << name(p) << " rows " << h << " value " << big << " at " << at;
          ASSERT_EQ(out0, ref0) << name(p) << " rows " << h << " value " << big << " at " << at;
          ASSERT_EQ(out1, ref1) << name(p) << " rows " << h << " value " << big << " at " << at;
        }
      }
    }
  }
}

// A tile whose last rows are fewer than a band's least (8) runs them in scalar code after the SIMD
// bands; both floor E and F of their out-faces at 0 (sw.hpp), the bands in their own lanes, the
// scalar rows afterwards, so the faces equal the scalar kernel's whichever rows each path ran.
TEST(SwSimd, a_scalar_tail_below_the_bands_gives_the_scalar_kernels_faces) {
  std::mt19937_64 rng(33);
  const auto& b = ScoreMatrix::blosum62();
  const std::int32_t ninf = SwKernel::minus_infinity;
  for (int round = 0; round < 12; ++round) {
    const exec::Index h = 8 * (1 + round % 4) + 1 + round % 7;  // 1-7 rows past the bands
    const exec::Index w = 16 + static_cast<exec::Index>(rng() % 40);
    const auto qe = enc(b, random_seq(rng, protein_letters, static_cast<std::size_t>(h)));
    const auto te = enc(b, random_seq(rng, protein_letters, static_cast<std::size_t>(w)));
    const GapCosts g{10, 1};
    const exec::Box<2> box{{1, 1}, {1 + h, 1 + w}};
    // Negative gap values in the in-faces: every out-face E and F must come out floored.
    const auto value = [&](bool gap) {
      if (gap && rng() % 3 == 0) return ninf;
      return static_cast<std::int32_t>(rng() % 60) - (gap ? 30 : 0);
    };
    std::vector<std::int32_t> in0(static_cast<std::size_t>(2 * w + 1)),
        in1(static_cast<std::size_t>(2 * h));
    for (std::size_t i = 0; i < in0.size(); ++i) in0[i] = value(i > static_cast<std::size_t>(w));
    for (std::size_t i = 0; i < in1.size(); ++i) in1[i] = value(i >= static_cast<std::size_t>(h));
    const exec::FaceSet<const std::int32_t, 2> in{std::span<const std::int32_t>(in0),
                                                  std::span<const std::int32_t>(in1)};
    std::vector<std::int32_t> ref0(in0.size()), ref1(in1.size());
    const auto scalar = *SwKernel::make(b, qe, te, g, SwOptions{SwIsa::scalar, 8});
    const SwResult ref = scalar.compute_tile(box, in, {std::span(ref0), std::span(ref1)});
    for (const Path& p : paths()) {
      if (p.isa == SwIsa::scalar) continue;
      const auto k = *SwKernel::make(b, qe, te, g, SwOptions{p.isa, p.min_bits, 8});
      std::vector<std::int32_t> out0(in0.size(), -7), out1(in1.size(), -7);
      const SwResult r = k.compute_tile(box, in, {std::span(out0), std::span(out1)});
      ASSERT_EQ(r, ref) << name(p) << " round " << round;
      ASSERT_EQ(out0, ref0) << name(p) << " round " << round;
      ASSERT_EQ(out1, ref1) << name(p) << " round " << round;
      for (exec::Index i = 0; i < w; ++i) EXPECT_GE(out0[static_cast<std::size_t>(w + 1 + i)], 0);
      for (exec::Index i = 0; i < h; ++i) EXPECT_GE(out1[static_cast<std::size_t>(h + i)], 0);
    }
  }
}

// Rows that do not fill the lanes leave padding after the band's last row; a padding row's
// diagonal is that row's H in the column to the left. A large H there (left face) must not hide
// the real cells' best (the column maximum leaves padding out).
TEST(SwSimd, padding_rows_never_hold_the_best_cell) {
  std::mt19937_64 rng(37);
  const auto& b = ScoreMatrix::blosum62();
  const std::int32_t ninf = SwKernel::minus_infinity;
  const GapCosts g{10, 1};
  for (const exec::Index h : {9, 37, 50, 101}) {
    for (const std::int32_t big : {200, 40000}) {
      const exec::Index w = 40;
      const auto qe = enc(b, random_seq(rng, protein_letters, static_cast<std::size_t>(h)));
      const auto te = enc(b, random_seq(rng, protein_letters, static_cast<std::size_t>(w)));
      const exec::Box<2> box{{1, 1}, {1 + h, 1 + w}};
      std::vector<std::int32_t> in0(static_cast<std::size_t>(2 * w + 1), 0),
          in1(static_cast<std::size_t>(2 * h), ninf);
      std::fill(in0.begin() + w + 1, in0.end(), ninf);
      for (exec::Index r = 0; r < h; ++r)
        in1[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(rng() % 6);
      in1[static_cast<std::size_t>(h - 1)] = big;
      const exec::FaceSet<const std::int32_t, 2> in{std::span<const std::int32_t>(in0),
                                                    std::span<const std::int32_t>(in1)};
      std::vector<std::int32_t> ref0(in0.size()), ref1(in1.size());
      const auto scalar = *SwKernel::make(b, qe, te, g, SwOptions{SwIsa::scalar, 8});
      const SwResult ref = scalar.compute_tile(box, in, {std::span(ref0), std::span(ref1)});
      for (const Path& p : paths()) {
        const auto k = *SwKernel::make(b, qe, te, g, SwOptions{p.isa, p.min_bits});
        std::vector<std::int32_t> out0(in0.size()), out1(in1.size());
        const SwResult r = k.compute_tile(box, in, {std::span(out0), std::span(out1)});
        ASSERT_EQ(r, ref) << name(p) << " rows " << h << " left face " << big;
        ASSERT_EQ(out0, ref0) << name(p) << " rows " << h << " left face " << big;
        ASSERT_EQ(out1, ref1) << name(p) << " rows " << h << " left face " << big;
      }
    }
  }
}

TEST(SwSimd, make_refuses_an_isa_the_cpu_lacks) {
  const std::vector<std::uint8_t> one{0};
  for (const SwIsa isa : {SwIsa::sse41, SwIsa::avx2, SwIsa::avx512}) {
    auto k = SwKernel::make(ScoreMatrix::blosum62(), one, one, {}, SwOptions{isa, 8});
    EXPECT_EQ(k.has_value(), sw_isa_supported(isa)) << to_string(isa);
  }
  EXPECT_FALSE(SwKernel::make(ScoreMatrix::blosum62(), one, one, {}, SwOptions{{}, 12}));
}

}  // namespace
}  // namespace tp::kernels
