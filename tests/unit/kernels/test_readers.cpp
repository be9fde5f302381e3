// Score matrices (built-in vs EMBOSS files, the EMBOSS format parser) and the FASTA reader.
#include <tilepipe/kernels/fasta.hpp>
#include <tilepipe/kernels/score_matrix.hpp>

#include <gtest/gtest.h>

#include <string>

namespace tp::kernels {
namespace {

TEST(ScoreMatrix, builtin_blosum62_spot_values) {
  const auto& b = ScoreMatrix::blosum62();
  EXPECT_EQ(b.alphabet(), "ARNDCQEGHILKMFPSTWYVBZX*");
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

#ifdef TP_EMBOSS_DATA
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
  expect_error("A B\nC 1 1\n", "matrix m.txt line 2: row label 'C' is not a letter of the header");
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
  expect_error(">a\n>b\nAC\n", "x.fa line 1: sequence 'a' is empty");
  expect_error(">a\nAC\n>b\n", "x.fa line 3: sequence 'b' is empty");
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
