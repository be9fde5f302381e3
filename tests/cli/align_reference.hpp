// What the `tilepipe align` CLI tests share: the command as a process and the score of a CIGAR
// computed by the test itself (never by the tool).
#pragma once

#include <tilepipe/kernels/score_matrix.hpp>

#include "cli_test.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tp::test {

/// `tilepipe align ARGS...`.
inline ProcessResult align(std::vector<std::string> args) {
  return cli::tilepipe("align", std::move(args), 60);
}

/// The directories an EMBOSS matrix name is looked up in, as the error lists them.
inline std::string emboss_dirs() {
  std::string out;
  for (const auto& d : kernels::ScoreMatrix::emboss_data_dirs())
    out += (out.empty() ? "" : ", ") + d;
  return out;
}

/// The score of a CIGAR from 1-based starts: matrix scores of the M columns, and
/// open + (L - 1) * extend per I or D run of L columns.
inline long cigar_score(const kernels::ScoreMatrix& m, const std::string& q, const std::string& t,
                        long qs, long ts, const std::string& cigar, int open, int extend) {
  long score = 0, n = 0;
  auto i = static_cast<std::size_t>(qs - 1), j = static_cast<std::size_t>(ts - 1);
  for (const char c : cigar) {
    if (c >= '0' && c <= '9') {
      n = n * 10 + (c - '0');
      continue;
    }
    EXPECT_TRUE(c == 'M' || c == 'I' || c == 'D') << cigar;
    if (c == 'M') {
      for (long k = 0; k < n; ++k) score += m.score(q.at(i++), t.at(j++));
    } else {
      score -= open + (n - 1) * extend;
      (c == 'I' ? i : j) += static_cast<std::size_t>(n);
    }
    n = 0;
  }
  return score;
}

}  // namespace tp::test
