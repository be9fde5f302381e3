// FASTA parsing with one-line errors that name the file and the line.
#include <tilepipe/kernels/fasta.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#ifdef TP_HAVE_ZLIB
#include <zlib.h>
#endif

namespace tp::kernels {

Expected<std::vector<FastaRecord>> parse_fasta(std::string_view text, std::string_view source) {
  std::vector<FastaRecord> out;
  const auto lines = split(text, '\n');
  for (std::size_t ln = 0; ln < lines.size(); ++ln) {
    std::string_view line = lines[ln];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty() || line.front() == ';') continue;
    if (line.front() == '>') {
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
      // Gap characters of aligned FASTA are dropped, as EMBOSS drops them on reading.
      if (c == ' ' || c == '\t' || c == '-' || c == '.') continue;
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
  return out;
}

namespace {

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Expected<std::string> gunzip(std::string_view bytes, std::string_view source) {
#ifdef TP_HAVE_ZLIB
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer; members after the first are read too (gzip -c a b).
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    return fail(Errc::invalid_argument, fmt::format("{}: cannot start zlib", source));
  }
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  char buffer[1 << 16];
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (rc == Z_STREAM_END && z.avail_in > 0 &&
        is_gzip({reinterpret_cast<const char*>(z.next_in), z.avail_in})) {
      inflateReset(&z);
      continue;
    }
    if (rc != Z_OK) break;
  }
  const std::string message = z.msg ? z.msg : "truncated";
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    return fail(Errc::invalid_argument,
                fmt::format("{}: not a readable gzip file ({})", source, message));
  }
  return out;
#else
  (void)bytes;
  return fail(Errc::invalid_argument,
              fmt::format("{} is gzip-compressed: this tilepipe was built without zlib", source));
#endif
}

}  // namespace

Expected<std::vector<FastaRecord>> read_fasta(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    if (std::cin.bad()) return fail(Errc::invalid_argument, "cannot read standard input");
  } else {
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
    text << in.rdbuf();
    if (in.bad()) return fail(Errc::invalid_argument, fmt::format("cannot read '{}'", path));
  }
  const std::string source = path == "-" ? std::string("standard input") : path;
  std::string bytes = std::move(text).str();
  if (is_gzip(bytes)) {
    auto plain = gunzip(bytes, source);
    if (!plain) return Unexpected{plain.error()};
    bytes = std::move(*plain);
  }
  return parse_fasta(bytes, source);
}

}  // namespace tp::kernels
