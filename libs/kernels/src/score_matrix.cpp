// EMBOSS matrix parsing, lookup and sequence encoding.
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tp::kernels {

namespace detail {
extern const char* const blosum62_text;
extern const char* const ednafull_text;
}  // namespace detail

namespace {

std::string printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (std::isprint(u)) return fmt::format("'{}'", c);
  return fmt::format("0x{:02x}", u);
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

Expected<ScoreMatrix> ScoreMatrix::parse(std::string_view text, std::string_view source) {
  ScoreMatrix m;
  m.name_ = std::string(source);
  m.index_.fill(-1);
  std::vector<bool> row_seen;
  const auto lines = split(text, '\n');
  auto where = [&](std::size_t line) { return fmt::format("matrix {} line {}", source, line + 1); };
  for (std::size_t ln = 0; ln < lines.size(); ++ln) {
    const std::string_view line = lines[ln];
    const auto w = words(line);
    if (w.empty() || w[0].front() == '#') continue;
    if (m.alphabet_.empty()) {
      for (auto letter : w) {
        if (letter.size() != 1) {
          return fail(Errc::invalid_argument, where(ln) + ": column header '" +
                                                  std::string(letter) + "' is not one letter");
        }
        const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(letter[0])));
        if (m.index_[static_cast<unsigned char>(c)] >= 0) {
          return fail(Errc::invalid_argument, where(ln) + ": letter " + printable(c) + " twice");
        }
        m.index_[static_cast<unsigned char>(c)] = static_cast<std::int16_t>(m.alphabet_.size());
        m.alphabet_ += c;
      }
      m.scores_.assign(m.alphabet_.size() * m.alphabet_.size(), 0);
      row_seen.assign(m.alphabet_.size(), false);
      continue;
    }
    if (w[0].size() != 1) {
      return fail(Errc::invalid_argument,
                  where(ln) + ": row label '" + std::string(w[0]) + "' is not one letter");
    }
    if (w.size() != m.alphabet_.size() + 1) {
      return fail(Errc::invalid_argument,
                  where(ln) + fmt::format(": row '{}' has {} scores, expected {}", w[0],
                                          w.size() - 1, m.alphabet_.size()));
    }
    // A row for a letter without a column (ENUC.4.2's ambiguity codes): EMBOSS leaves it out.
    if (m.index_of(w[0][0]) < 0) continue;
    const auto row = static_cast<std::size_t>(m.index_of(w[0][0]));
    if (row_seen[row]) {
      return fail(Errc::invalid_argument, where(ln) + ": row " + printable(w[0][0]) + " twice");
    }
    row_seen[row] = true;
    for (std::size_t col = 0; col < m.alphabet_.size(); ++col) {
      auto v = parse_int(w[col + 1], where(ln) + " score", -max_entry, max_entry);
      if (!v) return Unexpected{Error{Errc::invalid_argument, v.error().message}};
      m.scores_[row * m.alphabet_.size() + col] = static_cast<std::int32_t>(*v);
    }
  }
  if (m.alphabet_.empty()) {
    return fail(Errc::invalid_argument,
                fmt::format("matrix {}: no header line of letters", source));
  }
  for (std::size_t r = 0; r < row_seen.size(); ++r) {
    if (!row_seen[r]) {
      return fail(Errc::invalid_argument, fmt::format("matrix {}: no row for letter {}", source,
                                                      printable(m.alphabet_[r])));
    }
  }
  if (m.index_['U'] < 0) {
    // U as EMBOSS water scores a letter its matrix lacks: 0 against every letter (is_added_u).
    const std::size_t n = m.alphabet_.size();
    std::vector<std::int32_t> wider((n + 1) * (n + 1), 0);
    for (std::size_t r = 0; r < n; ++r) {
      std::copy_n(m.scores_.begin() + static_cast<std::ptrdiff_t>(r * n), n,
                  wider.begin() + static_cast<std::ptrdiff_t>(r * (n + 1)));
    }
    m.scores_ = std::move(wider);
    m.added_u_ = static_cast<int>(n);
    m.index_['U'] = static_cast<std::int16_t>(n);
    m.alphabet_ += 'U';
  }
  for (int c = 'a'; c <= 'z'; ++c) {
    const auto upper = static_cast<unsigned char>(std::toupper(c));
    if (m.index_[static_cast<std::size_t>(c)] < 0)
      m.index_[static_cast<std::size_t>(c)] = m.index_[upper];
  }
  return m;
}

Expected<ScoreMatrix> ScoreMatrix::load(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return fail(Errc::invalid_argument,
                fmt::format("cannot read matrix file '{}': {}", path, std::strerror(EISDIR)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(Errc::invalid_argument,
                fmt::format("cannot read matrix file '{}': {}", path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return fail(Errc::invalid_argument, fmt::format("cannot read matrix file '{}'", path));
  return parse(text.str(), path);
}

namespace {
ScoreMatrix builtin(const char* text, const char* name) {
  auto m = ScoreMatrix::parse(text, name);
  TP_ASSERT(m.has_value());
  return std::move(m).value();
}
}  // namespace

const ScoreMatrix& ScoreMatrix::blosum62() {
  static const ScoreMatrix m = builtin(detail::blosum62_text, "BLOSUM62");
  return m;
}

const ScoreMatrix& ScoreMatrix::ednafull() {
  static const ScoreMatrix m = builtin(detail::ednafull_text, "EDNAFULL");
  return m;
}

std::vector<std::string> ScoreMatrix::emboss_data_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("EMBOSS_DATA"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  dirs.emplace_back("/usr/share/EMBOSS/data");
  dirs.emplace_back("/usr/local/share/EMBOSS/data");
  return dirs;
}

Expected<ScoreMatrix> ScoreMatrix::by_name_or_file(const std::string& name_or_path,
                                                   const std::vector<std::string>& dirs) {
  std::string lower = name_or_path;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "blosum62" || lower == "eblosum62") return blosum62();
  if (lower == "ednafull") return ednafull();
  std::error_code ec;
  const bool is_name = !name_or_path.empty() && name_or_path.find('/') == std::string::npos;
  if (std::filesystem::exists(name_or_path, ec) || !is_name) return load(name_or_path);
  std::string upper = name_or_path;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::vector<std::string> names = {name_or_path, upper};
  if (upper.front() != 'E') names.push_back("E" + upper);
  for (const auto& dir : dirs) {
    for (const auto& name : names) {
      const auto path = std::filesystem::path(dir) / name;
      if (!std::filesystem::is_regular_file(path, ec)) continue;
      auto m = load(path.string());
      if (m) m->name_ = name;
      return m;
    }
  }
  std::string searched;
  for (const auto& dir : dirs) searched += (searched.empty() ? "" : ", ") + dir;
  return fail(Errc::invalid_argument,
              fmt::format("cannot read matrix file '{}': {}, and no EMBOSS matrix of that name in "
                          "{}",
                          name_or_path, std::strerror(ENOENT), searched));
}

int ScoreMatrix::score(char x, char y) const noexcept {
  const int a = index_of(x), b = index_of(y);
  TP_EXPECTS(a >= 0 && b >= 0);
  return score(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b));
}

Expected<ScoreMatrix> ScoreMatrix::scaled(int factor) const {
  TP_EXPECTS(factor >= 1);
  ScoreMatrix out = *this;
  for (std::int32_t& x : out.scores_) {
    const std::int64_t v = std::int64_t{x} * factor;
    if (v > max_entry || v < -max_entry) {
      return fail(Errc::out_of_range,
                  fmt::format("matrix {} scaled by {} has the entry {}, beyond +-{}", name_, factor,
                              v, max_entry));
    }
    x = static_cast<std::int32_t>(v);
  }
  return out;
}

int ScoreMatrix::max_score() const noexcept {
  return *std::max_element(scores_.begin(), scores_.end());
}

Expected<std::vector<std::uint8_t>> ScoreMatrix::encode(std::string_view residues,
                                                        std::string_view what) const {
  std::vector<std::uint8_t> out(residues.size());
  for (std::size_t i = 0; i < residues.size(); ++i) {
    const int k = index_of(residues[i]);
    if (k < 0) {
      return fail(Errc::invalid_argument,
                  fmt::format("{} position {}: letter {} is not in the {} alphabet", what, i + 1,
                              printable(residues[i]), name_));
    }
    out[i] = static_cast<std::uint8_t>(k);
  }
  return out;
}

}  // namespace tp::kernels
