// `tilepipe align` output formats of one alignment: EMBOSS water's pair display, SAM, BLAST
// -outfmt 6.
#pragma once

#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/sw_align.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tp::app {

/// One input sequence: its FASTA name, its letters as written and encoded.
struct AlignSequence {
  std::string name;
  std::string letters;
  std::vector<std::uint8_t> codes;
};

/// What the formats show: the sequences, the matrix, the gap costs and the alignment.
struct AlignShown {
  const AlignSequence& query;
  const AlignSequence& target;
  const kernels::ScoreMatrix& matrix;  ///< scaled by `scale`
  double gap_open;
  double gap_extend;
  int scale;  ///< scores are in units of 1 / scale
  const kernels::SwAlignment& alignment;
  kernels::SwAlignmentStats stats;
};

/// A score in units of 1 / scale as the text outputs show it: an integer when scale is 1, else the
/// shortest decimal ("362.5").
std::string score_text(std::int64_t score, int scale);
/// A number as EMBOSS water prints penalties and scores: 3 decimals, trailing zeros dropped but one
/// ("10.0", "0.5", "364.042").
std::string water_number(double x);

/// EMBOSS water's srspair output from its "#====" header on: the counts, then blocks of 50
/// columns (name, positions, `|` identity, `:` similarity, `.` other pairs as water marks them).
std::string format_pair(const AlignShown& a);
/// A SAM header (@HD, @SQ of the target, @PG) and one record: the query as the read (soft-clipped
/// ends), the target as the reference; unmapped (flag 4) when nothing scores above 0.
std::string format_sam(const AlignShown& a);
/// A SAM header: @HD, one @SQ per target (name and length, in the order given), @PG.
std::string sam_header(std::span<const AlignSequence* const> targets);
/// One SAM record of format_sam (no header); `secondary`: flag 256, a query's alignment after its
/// primary one (SAM: one primary record per read).
std::string sam_record(const AlignShown& a, bool secondary = false);
/// The SAM record of a query that aligns nowhere (flag 4, no reference, SEQ the query).
std::string sam_unmapped(const AlignSequence& query);
/// BLAST's tabular line (-outfmt 6, 12 columns); evalue `*`, bitscore the raw score; no line when
/// nothing scores above 0.
std::string format_blast(const AlignShown& a);

/// The alignment's JSON fields (`tilepipe align --json`, docs/cli.md): positions (1-based,
/// inclusive), cigar, length, identity, similarity, gaps.
nlohmann::ordered_json alignment_json(const kernels::SwAlignment& a,
                                      const kernels::SwAlignmentStats& s);

}  // namespace tp::app
