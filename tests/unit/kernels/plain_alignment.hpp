// The test oracle for the sw traceback: a plain Gotoh DP over full matrices with traceback.
#pragma once

#include <tilepipe/kernels/score_matrix.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "naive_sw.hpp"

namespace tp::kernels {

using Ops = std::vector<std::pair<char, long>>;

constexpr long ninf = -1000000000L;

// The score of alignment columns from (q0, t0) (0-based), written here: match scores, and
// open + (L-1) * min(open, extend) per gap run (the score pass's recurrence, docs/adr/0007).
inline long score_of(const ScoreMatrix& mx, const std::string& q, const std::string& t, GapCosts g,
                     std::size_t q0, std::size_t t0, const Ops& ops) {
  long s = 0;
  for (const auto& [op, n] : ops) {
    if (op == 'M') {
      for (long k = 0; k < n; ++k) s += mx.score(q.at(q0++), t.at(t0++));
    } else {
      s -= g.open + (n - 1) * std::min(g.open, g.extend);
      (op == 'I' ? q0 : t0) += static_cast<std::size_t>(n);
    }
  }
  return s;
}

inline void push(Ops& ops, char op) {
  if (!ops.empty() && ops.back().first == op) {
    ++ops.back().second;
  } else {
    ops.emplace_back(op, 1);
  }
}

struct Plain {
  long score = 0;
  int end_count = 0;                    // cells of the best score (naive_sw)
  int start_count = 0;                  // starts of optimal alignments ending at the end cell
  long qs = 0, ts = 0, qe = 0, te = 0;  // 1-based, inclusive
  Ops ops;
};

// The optimal alignments ending at (qe, te) (naive_sw's end): full matrices of the best score of
// q[i..qe] against t[j..te] (Gotoh, run backwards from the end cell, no local restart); the
// start is the largest (i, then j) reaching the score, and the path its full-matrix traceback.
inline Plain plain_local(const ScoreMatrix& mx, const std::string& q, const std::string& t,
                         GapCosts g) {
  Plain p;
  const SwResult end = naive_sw(mx, q, t, g, &p.end_count);
  p.score = end.score;
  if (end.score == 0) return p;
  const auto ei = static_cast<std::size_t>(end.end_query);
  const auto ej = static_cast<std::size_t>(end.end_target);
  const std::size_t w = ej + 2;
  std::vector<long> H((ei + 2) * w, ninf), E(H), F(H);
  auto at = [w](std::vector<long>& v, std::size_t i, std::size_t j) -> long& {
    return v[i * w + j];
  };
  for (std::size_t i = ei + 1; i >= 1; --i) {
    for (std::size_t j = ej + 1; j >= 1; --j) {
      if (i == ei + 1 && j == ej + 1) {
        at(H, i, j) = 0;
        continue;
      }
      long e = ninf, f = ninf, m = ninf;
      if (j <= ej) e = std::max(at(H, i, j + 1) - g.open, at(E, i, j + 1) - g.extend);
      if (i <= ei) f = std::max(at(H, i + 1, j) - g.open, at(F, i + 1, j) - g.extend);
      if (i <= ei && j <= ej) m = mx.score(q[i - 1], t[j - 1]) + at(H, i + 1, j + 1);
      at(E, i, j) = e;
      at(F, i, j) = f;
      at(H, i, j) = std::max({m, e, f});
    }
  }
  for (std::size_t i = ei; i >= 1; --i) {
    for (std::size_t j = ej; j >= 1; --j) {
      EXPECT_LE(at(H, i, j), end.score);
      if (at(H, i, j) == end.score && ++p.start_count == 1) {
        p.qs = static_cast<long>(i);
        p.ts = static_cast<long>(j);
      }
    }
  }
  p.qe = end.end_query;
  p.te = end.end_target;
  // Traceback through the full matrices, from the start to the end cell.
  std::size_t i = static_cast<std::size_t>(p.qs), j = static_cast<std::size_t>(p.ts);
  char state = 'H';
  while (i != ei + 1 || j != ej + 1) {
    if (state == 'H') {
      if (i <= ei && j <= ej && at(H, i, j) == mx.score(q[i - 1], t[j - 1]) + at(H, i + 1, j + 1)) {
        push(p.ops, 'M');
        ++i;
        ++j;
      } else {
        state = at(H, i, j) == at(E, i, j) ? 'E' : 'F';
      }
    } else if (state == 'E') {
      push(p.ops, 'D');
      state = at(E, i, j) == at(H, i, j + 1) - g.open ? 'H' : 'E';
      ++j;
    } else {
      push(p.ops, 'I');
      state = at(F, i, j) == at(H, i + 1, j) - g.open ? 'H' : 'F';
      ++i;
    }
  }
  return p;
}

}  // namespace tp::kernels
