// Output files (run --trace, sweep --csv/--plot/--save-machine, calibrate -o): checked before any
// work (exit 2, one line naming the flag and the path), written whole under a temporary renamed
// into place, and no other file written or removed.
#include "cli_test.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_outputs {

namespace {

namespace fs = std::filesystem;
using tp::test::cli::expect_refused;
using tp::test::cli::file_bytes;
using tp::test::cli::tilepipe;
using tp::test::cli::with;

/// A fresh directory per test, removed afterwards.
class OutputsCli : public tp::test::cli::ScratchDir {
 protected:
  /// The directory's entries, sorted: temporaries would show here.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

const std::vector<std::string> small_run{"--kernel", "wave2d", "--size", "64x512", "--nodes", "2",
                                         "--cpus",   "1",      "--sync", "block",  "--tile",  "64"};

TEST_F(OutputsCli, run_trace_paths_are_checked_before_any_rank_starts) {
  fs::create_directories(dir_ / "sub");
  const std::string missing = at("missing/t.json");
  expect_refused(
      tilepipe("run", with(small_run, {"--trace", missing})),
      "--trace: cannot write '" + missing + "': directory '" + at("missing") + "' does not exist");
  expect_refused(tilepipe("run", with(small_run, {"--trace", at("sub")})),
                 "--trace: cannot write '" + at("sub") + "': it is a directory");
  expect_refused(tilepipe("run", with(small_run, {"--trace", ""})),
                 "--trace: cannot write '': the path is empty (name a file)");
  const auto proc = tilepipe("run", with(small_run, {"--trace", "/proc/version"}));
  EXPECT_EQ(proc.exit_code, 2);
  EXPECT_EQ(proc.out, "");
  EXPECT_EQ(proc.err.rfind("tilepipe: error: --trace: cannot write '/proc/version': ", 0), 0u)
      << proc.err;
  EXPECT_EQ(tp::test::lines_of(proc.err).size(), 1u) << proc.err;
  EXPECT_EQ(entries(), std::vector<std::string>{"sub"});
}

TEST_F(OutputsCli, run_trace_replaces_the_file_whole_and_leaves_its_neighbours) {
  std::ofstream(at("t.json")) << "old";
  std::ofstream(at("t.json.tmp")) << "mine";
  auto r = tilepipe("run", with(small_run, {"--trace", at("t.json")}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(file_bytes(at("t.json")).rfind("{", 0), 0u);
  EXPECT_EQ(file_bytes(at("t.json.tmp")), "mine");
  EXPECT_EQ(entries(), (std::vector<std::string>{"t.json", "t.json.tmp"}));
}

TEST_F(OutputsCli, calibrate_output_is_checked_before_measuring) {
  expect_refused(tilepipe("calibrate", {"--quick", "--quiet", "-o", ""}),
                 "-o: cannot write '': the path is empty (name a file)");
  expect_refused(
      tilepipe("calibrate", {"--quick", "--quiet", "-o", at("no/m.json")}),
      "-o: cannot write '" + at("no/m.json") + "': directory '" + at("no") + "' does not exist");
  expect_refused(tilepipe("calibrate", {"--quick", "--quiet", "--output", at("")}),
                 "-o: cannot write '" + at("") + "': it names a directory (it ends in '/')");
  EXPECT_EQ(entries(), std::vector<std::string>{});
}

const std::vector<std::string> small_sweep{"--kernel", "wave2d",    "--size",
                                           "32x256",   "--nodes",   "2",
                                           "--cpus",   "1",         "--sync",
                                           "block",    "--quiet",   "--tile-heights",
                                           "64:128",   "--schemes", "overlap+hyperplane",
                                           "--repeat", "1"};

TEST_F(OutputsCli, sweep_outputs_are_checked_before_calibrating) {
  fs::create_directories(dir_ / "sub");
  for (const std::string flag : {"--csv", "--plot", "--save-machine"}) {
    SCOPED_TRACE(flag);
    expect_refused(tilepipe("sweep", with(small_sweep, {flag, at("missing/x")})),
                   flag + ": cannot write '" + at("missing/x") + "': directory '" + at("missing") +
                       "' does not exist");
    expect_refused(tilepipe("sweep", with(small_sweep, {flag, at("sub")})),
                   flag + ": cannot write '" + at("sub") + "': it is a directory");
    expect_refused(tilepipe("sweep", with(small_sweep, {flag, ""})),
                   flag + ": cannot write '': the path is empty (name a file)");
  }
  expect_refused(tilepipe("sweep", with(small_sweep, {"--csv", at("a"), "--plot", at("a")})),
                 "--csv and --plot name the same file '" + at("a") + "'");
  EXPECT_EQ(entries(), std::vector<std::string>{"sub"});
}

TEST_F(OutputsCli, sweep_writes_only_the_files_it_was_given) {
  // A user's file where the plot's CSV once went, and one that looks like a temporary.
  std::ofstream(at("p.png.csv")) << "user data";
  std::ofstream(at("p.png.tmp")) << "user data";
  auto r = tilepipe("sweep", with(small_sweep, {"--plot", at("p.png"), "--csv", at("s.csv"),
                                                "--save-machine", at("m.json")}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(file_bytes(at("p.png.csv")), "user data");
  EXPECT_EQ(file_bytes(at("p.png.tmp")), "user data");
  EXPECT_EQ(file_bytes(at("p.png")).substr(1, 3), "PNG");
  EXPECT_EQ(file_bytes(at("s.csv")).rfind("schedule,grouping,tile_height,", 0), 0u);
  EXPECT_NE(file_bytes(at("m.json")).find("\"tilepipe-machine\""), std::string::npos);
  EXPECT_EQ(entries(),
            (std::vector<std::string>{"m.json", "p.png", "p.png.csv", "p.png.tmp", "s.csv"}));
}

TEST_F(OutputsCli, a_failed_plot_leaves_no_file_and_keeps_the_old_one) {
  // A plot script that writes half a file and fails.
  const std::string script = at("fail.py");
  std::ofstream(script) << "import sys\nopen(sys.argv[2], 'w').write('half')\n"
                           "print('plot_sweep.py: disk full', file=sys.stderr)\nsys.exit(1)\n";
  std::ofstream(at("old.png")) << "old plot";
  ::setenv("TILEPIPE_PLOT_SWEEP", script.c_str(), 1);
  auto fresh = tilepipe("sweep", with(small_sweep, {"--plot", at("new.png")}));
  auto old = tilepipe("sweep", with(small_sweep, {"--plot", at("old.png")}));
  ::unsetenv("TILEPIPE_PLOT_SWEEP");
  for (const auto* r : {&fresh, &old}) {
    EXPECT_EQ(r->exit_code, 1);
    EXPECT_EQ(r->err, "tilepipe: error: --plot: plot_sweep.py failed: plot_sweep.py: disk full\n");
  }
  EXPECT_EQ(file_bytes(at("old.png")), "old plot");
  EXPECT_EQ(entries(), (std::vector<std::string>{"fail.py", "old.png"}));
}

}  // namespace

}  // namespace cli_outputs
