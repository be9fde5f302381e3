// libFuzzer target: the EMBOSS score-matrix reader (tp::kernels::ScoreMatrix::parse).
#include "fuzz_check.hpp"

#include <tilepipe/kernels/score_matrix.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = tp::kernels::ScoreMatrix::parse(text, "fuzz.mat");
  if (!m) {
    tp::fuzz::check_user_error(m.error());
    return 0;
  }
  const int n = m->size();
  tp::fuzz::check(n >= 1, "an empty alphabet");
  tp::fuzz::check(m->scores().size() == static_cast<std::size_t>(n) * static_cast<std::size_t>(n),
                  "scores are not size x size");
  for (const int s : m->scores()) {
    tp::fuzz::check(
        s >= -tp::kernels::ScoreMatrix::max_entry && s <= tp::kernels::ScoreMatrix::max_entry,
        "an entry outside [-max_entry, max_entry]");
  }
  // Every letter of the alphabet encodes to its index, in either case.
  for (int i = 0; i < n; ++i) {
    const char c = m->alphabet()[static_cast<std::size_t>(i)];
    tp::fuzz::check(m->index_of(c) == i, "a letter that does not encode to its index");
  }
  auto enc = m->encode(m->alphabet(), "fuzz sequence");
  tp::fuzz::check(enc.has_value(), "the alphabet does not encode");
  (void)m->max_score();
  return 0;
}
