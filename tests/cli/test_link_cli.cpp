// `--link` end to end: runs through an emulated link verify, bad specifications and machine
// files measured through another link exit 2 with one line.
#include "cli_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

// One namespace per file: test_cli is a unity build (docs/adr/0019).
namespace cli_link {

namespace {

using tp::test::cli::read_json;
using tp::test::cli::temp_path;
using tp::test::cli::tilepipe;
using tp::test::cli::with;

const std::vector<std::string> small_run = {"--kernel", "wave3d", "--size",  "9x10x301",
                                            "--tile",   "16",     "--nodes", "2",
                                            "--cpus",   "1",      "--sync",  "block"};

/// The run of small_run with the tile left to the model.
const std::vector<std::string> model_run = {"--kernel", "wave3d", "--size", "9x10x301", "--nodes",
                                            "2",        "--cpus", "1",      "--sync",   "block"};

TEST(LinkCli, run_through_a_link_verifies_with_the_same_checksum) {
  auto plain = tilepipe("run", with(small_run, {"--json"}));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto p = nlohmann::json::parse(plain.out);
  EXPECT_EQ(p["link"], "none");
  for (const char* schedule : {"blocking", "overlap"}) {
    auto r =
        tilepipe("run", with(small_run, {"--schedule", schedule, "--link",
                                         "latency=50us,bandwidth=100MB/s", "--verify", "--json"}));
    ASSERT_EQ(r.exit_code, 0) << schedule << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["verified"], true);
    EXPECT_EQ(j["checksum"], p["checksum"]);
    EXPECT_EQ(j["link"], "latency=50us,bandwidth=100MB/s");
    // Direct stores would bypass the link: auto sends faces as messages through it.
    EXPECT_EQ(j["faces"], "copy");
  }
  auto direct = tilepipe("run", with(small_run, {"--faces", "direct", "--link", "pci-sci"}));
  EXPECT_EQ(direct.exit_code, 2);
  EXPECT_EQ(direct.err,
            "tilepipe: error: --faces direct bypasses the emulated link (--link pci-sci); use "
            "--faces copy or auto\n");
  auto text = tilepipe("run", with(small_run, {"--link", "pci-sci"}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  emulated link      latency=4660ns,bandwidth=84120KB/s\n"),
            std::string::npos)
      << text.out;
}

TEST(LinkCli, pingpong_reports_the_link) {
  auto r = tilepipe("pingpong", {"--ranks", "2", "--sync", "block", "--sizes", "8", "--iters", "10",
                                 "--link", "latency=100us", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out)["results"];
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["link"], "latency=100us");
  EXPECT_GE(j[0]["latency_us"].get<double>(), 100.0);  // a lower bound: never before latency
}

struct BadLink {
  std::string command;
  std::vector<std::string> args;
  std::string message;
};

TEST(LinkCli, a_link_that_does_not_parse_exits_2_with_one_line) {
  const std::string no_unit =
      "tilepipe: error: --link: 'bandwidth=80' has no unit (B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, "
      "GiB/s, Kbit/s, Mbit/s, Gbit/s)\n";
  const std::vector<BadLink> cases = {
      {"run", with(small_run, {"--link", "latency=20us,bandwidth=80"}), no_unit},
      {"pingpong", {"--ranks", "2", "--link", "latency=20us,bandwidth=80"}, no_unit},
      {"calibrate", {"--quick", "--link", "latency=20us,bandwidth=80"}, no_unit},
      {"sweep",
       {"--kernel", "wave3d", "--size", "12x12x4096", "--tile-heights", "256:1024", "--link",
        "latency=20us,bandwidth=80"},
       no_unit},
      {"run", with(small_run, {"--link", "sci"}),
       "tilepipe: error: --link: 'sci' is neither key=value nor a preset (latency=T,bandwidth=R "
       "or pci-sci, d330)\n"},
      {"run", with(small_run, {"--link", "latency=20xs"}),
       "tilepipe: error: --link: 'latency=20xs': unknown unit 'xs' (ns, us, ms, s)\n"},
      {"plan",
       {"--kernel", "wave3d", "--size", "12x12x4096", "--nodes", "2", "--link", "d330"},
       "tilepipe: error: --link needs --machine FILE: it only affects the predicted time\n"},
  };
  for (const auto& c : cases) {
    auto r = tilepipe(c.command, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.command << ": " << r.err;
    EXPECT_EQ(r.err, c.message) << c.command;
  }
}

TEST(LinkCli, a_machine_file_from_another_link_exits_2_and_suggests_calibrate) {
  const auto bare = temp_path("bare.json");
  const auto linked = temp_path("linked.json");
  auto c2 = tilepipe(
      "calibrate", {"--quick", "--quiet", "-o", linked, "--link", "latency=20us,bandwidth=80MB/s"});
  ASSERT_EQ(c2.exit_code, 0) << c2.err;
  EXPECT_NE(c2.out.find("emulated link      latency=20us,bandwidth=80MB/s"), std::string::npos)
      << c2.out;
  {
    const auto m = read_json(linked);
    EXPECT_EQ(m["emulated_link"], "latency=20us,bandwidth=80MB/s");
    // The link's latency is in the measured message latency.
    EXPECT_GE(m["comm"]["latency_us"].get<double>(), 10.0);
    // The same host measured without a link (one calibration less; calibrate itself is
    // CalibrateCli's test): calibrate writes no "emulated_link" then.
    auto b = m;
    b.erase("emulated_link");
    std::ofstream(bare) << b.dump(2);
  }

  auto r = tilepipe("run", with(model_run, {"--machine", bare, "--tile", "auto", "--link",
                                            "latency=20us,bandwidth=80MB/s"}));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "tilepipe: error: machine file '" + bare +
                       "' was measured without an emulated link but this run asks for --link "
                       "latency=20us,bandwidth=80MB/s: run `tilepipe calibrate --link "
                       "latency=20us,bandwidth=80MB/s`\n");
  r = tilepipe("run", with(model_run, {"--machine", linked, "--tile", "auto"}));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "tilepipe: error: machine file '" + linked +
                       "' was measured with --link latency=20us,bandwidth=80MB/s but no --link "
                       "is given: pass --link latency=20us,bandwidth=80MB/s or run `tilepipe "
                       "calibrate`\n");
  r = tilepipe("run", with(model_run, {"--machine", linked, "--tile", "auto", "--link", "d330"}));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("was measured with --link latency=20us,bandwidth=80MB/s but this run asks "
                       "for --link latency=68us,bandwidth=84120KB/s"),
            std::string::npos)
      << r.err;
  r = tilepipe("plan", {"--kernel", "wave3d", "--size", "12x12x4096", "--nodes", "2", "--tile",
                        "auto", "--machine", bare, "--link", "pci-sci"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("was measured without an emulated link"), std::string::npos) << r.err;
  r = tilepipe("sweep", {"--kernel", "wave3d", "--size", "12x12x4096", "--tile-heights", "256:1024",
                         "--machine", bare, "--link", "pci-sci", "--quiet"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("run `tilepipe calibrate --link latency=4660ns"), std::string::npos)
      << r.err;
  // The matching link is accepted: the model chooses and the run verifies.
  r = tilepipe("run", with(model_run, {"--machine", linked, "--tile", "auto", "--link",
                                       "latency=20us,bandwidth=80MB/s", "--verify", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["chosen_by"], "model");
  std::filesystem::remove(bare);
  std::filesystem::remove(linked);
}

}  // namespace

}  // namespace cli_link
