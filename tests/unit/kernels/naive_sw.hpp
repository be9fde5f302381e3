// The test oracle for sw: a naive Gotoh DP over full H, E, F matrices; and the helpers the sw
// tests share.
#pragma once

#include <tilepipe/kernels/sw.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tp::kernels {

// The letters of s encoded by m (a test failure if one is not in m's alphabet).
inline std::vector<std::uint8_t> enc(const ScoreMatrix& m, const std::string& s) {
  auto e = m.encode(s, "test");
  EXPECT_TRUE(e.has_value());
  return e.has_value() ? *e : std::vector<std::uint8_t>{};
}

// len letters drawn uniformly from `letters`.
inline std::string random_seq(std::mt19937_64& rng, const std::string& letters, std::size_t len) {
  std::uniform_int_distribution<std::size_t> pick(0, letters.size() - 1);
  std::string s;
  for (std::size_t i = 0; i < len; ++i) s += letters[pick(rng)];
  return s;
}

// Naive Gotoh over full (n+1) x (m+1) matrices of H, E, F; the first maximum in row-major order.
inline SwResult naive_sw(const ScoreMatrix& mx, const std::string& q, const std::string& t,
                         GapCosts g, int* max_count = nullptr) {
  const std::size_t n = q.size(), m = t.size();
  const int ninf = -1000000000;
  std::vector<std::vector<int>> H(n + 1, std::vector<int>(m + 1, 0));
  auto E = std::vector<std::vector<int>>(n + 1, std::vector<int>(m + 1, ninf));
  auto F = E;
  SwResult best;
  int count = 0;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      E[i][j] = std::max(H[i][j - 1] - g.open, E[i][j - 1] - g.extend);
      F[i][j] = std::max(H[i - 1][j] - g.open, F[i - 1][j] - g.extend);
      H[i][j] = std::max({0, H[i - 1][j - 1] + mx.score(q[i - 1], t[j - 1]), E[i][j], F[i][j]});
      if (H[i][j] > best.score) {
        best = {H[i][j], static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)};
        count = 1;
      } else if (H[i][j] == best.score && best.score > 0) {
        ++count;
      }
    }
  }
  if (max_count) *max_count = count;
  return best;
}

}  // namespace tp::kernels
