// libFuzzer target: the FASTA reader (tp::kernels::parse_fasta) on arbitrary bytes.
#include "fuzz_check.hpp"

#include <tilepipe/kernels/fasta.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto records = tp::kernels::parse_fasta(text, "fuzz.fa");
  if (!records) {
    tp::fuzz::check_user_error(records.error());
    return 0;
  }
  tp::fuzz::check(!records->empty(), "no record but no error");
  for (const auto& r : *records) {
    // A record may have no residues (a sequence of length 0, aligned as such).
    tp::fuzz::check(r.residues.size() == r.letters.size(), "residues and letters differ in length");
    tp::fuzz::check(r.line >= 1, "a record without a line number");
    for (const char c : r.residues) {
      tp::fuzz::check(c > ' ' && c < 0x7f && !(c >= 'a' && c <= 'z'),
                      "a residue that is not an upper-case printable letter or symbol");
    }
  }
  return 0;
}
