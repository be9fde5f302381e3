// The length of the longest common subsequence of two generated strings as a user's frontier
// kernel: only the faces (one row, one column of the DP per tile) travel, never the matrix.
#pragma once

#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/run.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace lcs {

using tp::exec::Box;
using tp::exec::FaceSet;
using tp::exec::Index;

/// The i-th letter (1-based) of string `which` (0: along dimension 1, 1: along dimension 2) for a
/// seed over `alphabet` letters: splitmix64 of (seed, which, i).
inline std::int32_t letter(std::int64_t seed, std::int64_t alphabet, int which, Index i) {
  std::uint64_t z = static_cast<std::uint64_t>(seed) * 0x9E3779B97F4A7C15ull +
                    static_cast<std::uint64_t>(i) * 2 + static_cast<std::uint64_t>(which);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<std::int32_t>(z % static_cast<std::uint64_t>(alphabet));
}

/// The LCS length L[n1][n2] and the sum mod 2^64 of every L[i][j] (i, j >= 1), a check of the
/// whole matrix (exact in any order).
struct Result {
  std::int64_t length = 0;
  std::uint64_t sum = 0;
  friend bool operator==(const Result&, const Result&) = default;
};

/// L[i][j] = a_i == b_j ? L[i-1][j-1] + 1 : max(L[i-1][j], L[i][j-1]), L = 0 on the border.
/// Face 0 (to the tile below): L of its last row from the column left of the tile (the corner)
/// to its last column (w + 1 values); face 1 (to the right): L of its last column (h values).
struct Lcs {
  static constexpr int dims = 2;
  static constexpr tp::exec::Storage storage = tp::exec::Storage::frontier;
  static constexpr std::array<tp::exec::Dependence<2>, 3> deps{{{1, 0}, {0, 1}, {1, 1}}};
  using face_type = std::int32_t;
  using result_type = Result;

  static constexpr std::array<tp::exec::ParamSpec, 2> params{{
      {"seed", tp::exec::ParamType::integer, "1", "the strings' seed"},
      {"alphabet", tp::exec::ParamType::integer, "4", "letters in the alphabet, 1..256"},
  }};

  std::int64_t seed = 1;
  std::int64_t alphabet = 4;

  static tp::Expected<Lcs> make(const tp::plan::Index& /*size*/, const tp::exec::ParamValues& p) {
    Lcs k{p.integer("seed"), p.integer("alphabet")};
    if (k.alphabet < 1 || k.alphabet > 256) {
      return tp::fail(tp::Errc::invalid_argument,
                      "alphabet=" + std::to_string(k.alphabet) + " must be 1..256");
    }
    return k;
  }

  static std::string format_result(const Result& r) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "length %lld, sum %016llx", static_cast<long long>(r.length),
                  static_cast<unsigned long long>(r.sum));
    return buf;
  }

  static Result combine(const Result& a, const Result& b) {
    return {std::max(a.length, b.length), a.sum + b.sum};
  }

  std::size_t face_size(int k, const Box<2>& box) const {
    return static_cast<std::size_t>(k == 0 ? box.extent(1) + 1 : box.extent(0));
  }
  void boundary_face(int /*k*/, const Box<2>& /*box*/, std::span<face_type> face) const {
    std::fill(face.begin(), face.end(), 0);
  }

  Result compute_tile(const Box<2>& box, const FaceSet<const face_type, 2>& in,
                      const FaceSet<face_type, 2>& out) const {
    const Index w = box.extent(1);
    std::vector<std::int32_t> b(static_cast<std::size_t>(w));
    for (Index c = 0; c < w; ++c)
      b[static_cast<std::size_t>(c)] = letter(seed, alphabet, 1, box.lo[1] + c);
    // One row of L, in out[0]: row[0] is the column left of the tile, row[1 + c] column lo + c.
    face_type* row = out[0].data();
    std::copy(in[0].begin(), in[0].end(), row);
    Result r;
    for (Index i = box.lo[0]; i < box.hi[0]; ++i) {
      const std::int32_t a = letter(seed, alphabet, 0, i);
      face_type diag = row[0];
      row[0] = in[1][static_cast<std::size_t>(i - box.lo[0])];
      for (Index c = 0; c < w; ++c) {
        const face_type up = row[c + 1];
        row[c + 1] = a == b[static_cast<std::size_t>(c)] ? diag + 1 : std::max(up, row[c]);
        diag = up;
        r.sum += static_cast<std::uint64_t>(row[c + 1]);
      }
      out[1][static_cast<std::size_t>(i - box.lo[0])] = row[w];
    }
    r.length = row[w];
    return r;
  }
};

static_assert(tp::exec::FrontierKernel<Lcs>);

/// The plain loop: the whole (n1+1) x (n2+1) matrix, row by row.
inline Result plain_loop(Index n1, Index n2, std::int64_t seed, std::int64_t alphabet) {
  const auto w = static_cast<std::size_t>(n2 + 1);
  std::vector<std::int64_t> prev(w, 0), cur(w, 0);
  Result r;
  for (Index i = 1; i <= n1; ++i) {
    const std::int32_t a = letter(seed, alphabet, 0, i);
    for (std::size_t j = 1; j < w; ++j) {
      cur[j] = a == letter(seed, alphabet, 1, static_cast<Index>(j))
                   ? prev[j - 1] + 1
                   : std::max(prev[j], cur[j - 1]);
      r.sum += static_cast<std::uint64_t>(cur[j]);
    }
    std::swap(prev, cur);
  }
  r.length = prev[w - 1];
  return r;
}

}  // namespace lcs
