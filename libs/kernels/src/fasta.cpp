// FASTA parsing with one-line errors that name the file and the line.
#include <tilepipe/kernels/fasta.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tp::kernels {

Expected<std::vector<FastaRecord>> parse_fasta(std::string_view text, std::string_view source) {
  std::vector<FastaRecord> out;
  const auto lines = split(text, '\n');
  auto empty_record = [&]() {
    return fail(Errc::invalid_argument, fmt::format("{} line {}: sequence '{}' is empty", source,
                                                    out.back().line, out.back().name));
  };
  for (std::size_t ln = 0; ln < lines.size(); ++ln) {
    std::string_view line = lines[ln];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty() || line.front() == ';') continue;
    if (line.front() == '>') {
      if (!out.empty() && out.back().residues.empty()) return empty_record();
      std::string_view name = trim(line.substr(1));
      name = name.substr(0, name.find_first_of(" \t"));
      out.push_back(FastaRecord{std::string(name), {}, {}, ln + 1});
      continue;
    }
    if (out.empty()) {
      return fail(
          Errc::invalid_argument,
          fmt::format("{} line {}: not FASTA (expected a '>' header line first)", source, ln + 1));
    }
    for (const char c : line) {
      const auto u = static_cast<unsigned char>(c);
      if (c == ' ' || c == '\t') continue;
      if (!std::isgraph(u)) {
        return fail(Errc::invalid_argument,
                    fmt::format("{} line {}: unreadable character 0x{:02x}", source, ln + 1, u));
      }
      out.back().residues += static_cast<char>(std::toupper(u));
      out.back().letters += c;
    }
  }
  if (out.empty()) {
    return fail(Errc::invalid_argument, fmt::format("{}: no FASTA record (empty file?)", source));
  }
  if (out.back().residues.empty()) return empty_record();
  return out;
}

Expected<std::vector<FastaRecord>> read_fasta(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return fail(Errc::invalid_argument,
                fmt::format("cannot read '{}': {}", path, std::strerror(EISDIR)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(Errc::invalid_argument,
                fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return fail(Errc::invalid_argument, fmt::format("cannot read '{}'", path));
  return parse_fasta(text.str(), path);
}

}  // namespace tp::kernels
