// `tilepipe run --input FILE.npy`: a run's --output read back as the next run's initial array, on 2
// forked ranks x 1 CPU and 1 rank x 2 CPUs, equals the plain loop started from that file, bit for
// bit (verified against the reference started from it too); every input that does not fit is one
// line, exit 2, before any work (no output file left behind).
#include "cli_test.hpp"

#include <tilepipe/support/npy.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_input {

namespace {

namespace fs = std::filesystem;
using tp::test::cli::file_bytes;
using tp::test::cli::run;

/// A fresh directory per test (at(name) in it).
class InputCli : public tp::test::cli::ScratchDir {};

// The wave kernels and the examples' recurrence compute every point from its lower neighbours
// only, so the plain loop started from a.npy gives a.npy again; the test plugin's scaled kernel
// with own=1 adds each point's value before the sweep, so its result depends on the file.
TEST_F(InputCli, a_round_trip_equals_the_plain_loop_started_from_the_file) {
  struct Case {
    std::vector<std::string> kernel;
    std::string size;
  };
  const std::vector<Case> cases{
      {{"--kernel", "wave2d"}, "40x33"},
      {{"--kernel", "wave3d"}, "9x7x40"},
      {{"--plugin", TP_PLUGIN_RECURRENCE, "--kernel", "recurrence"}, "50x41"},
  };
  for (const Case& c : cases) {
    const std::string a = at("a.npy");
    auto first = c.kernel;
    first.insert(first.end(), {"--size", c.size, "--nodes", "2", "--tile", "8", "--sync", "block",
                               "--output", a});
    auto r = run(first);
    ASSERT_EQ(r.exit_code, 0) << c.kernel.back() << ": " << r.err;
    for (const char* layout : {"2x1", "1x2"}) {
      const std::string b = at(std::string("b") + layout + ".npy");
      auto again = c.kernel;
      again.insert(again.end(), {"--size", c.size, "--nodes", std::string(1, layout[0]), "--cpus",
                                 std::string(1, layout[2]), "--tile", "8", "--sync", "block",
                                 "--verify", "--input", a, "--output", b, "--json"});
      auto s = run(again);
      ASSERT_EQ(s.exit_code, 0) << c.kernel.back() << " " << layout << ": " << s.err;
      const auto j = nlohmann::json::parse(s.out);
      EXPECT_EQ(j["verified"], true);
      EXPECT_EQ(j["input"], a);
      EXPECT_EQ(file_bytes(b), file_bytes(a)) << c.kernel.back() << " " << layout;
    }
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
}

TEST_F(InputCli, a_kernel_that_reads_its_values_starts_from_the_file) {
  // A[i][j] = 2 A[i-1][j] + A[i][j-1] + 5 + A0[i][j] modulo 2^64, A = i + 2j on the border, A0 the
  // file's values: the output of a first run, then of a run started from it.
  const std::int64_t n1 = 23, n2 = 31;
  const std::string size = std::to_string(n1) + "x" + std::to_string(n2);
  const std::vector<std::string> kernel{
      "--plugin", TP_PLUGIN_TEST, "--kernel", "scaled", "--param", "scale=2", "--param", "offset=5",
      "--param",  "own=1",        "--size",   size,     "--tile",  "8",       "--sync",  "block"};
  const auto plain_loop = [&](const std::vector<std::uint64_t>& start) {
    std::vector<std::uint64_t> a(static_cast<std::size_t>((n1 + 1) * (n2 + 1)));
    const auto at = [&](std::int64_t i, std::int64_t j) -> std::uint64_t& {
      return a[static_cast<std::size_t>(i * (n2 + 1) + j)];
    };
    std::vector<std::uint64_t> interior;
    for (std::int64_t i = 0; i <= n1; ++i) {
      for (std::int64_t j = 0; j <= n2; ++j) {
        if (i == 0 || j == 0) {
          at(i, j) = static_cast<std::uint64_t>(i + 2 * j);
          continue;
        }
        at(i, j) = 2 * at(i - 1, j) + at(i, j - 1) + 5 +
                   start[static_cast<std::size_t>((i - 1) * n2 + (j - 1))];
        interior.push_back(at(i, j));
      }
    }
    return interior;
  };
  const auto values_of = [](const std::string& path) {
    auto a = tp::read_npy(path);
    EXPECT_TRUE(a.has_value()) << a.error().message;
    std::vector<std::uint64_t> v(a ? a->data.size() / 8 : 0);
    if (a) std::memcpy(v.data(), a->data.data(), a->data.size());
    return v;
  };
  auto first = kernel;
  first.insert(first.end(), {"--nodes", "2", "--output", at("a.npy")});
  auto r = run(first);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto a = values_of(at("a.npy"));
  ASSERT_EQ(a, plain_loop(std::vector<std::uint64_t>(a.size())));  // started from zeros
  const auto want = plain_loop(a);
  ASSERT_NE(want, a);
  for (const char* layout : {"2x1", "1x2"}) {
    const std::string b = at(std::string("b") + layout + ".npy");
    auto again = kernel;
    again.insert(again.end(),
                 {"--nodes", std::string(1, layout[0]), "--cpus", std::string(1, layout[2]),
                  "--verify", "--input", at("a.npy"), "--output", b});
    auto s = run(again);
    ASSERT_EQ(s.exit_code, 0) << layout << ": " << s.err;
    EXPECT_NE(s.out.find("verified           yes (bit for bit)"), std::string::npos) << s.out;
    EXPECT_NE(s.out.find("  array read from    " + at("a.npy") + "\n"), std::string::npos);
    EXPECT_EQ(values_of(b), want) << layout;
  }
}

TEST_F(InputCli, every_input_that_does_not_fit_is_one_line_exit_2_before_any_work) {
  const std::string f4 = at("f4.npy");
  const std::string f8 = at("f8.npy");
  auto w = run({"--kernel", "wave2d", "--size", "6x5", "--output", f4});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  auto d = run({"--plugin", TP_PLUGIN_RECURRENCE, "--kernel", "recurrence", "--size", "6x5",
                "--output", f8});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string bytes = file_bytes(f4);
  std::ofstream(at("data_short.npy"), std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  std::ofstream(at("header_short.npy"), std::ios::binary) << bytes.substr(0, 40);
  std::ofstream(at("junk.npy")) << "x,y\n1,2\n";
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  std::ofstream(at("fortran.npy"), std::ios::binary) << fortran;
  const std::string out = at("out.npy");
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::string e = "tilepipe: error: --input ";
  const std::vector<Case> cases{
      {{"--kernel", "wave2d", "--size", "6x5", "--input", at("none.npy")},
       e + "cannot read '" + at("none.npy") + "': No such file or directory"},
      {{"--kernel", "wave2d", "--size", "6x5", "--input", dir_.string()},
       e + "cannot read '" + dir_.string() + "': not a regular file"},
      {{"--kernel", "wave2d", "--size", "6x5", "--input", at("junk.npy")},
       e + "'" + at("junk.npy") + "' is not a usable .npy file: no .npy magic"},
      {{"--kernel", "wave2d", "--size", "6x5", "--input", at("header_short.npy")},
       e + "'" + at("header_short.npy") + "' is not a usable .npy file: the header is cut short"},
      {{"--kernel", "wave2d", "--size", "6x5", "--input", at("data_short.npy")},
       e + "'" + at("data_short.npy") +
           "' is not a usable .npy file: it holds 116 data bytes, its shape (6, 5) needs 120"},
      {{"--kernel", "wave2d", "--size", "6x5", "--input", at("fortran.npy")},
       e + "'" + at("fortran.npy") + "' is not a usable .npy file: not in C order"},
      {{"--kernel", "wave2d", "--size", "5x6", "--input", f4},
       e + "'" + f4 + "' holds 6x5 float32 values, the kernel's array is 5x6 float32"},
      {{"--kernel", "wave3d", "--size", "6x5x1", "--input", f4},
       e + "'" + f4 + "' holds 6x5 float32 values, the kernel's array is 6x5x1 float32"},
      {{"--kernel", "wave2d", "--size", "6x5", "--input", f8},
       e + "'" + f8 + "' holds 6x5 float64 values, the kernel's array is 6x5 float32"},
      {{"--kernel", "sor2d", "--size", "6x5", "--input", f8},
       e + "needs a kernel that keeps its array (this one passes only faces between its tiles)"},
      {{"--kernel", "sweep3d", "--size", "6x5x4", "--input", f8},
       e + "needs a kernel whose output file holds its elements (this one writes a field of "
           "them)"},
      {{"--plugin", TP_PLUGIN_LCS, "--kernel", "lcs", "--size", "6x5", "--input", f8},
       e + "needs a kernel that keeps its array (this one passes only faces between its tiles)"},
      {{"--kernel", "wave2d", "--size", "6x5", "--input", ""},
       "tilepipe: error: --input: the path is empty"},
  };
  for (const Case& c : cases) {
    auto args = c.args;
    args.insert(args.end(), {"--nodes", "2", "--output", out});
    auto r = run(args);
    EXPECT_EQ(r.exit_code, 2) << c.error << "\n" << r.err;
    EXPECT_EQ(r.err, c.error + "\n");
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
  // Nothing beside the files made above: no output file, no temporary.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), {}), 6);
}

}  // namespace

}  // namespace cli_input
