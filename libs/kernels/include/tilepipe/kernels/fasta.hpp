// A FASTA reader: '>' headers, multi-line sequences, residues kept as letters (upper-cased).
#pragma once

#include <tilepipe/support/expected.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace tp::kernels {

/// One FASTA record.
struct FastaRecord {
  std::string name;      ///< the header's first word (without '>')
  std::string residues;  ///< the sequence, upper case, whitespace removed
  std::string letters;   ///< the sequence as written (case kept), whitespace removed
  std::size_t line = 0;  ///< the header's line number (1-based)
};

/// Parses FASTA text: one or more records, each a '>' header line and sequence lines (any case,
/// any line length, LF or CRLF; blank lines and ';' comment lines ignored; the gap characters '-'
/// and '.' of aligned FASTA dropped, as EMBOSS drops them). A record may be empty (a header and no
/// residues: a sequence of length 0). Errors name `source` and the line: text before the first
/// header, no record at all, a character that is not a printable non-space letter or symbol.
Expected<std::vector<FastaRecord>> parse_fasta(std::string_view text, std::string_view source);

/// Reads and parses a FASTA file ("-": standard input); gzip-compressed bytes (any name) are
/// inflated with zlib where the build has it. An unreadable file is an Error naming the path and
/// the reason.
Expected<std::vector<FastaRecord>> read_fasta(const std::string& path);

}  // namespace tp::kernels
