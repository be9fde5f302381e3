// The pair (EMBOSS water's srspair), SAM and BLAST tabular displays of one local alignment.
#include "align_formats.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace tp::app {
namespace {

double percent(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The markup of a query residue a against a target residue b as water draws it: ajalign.c's
// consensus for two sequences (alignConsStats), which looks at the query's residue: '|' an
// identity that scores above 0, ':' a similar pair, '.' a pair where the query residue scores
// above 0 with itself or with b (not both), ' ' neither (N against N in EDNAFULL, X against X).
char markup(const kernels::ScoreMatrix& m, std::uint8_t a, std::uint8_t b) {
  const int self = m.score(a, a) > 0 ? 1 : 0;
  const int with = a == b ? self : m.score(a, b) > 0 ? 1 : 0;
  const int matching = self + with;
  if (matching == 2) return a == b ? '|' : ':';
  return matching == 1 ? '.' : ' ';
}

// The alignment's three rows (query letters, markup, target letters) with '-' for gaps.
struct Rows {
  std::string query, mark, target;
};

Rows rows_of(const AlignShown& a) {
  Rows r;
  auto i = static_cast<std::size_t>(a.alignment.query_start - 1);
  auto j = static_cast<std::size_t>(a.alignment.target_start - 1);
  for (const kernels::SwOp& op : a.alignment.ops) {
    for (std::int64_t k = 0; k < op.length; ++k) {
      if (op.op == 'M') {
        r.query += a.query.letters[i];
        r.target += a.target.letters[j];
        r.mark += markup(a.matrix, a.query.codes[i], a.target.codes[j]);
        ++i;
        ++j;
      } else if (op.op == 'I') {
        r.query += a.query.letters[i++];
        r.target += '-';
        r.mark += ' ';
      } else {
        r.query += '-';
        r.target += a.target.letters[j++];
        r.mark += ' ';
      }
    }
  }
  return r;
}

// One line of a block: the name in 13 columns, the first and last residue positions of the line
// (water shows the last position before the line, twice, for a line of gaps only).
std::string block_line(const std::string& name, std::string_view letters, std::int64_t& consumed) {
  const auto residues = static_cast<std::int64_t>(
      std::count_if(letters.begin(), letters.end(), [](char c) { return c != '-'; }));
  const std::int64_t first = residues > 0 ? consumed + 1 : consumed;
  consumed += residues;
  return fmt::format("{:<13.13} {:>6} {} {:>6}\n", name, first, letters, consumed);
}

}  // namespace

std::string score_text(std::int64_t score, int scale) {
  if (scale == 1) return fmt::format("{}", score);
  return fmt::format("{}", static_cast<double>(score) / scale);
}

std::string water_number(double x) {
  std::string s = fmt::format("{:.3f}", x);
  while (s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}

std::string format_pair(const AlignShown& a) {
  const auto& s = a.stats;
  // water names the built-in BLOSUM62 by its EMBOSS data file, EBLOSUM62.
  std::string out = "#=======================================\n#\n# Aligned_sequences: 2\n";
  out += fmt::format("# 1: {}\n# 2: {}\n# Matrix: {}\n", a.query.name, a.target.name,
                     a.matrix.name() == "BLOSUM62" ? "EBLOSUM62" : a.matrix.name());
  out += fmt::format("# Gap_penalty: {}\n# Extend_penalty: {}\n#\n", water_number(a.gap_open),
                     water_number(a.gap_extend));
  out += fmt::format("# Length: {}\n", s.length);
  out += fmt::format("# Identity:   {:>5}/{} ({:4.1f}%)\n", s.identity, s.length,
                     percent(s.identity, s.length));
  out += fmt::format("# Similarity: {:>5}/{} ({:4.1f}%)\n", s.similarity, s.length,
                     percent(s.similarity, s.length));
  out += fmt::format("# Gaps:       {:>5}/{} ({:4.1f}%)\n", s.gaps, s.length,
                     percent(s.gaps, s.length));
  out += fmt::format("# Score: {}\n# \n#\n#=======================================\n\n",
                     water_number(static_cast<double>(a.alignment.score) / a.scale));
  const Rows r = rows_of(a);
  std::int64_t q = a.alignment.query_start - 1, t = a.alignment.target_start - 1;
  constexpr std::size_t width = 50;
  for (std::size_t c = 0; c < r.query.size(); c += width) {
    const std::size_t n = std::min(width, r.query.size() - c);
    out += block_line(a.query.name, std::string_view(r.query).substr(c, n), q);
    out += fmt::format("{:21}{}\n", "", std::string_view(r.mark).substr(c, n));
    out += block_line(a.target.name, std::string_view(r.target).substr(c, n), t);
    out += "\n";
  }
  out += "\n#---------------------------------------\n#---------------------------------------\n";
  return out;
}

std::string sam_header(std::span<const AlignSequence* const> targets) {
  std::string out = "@HD\tVN:1.6\tSO:unsorted\n";
  for (const AlignSequence* t : targets) {
    // SAM's LN is at least 1: a target of length 0, which nothing maps to, has no @SQ line.
    if (!t->codes.empty()) out += fmt::format("@SQ\tSN:{}\tLN:{}\n", t->name, t->codes.size());
  }
  return out + "@PG\tID:tilepipe\tPN:tilepipe\n";
}

namespace {
// SAM's SEQ: the query's letters in upper case ('*' for a query of length 0).
std::string sam_seq(const AlignSequence& query) {
  if (query.letters.empty()) return "*";
  std::string seq = query.letters;
  std::transform(seq.begin(), seq.end(), seq.begin(), [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  });
  return seq;
}
}  // namespace

std::string sam_unmapped(const AlignSequence& query) {
  return fmt::format("{}\t4\t*\t0\t0\t*\t*\t0\t0\t{}\t*\n", query.name, sam_seq(query));
}

std::string sam_record(const AlignShown& a, bool secondary) {
  const auto& al = a.alignment;
  if (al.score <= 0) return sam_unmapped(a.query);
  const std::string seq = sam_seq(a.query);
  const std::int64_t head = al.query_start - 1;
  const std::int64_t tail = static_cast<std::int64_t>(a.query.codes.size()) - al.query_end;
  const std::string cig = (head > 0 ? fmt::format("{}S", head) : "") + kernels::cigar(al) +
                          (tail > 0 ? fmt::format("{}S", tail) : "");
  return fmt::format("{}\t{}\t{}\t{}\t255\t{}\t*\t0\t0\t{}\t*\tAS:i:{}\tNM:i:{}\n", a.query.name,
                     secondary ? 256 : 0, a.target.name, al.target_start, cig, seq,
                     std::lround(static_cast<double>(al.score) / a.scale),
                     a.stats.mismatches + a.stats.gaps);
}

std::string format_sam(const AlignShown& a) {
  const AlignSequence* target = &a.target;
  return sam_header({&target, 1}) + sam_record(a);
}

std::string format_blast(const AlignShown& a) {
  const auto& al = a.alignment;
  if (al.score <= 0) return "";
  const auto& s = a.stats;
  return fmt::format("{}\t{}\t{:.3f}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t*\t{}\n", a.query.name,
                     a.target.name, percent(s.identity, s.length), s.length, s.mismatches,
                     s.gap_opens, al.query_start, al.query_end, al.target_start, al.target_end,
                     score_text(al.score, a.scale));
}

nlohmann::ordered_json alignment_json(const kernels::SwAlignment& a,
                                      const kernels::SwAlignmentStats& s) {
  return {{"query_start", a.query_start},
          {"query_end", a.query_end},
          {"target_start", a.target_start},
          {"target_end", a.target_end},
          {"cigar", kernels::cigar(a)},
          {"length", s.length},
          {"identity", s.identity},
          {"similarity", s.similarity},
          {"gaps", s.gaps}};
}

}  // namespace tp::app
