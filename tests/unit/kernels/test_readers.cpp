// Score matrices (built-in vs EMBOSS files, the EMBOSS format parser) and the FASTA reader.
#include <tilepipe/kernels/fasta.hpp>
#include <tilepipe/kernels/score_matrix.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <string>

namespace tp::kernels {
namespace {

TEST(ScoreMatrix, builtin_blosum62_spot_values) {
  const auto& b = ScoreMatrix::blosum62();
  EXPECT_EQ(b.alphabet(), "ARNDCQEGHILKMFPSTWYVBZX*U");  // U added (see below)
  EXPECT_EQ(b.score('W', 'W'), 11);
  EXPECT_EQ(b.score('C', 'C'), 9);
  EXPECT_EQ(b.score('A', 'A'), 4);
  EXPECT_EQ(b.score('D', 'E'), 2);
  EXPECT_EQ(b.score('w', 'f'), 1);
  EXPECT_EQ(b.score('B', 'N'), 3);
  EXPECT_EQ(b.score('Z', 'E'), 4);
  EXPECT_EQ(b.score('X', 'X'), -1);
  EXPECT_EQ(b.score('*', '*'), 1);
  EXPECT_EQ(b.score('*', 'A'), -4);
  EXPECT_EQ(b.score('I', 'V'), 3);
  EXPECT_EQ(b.score('P', 'F'), -4);
  for (char x : b.alphabet()) {
    for (char y : b.alphabet()) EXPECT_EQ(b.score(x, y), b.score(y, x)) << x << y;
  }
}

TEST(ScoreMatrix, builtin_ednafull_spot_values) {
  const auto& d = ScoreMatrix::ednafull();
  EXPECT_EQ(d.alphabet(), "ATGCSWRYKMBVHDNU");
  EXPECT_EQ(d.score('A', 'A'), 5);
  EXPECT_EQ(d.score('a', 't'), -4);
  EXPECT_EQ(d.score('N', 'N'), -1);
  EXPECT_EQ(d.score('N', 'A'), -2);
  EXPECT_EQ(d.score('U', 'T'), 5);
  EXPECT_EQ(d.score('R', 'A'), 1);
  EXPECT_EQ(d.score('S', 'S'), -1);
  EXPECT_EQ(d.score('B', 'A'), -4);
  EXPECT_EQ(d.score('V', 'T'), -4);
}

// A matrix without U gains one that scores 0 against every letter and is no identity, as EMBOSS
// water scores a U against EBLOSUM62 (selenocysteine); EDNAFULL's own U is T.
TEST(ScoreMatrix, a_matrix_without_u_scores_it_as_water_does) {
  const auto& b = ScoreMatrix::blosum62();
  ASSERT_EQ(b.index_of('U'), 24);
  EXPECT_EQ(b.index_of('u'), 24);
  for (const char x : b.alphabet()) {
    EXPECT_EQ(b.score('U', x), 0) << x;
    EXPECT_EQ(b.score(x, 'U'), 0) << x;
    EXPECT_EQ(b.is_added_u(static_cast<std::uint8_t>(b.index_of(x))), x == 'U') << x;
  }
  const auto& d = ScoreMatrix::ednafull();
  EXPECT_FALSE(d.is_added_u(static_cast<std::uint8_t>(d.index_of('U'))));
  auto small = ScoreMatrix::parse("A B\nA 2 -1\nB -1 3\n", "small");
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->alphabet(), "ABU");
  EXPECT_EQ(small->scores(), (std::vector<std::int32_t>{2, -1, 0, -1, 3, 0, 0, 0, 0}));
  auto scaled = small->scaled(2);
  ASSERT_TRUE(scaled.has_value());
  EXPECT_TRUE(scaled->is_added_u(2));
}

// EMBOSS matrices by name, looked up as water does in its data directories: the name as given, in
// upper case, or with the leading E; the file's own name; a missing one names the directories.
TEST(ScoreMatrix, emboss_matrices_by_name_from_the_given_directories) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tp_emboss_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ETOY") << "# toy\n A C\nA 3 -2\nC -2 5\n";
  for (const char* name : {"ETOY", "etoy", "toy", "Toy"}) {
    auto m = ScoreMatrix::by_name_or_file(name, {"/nonexistent/dir", dir.string()});
    ASSERT_TRUE(m.has_value()) << name << ": " << m.error().message;
    EXPECT_EQ(m->name(), "ETOY") << name;
    EXPECT_EQ(m->score('C', 'C'), 5);
  }
  auto missing = ScoreMatrix::by_name_or_file("EMISSING", {dir.string(), "/nonexistent/dir"});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(
      missing.error().message,
      "cannot read matrix file 'EMISSING': No such file or directory, and no EMBOSS matrix of "
      "that name in " +
          dir.string() + ", /nonexistent/dir");
  // A path is a path: no lookup.
  auto path = ScoreMatrix::by_name_or_file("./ETOY", {dir.string()});
  ASSERT_FALSE(path.has_value());
  EXPECT_EQ(path.error().message, "cannot read matrix file './ETOY': No such file or directory");
  // The built-in names stay built in.
  EXPECT_EQ(ScoreMatrix::by_name_or_file("EBLOSUM62", {dir.string()})->name(), "BLOSUM62");
  std::filesystem::remove_all(dir);
}

#ifdef TP_EMBOSS_DATA
// Every substitution matrix of Debian's emboss-data by its EMBOSS name (the search's default
// directories hold it; make deps installs it): the file's matrix, named as EMBOSS names it.
TEST(ScoreMatrix, every_emboss_data_matrix_by_name) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(TP_EMBOSS_DATA)) {
    const std::string name = e.path().filename().string();
    for (const char* family : {"EBLOSUM", "EPAM", "EDNA", "ENUC"}) {
      if (name.rfind(family, 0) == 0) names.push_back(name);
    }
  }
  int found = 0;
  for (const auto& name : names) {
    const std::string path = std::string(TP_EMBOSS_DATA) + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    ++found;
    auto by_name = ScoreMatrix::by_name_or_file(name, {TP_EMBOSS_DATA});
    ASSERT_TRUE(by_name.has_value()) << name << ": " << by_name.error().message;
    auto file = ScoreMatrix::load(path);
    ASSERT_TRUE(file.has_value()) << name << ": " << file.error().message;
    EXPECT_EQ(by_name->alphabet(), file->alphabet()) << name;
    EXPECT_EQ(by_name->scores(), file->scores()) << name;
    if (name != "EDNAFULL" && name != "EBLOSUM62") {
      EXPECT_EQ(by_name->name(), name);
    }
  }
  EXPECT_GE(found, 60);  // Debian 12's emboss-data: 71
  auto lower = ScoreMatrix::by_name_or_file("pam250", {TP_EMBOSS_DATA});
  ASSERT_TRUE(lower.has_value()) << lower.error().message;
  EXPECT_EQ(lower->name(), "EPAM250");
}

TEST(ScoreMatrix, builtins_equal_the_emboss_files) {
  for (const auto& [file, builtin] :
       {std::pair{"EBLOSUM62", &ScoreMatrix::blosum62()}, {"EDNAFULL", &ScoreMatrix::ednafull()}}) {
    auto m = ScoreMatrix::load(std::string(TP_EMBOSS_DATA) + "/" + file);
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_EQ(m->alphabet(), builtin->alphabet()) << file;
    EXPECT_EQ(m->scores(), builtin->scores()) << file;
  }
}
#endif

TEST(ScoreMatrix, parses_a_small_matrix_in_any_row_order) {
  auto m = ScoreMatrix::parse("# comment\n  A  B\nB -1 3\n\nA 2 -1\n", "small");
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->score('A', 'A'), 2);
  EXPECT_EQ(m->score('b', 'B'), 3);
  EXPECT_EQ(m->score('A', 'B'), -1);
  EXPECT_EQ(m->index_of('C'), -1);
}

// A row for a letter the header has no column for is left out, as EMBOSS reads ENUC.4.2 (rows for
// the ambiguity codes under four columns): the letter stays outside the alphabet.
TEST(ScoreMatrix, a_row_without_a_column_is_left_out) {
  auto m = ScoreMatrix::parse("  A  B\nA 2 -1\nS 1 1\nB -1 3\n", "rows");
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->alphabet(), "ABU");
  EXPECT_EQ(m->index_of('S'), -1);
  EXPECT_EQ(m->score('B', 'B'), 3);
}

TEST(ScoreMatrix, malformed_matrices_are_errors_naming_the_line) {
  auto expect_error = [](const char* text, const std::string& message) {
    auto m = ScoreMatrix::parse(text, "m.txt");
    ASSERT_FALSE(m.has_value()) << text;
    EXPECT_EQ(m.error().code, Errc::invalid_argument);
    EXPECT_EQ(m.error().message, message);
  };
  expect_error("# only comments\n", "matrix m.txt: no header line of letters");
  expect_error("A B\nA 1 2\n", "matrix m.txt: no row for letter 'B'");
  expect_error("A B\nA 1\nB 1 1\n", "matrix m.txt line 2: row 'A' has 1 scores, expected 2");
  expect_error("A B\nA 1 x\n", "matrix m.txt line 2 score: 'x' is not a whole number");
  expect_error("A B\nCC 1 1\n", "matrix m.txt line 2: row label 'CC' is not one letter");
  expect_error("A B\nC 1\n", "matrix m.txt line 2: row 'C' has 1 scores, expected 2");
  expect_error("A A\n", "matrix m.txt line 1: letter 'A' twice");
  expect_error("A BC\n", "matrix m.txt line 1: column header 'BC' is not one letter");
  expect_error("A B\nA 1 1\nA 1 1\n", "matrix m.txt line 3: row 'A' twice");
  expect_error("A\nA 99999\n", "matrix m.txt line 2 score: 99999 must be <= 10000");
  auto missing = ScoreMatrix::load("/nonexistent/matrix");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message,
            "cannot read matrix file '/nonexistent/matrix': No such file or directory");
}

TEST(ScoreMatrix, encode_names_an_unknown_letter) {
  auto e = ScoreMatrix::blosum62().encode("ACDJ", "q.fa sequence 'x'");
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().message,
            "q.fa sequence 'x' position 4: letter 'J' is not in the BLOSUM62 alphabet");
  auto ok = ScoreMatrix::ednafull().encode("acgtn", "x");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, (std::vector<std::uint8_t>{0, 3, 2, 1, 14}));
}

TEST(Fasta, multi_line_lower_case_several_records) {
  auto r = parse_fasta(">one first record\nacgt\nNNac\r\n\n>two\n; comment\nMKV*\n", "x.fa");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "one");
  EXPECT_EQ((*r)[0].residues, "ACGTNNAC");
  EXPECT_EQ((*r)[1].name, "two");
  EXPECT_EQ((*r)[1].residues, "MKV*");
  EXPECT_EQ((*r)[1].line, 5u);
}

// A header without residues is a record of length 0, wherever it stands (issue 14: a sequence
// of length 0 is aligned, not refused).
TEST(Fasta, a_record_without_residues_has_length_zero) {
  auto r = parse_fasta(">a\n>b desc\r\nAC\n\n>c\n\n>d\n", "x.fa");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->size(), 4U);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"a", ""}, {"b", "AC"}, {"c", ""}, {"d", ""}};
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ((*r)[k].name, want[k].first);
    EXPECT_EQ((*r)[k].residues, want[k].second);
  }
  EXPECT_EQ((*r)[2].line, 5U);
}

TEST(Fasta, malformed_input_is_an_error_naming_the_problem) {
  auto expect_error = [](const char* text, const std::string& message) {
    auto r = parse_fasta(text, "x.fa");
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().code, Errc::invalid_argument);
    EXPECT_EQ(r.error().message, message);
  };
  expect_error("", "x.fa: no FASTA record (empty file?)");
  expect_error("\n\n", "x.fa: no FASTA record (empty file?)");
  expect_error("ACGT\n", "x.fa line 1: not FASTA (expected a '>' header line first)");
  expect_error(
      ">a\nA\x01"
      "C\n",
      "x.fa line 2: unreadable character 0x01");
  auto missing = read_fasta("/nonexistent/q.fa");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message, "cannot read '/nonexistent/q.fa': No such file or directory");
  auto dir = read_fasta("/");
  ASSERT_FALSE(dir.has_value());
  EXPECT_EQ(dir.error().message, "cannot read '/': Is a directory");
}

TEST(Fasta, reads_the_test_data_files) {
  auto r = read_fasta(std::string(TP_TEST_DATA_DIR) + "/fasta/protein_query.fa");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().residues.size(), 120u);
}

}  // namespace
}  // namespace tp::kernels
