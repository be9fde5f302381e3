// `tilepipe align` output formats of one alignment: EMBOSS water's pair display, SAM, BLAST
// -outfmt 6.
#pragma once

#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/sw_align.hpp>

#include <cstdint>
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
  const kernels::ScoreMatrix& matrix;
  kernels::GapCosts gaps;
  const kernels::SwAlignment& alignment;
  kernels::SwAlignmentStats stats;
};

/// EMBOSS water's srspair output from its "#====" header on: the counts, then blocks of 50
/// columns (name, positions, `|` identity, `:` similarity, `.` other pairs as water marks them).
std::string format_pair(const AlignShown& a);
/// A SAM header (@HD, @SQ of the target, @PG) and one record: the query as the read (soft-clipped
/// ends), the target as the reference; unmapped (flag 4) when nothing scores above 0.
std::string format_sam(const AlignShown& a);
/// BLAST's tabular line (-outfmt 6, 12 columns); evalue `*`, bitscore the raw score; no line when
/// nothing scores above 0.
std::string format_blast(const AlignShown& a);

}  // namespace tp::app
