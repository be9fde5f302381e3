// Substitution score matrices: EMBOSS matrix files, the built-in BLOSUM62 and EDNAFULL.
#pragma once

#include <tilepipe/support/expected.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tp::kernels {

/// A square substitution matrix over an alphabet of letters (upper case; lower case input maps to
/// the same letter), U always among them (is_added_u). Residues are encoded as indices into the
/// alphabet.
class ScoreMatrix {
 public:
  /// Entries must lie in [-max_entry, max_entry].
  static constexpr int max_entry = 10000;

  /// Parses the EMBOSS matrix format: '#' comment lines, a header line of column letters, then
  /// one row per letter: the letter and one integer per column. `source` names the text in errors.
  static Expected<ScoreMatrix> parse(std::string_view text, std::string_view source);
  /// Reads and parses an EMBOSS matrix file.
  static Expected<ScoreMatrix> load(const std::string& path);
  /// EBLOSUM62 as EMBOSS ships it (24 letters: 20 amino acids, B Z X *).
  static const ScoreMatrix& blosum62();
  /// EDNAFULL (NUC.4.4) as EMBOSS ships it (15 IUPAC letters and U).
  static const ScoreMatrix& ednafull();
  /// Where EMBOSS keeps its matrices, in the order searched: $EMBOSS_DATA when set, then
  /// /usr/share/EMBOSS/data (Debian's emboss-data) and /usr/local/share/EMBOSS/data.
  static std::vector<std::string> emboss_data_dirs();
  /// "blosum62", "eblosum62", "ednafull" (any case; EMBOSS names its BLOSUM62 file EBLOSUM62) for a
  /// built-in matrix; else the file at that path; else, for a name without '/', the EMBOSS matrix
  /// of that name in the first of `dirs` that holds it (EBLOSUM50, EPAM250, EDNAMAT: the name as
  /// given, in upper case, or with EMBOSS's leading E added: blosum50), named as EMBOSS names it.
  static Expected<ScoreMatrix> by_name_or_file(
      const std::string& name_or_path, const std::vector<std::string>& dirs = emboss_data_dirs());

  /// The matrix's name (e.g. "BLOSUM62", or the file path).
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// The letters, in the matrix's order.
  [[nodiscard]] const std::string& alphabet() const noexcept { return alphabet_; }
  /// Letters in the alphabet.
  [[nodiscard]] int size() const noexcept { return static_cast<int>(alphabet_.size()); }
  /// The score of encoded residues a and b.
  [[nodiscard]] int score(std::uint8_t a, std::uint8_t b) const noexcept {
    return scores_[a * alphabet_.size() + b];
  }
  /// The score of letters x and y (any case); both must be in the alphabet.
  [[nodiscard]] int score(char x, char y) const noexcept;
  /// The row-major scores, size() x size().
  [[nodiscard]] const std::vector<std::int32_t>& scores() const noexcept { return scores_; }
  /// The largest entry.
  [[nodiscard]] int max_score() const noexcept;
  /// Whether code a is the U a matrix without U gains on parsing: EMBOSS water scores such a U 0
  /// against every letter, itself included, and never counts it as an identity (a selenocysteine
  /// in a protein against BLOSUM62); a matrix with U scores it as its row says (EDNAFULL: as T).
  [[nodiscard]] bool is_added_u(std::uint8_t a) const noexcept { return a == added_u_; }
  /// The alphabet index of a letter (any case), or -1.
  [[nodiscard]] int index_of(char c) const noexcept {
    return index_[static_cast<unsigned char>(c)];
  }

  /// This matrix with every entry times `factor` (>= 1), for fractional gap penalties scored in
  /// integers (gap_scale); an Error if an entry leaves [-max_entry, max_entry].
  [[nodiscard]] Expected<ScoreMatrix> scaled(int factor) const;

  /// Encodes a sequence; an unknown letter is an Error naming `what`, the position and the letter.
  [[nodiscard]] Expected<std::vector<std::uint8_t>> encode(std::string_view residues,
                                                           std::string_view what) const;

 private:
  std::string name_;
  std::string alphabet_;
  std::vector<std::int32_t> scores_;
  std::array<std::int16_t, 256> index_{};
  int added_u_ = -1;  ///< the code of U when the matrix file has none
};

}  // namespace tp::kernels
