// Machine files: the seeds' samples, round trips, and one exact error per class of bad file.
#include <tilepipe/model/machine_file.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace {

using tp::model::HostIdentity;
using tp::model::load_machine;
using tp::model::Machine;
using tp::model::MachineCheck;
using tp::model::parse_machine;
using tp::model::Seconds;

std::string sample_path(const std::string& name) {
  return std::string(TILEPIPE_SOURCE_DIR) + "/tests/data/machines/" + name;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The seed 002 sample with one textual replacement (the replaced text must occur).
std::string edited(const std::string& from, const std::string& to) {
  std::string text = read_text(sample_path("seed002-sci-smp-cluster.json"));
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string parse_error(const std::string& text) {
  auto m = parse_machine(text, "m.json");
  EXPECT_FALSE(m.has_value());
  return m ? std::string() : m.error().message;
}

TEST(MachineFile, reads_the_seed_000_parameters) {
  auto m = load_machine(sample_path("seed000-sci-cluster.json"), {});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->name, "seed000-sci-cluster");
  EXPECT_FALSE(m->host_bound);
  EXPECT_EQ(m->transport, "sci-dma");
  EXPECT_DOUBLE_EQ(m->t_start.count(), 49.2e-6);
  EXPECT_DOUBLE_EQ(m->t_sync.count(), 4 * 18.8e-6);
  EXPECT_DOUBLE_EQ(m->compute.t_comp1.count(), 39.6e-9);
  EXPECT_EQ(m->compute.element_bytes, 4);
  EXPECT_EQ(m->send_mode, tp::model::SendMode::queued);
}

TEST(MachineFile, seed_002_start_plus_sync_is_100_us) {
  auto m = load_machine(sample_path("seed002-sci-smp-cluster.json"), {});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_NEAR((m->t_start + m->t_sync).count(), 100e-6, 1e-15);
  EXPECT_DOUBLE_EQ(m->t_sync_in.count(), 11e-6);
}

TEST(MachineFile, reference_files_skip_the_host_check_but_not_the_transport) {
  MachineCheck check{HostIdentity{"elsewhere", "Other CPU"}, "", std::nullopt};
  EXPECT_TRUE(load_machine(sample_path("seed000-sci-cluster.json"), check));
  check.transport = "shm";
  auto m = load_machine(sample_path("seed000-sci-cluster.json"), check);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message, "machine file '" + sample_path("seed000-sci-cluster.json") +
                                   "' is for transport 'sci-dma', not 'shm': run `tilepipe "
                                   "calibrate --transport shm`");
}

TEST(MachineFile, host_bound_file_from_another_node_type_is_refused) {
  const auto path = sample_path("example-host-bound.json");
  MachineCheck check{HostIdentity{"thishost", "This CPU", 2}, "shm", std::nullopt};
  auto m = load_machine(path, check);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "machine file '" + path +
                "' was measured on a node of another type (CPU 'Example CPU @ 3.0GHz', 64 cores, "
                "host 'example-host-that-is-not-this-one') than this one (CPU 'This CPU', 2 "
                "cores, host 'thishost'): run `tilepipe calibrate` on a node of this type");
  check.host = HostIdentity{"example-host-that-is-not-this-one", "Example CPU @ 3.0GHz", 64};
  EXPECT_TRUE(load_machine(path, check));
  check.host = HostIdentity{"example-host-that-is-not-this-one", "Another CPU", 64};
  EXPECT_FALSE(load_machine(path, check));
}

TEST(MachineFile, one_file_serves_every_node_of_its_type) {
  const auto path = sample_path("example-host-bound.json");
  // Another host name, the same CPU model and core count: a cluster's nodes share the file.
  MachineCheck check{HostIdentity{"node017", "Example CPU @ 3.0GHz", 64}, "shm", std::nullopt};
  EXPECT_TRUE(load_machine(path, check));
  // The same CPU model with another core count is another node type.
  check.host->cores = 32;
  auto m = load_machine(path, check);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("64 cores"), std::string::npos) << m.error().message;
  // A file without "cores" (older files) matches on the CPU model alone.
  auto machine = load_machine(path, {});
  ASSERT_TRUE(machine);
  machine->cores = 0;
  EXPECT_TRUE(check_machine(*machine, path, check));
  // Written and read back, the core count survives.
  machine->cores = 64;
  auto back = tp::model::parse_machine(tp::model::machine_to_json(*machine), "back");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->cores, 64);
}

TEST(MachineFile, this_host_counts_its_online_cpus) {
  EXPECT_GE(tp::model::this_host().cores, 1);
}

TEST(MachineFile, cores_must_be_a_positive_whole_number) {
  for (const char* bad : {"0", "-3", "2.5", "\"many\""}) {
    std::ifstream in(sample_path("example-host-bound.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const std::string field = "\"cores\": 64";
    text.replace(text.find(field), field.size(), std::string("\"cores\": ") + bad);
    auto m = tp::model::parse_machine(text, "f.json");
    ASSERT_FALSE(m) << bad;
    EXPECT_NE(m.error().message.find("'cores'"), std::string::npos) << m.error().message;
  }
}

TEST(MachineFile, file_measured_through_another_link_is_refused) {
  const auto path = sample_path("example-host-bound.json");
  const HostIdentity host{"example-host-that-is-not-this-one", "Example CPU @ 3.0GHz", 64};
  MachineCheck check{host, "shm", std::string("none")};
  ASSERT_TRUE(load_machine(path, check));  // no "emulated_link" field: measured without one
  check.emulated_link = "latency=20us,bandwidth=80MB/s";
  auto m = load_machine(path, check);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message, "machine file '" + path +
                                   "' was measured without an emulated link but this run asks "
                                   "for --link latency=20us,bandwidth=80MB/s: run `tilepipe "
                                   "calibrate --link latency=20us,bandwidth=80MB/s`");
  // Written and read back with a link: accepted for that link only.
  auto machine = load_machine(path, {});
  ASSERT_TRUE(machine);
  machine->emulated_link = "latency=20us,bandwidth=80MB/s";
  auto linked = tp::model::parse_machine(tp::model::machine_to_json(*machine), "linked.json");
  ASSERT_TRUE(linked) << linked.error().message;
  EXPECT_EQ(linked->emulated_link, "latency=20us,bandwidth=80MB/s");
  EXPECT_TRUE(tp::model::check_machine(*linked, "linked.json", check));
  check.emulated_link = "none";
  auto st = tp::model::check_machine(*linked, "linked.json", check);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            "machine file 'linked.json' was measured with --link latency=20us,bandwidth=80MB/s but "
            "no --link is given: pass --link latency=20us,bandwidth=80MB/s or run `tilepipe "
            "calibrate`");
}

TEST(MachineFile, per_kernel_costs_and_samples) {
  auto m = load_machine(sample_path("example-host-bound.json"), {});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_DOUBLE_EQ(m->compute_for("sw").t_comp1.count(), 2.5e-9);
  const auto& w = m->compute_for("wave3d");
  ASSERT_EQ(w.samples.size(), 3u);
  // Outside the samples: the nearest sample's t_comp1.
  EXPECT_DOUBLE_EQ(w.tile_time(1024).count(), 1024 * 2.4e-9);
  EXPECT_DOUBLE_EQ(w.tile_time(1 << 25).count(), (1 << 25) * 2.6e-9);
  // At a sample and between two: linear in g between the tile times.
  EXPECT_DOUBLE_EQ(w.tile_time(262144).count(), 262144 * 2.1e-9);
  const double ca = 4096 * 2.4e-9;
  const double cb = 262144 * 2.1e-9;
  const double g = 100000;
  EXPECT_NEAR(w.tile_time(100000).count(), ca + (cb - ca) * (g - 4096) / (262144 - 4096), 1e-18);
}

TEST(MachineFile, this_host_has_a_name) {
  EXPECT_FALSE(tp::model::this_host().hostname.empty());
}

TEST(MachineFile, round_trips_through_json_and_a_file) {
  auto m = load_machine(sample_path("example-host-bound.json"), {});
  ASSERT_TRUE(m);
  auto again = parse_machine(tp::model::machine_to_json(*m), "again");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->name, m->name);
  EXPECT_EQ(again->hostname, m->hostname);
  EXPECT_EQ(again->send_mode, m->send_mode);
  EXPECT_NEAR(again->t_start.count(), m->t_start.count(), 1e-18);
  EXPECT_NEAR(again->link.latency.count(), m->link.latency.count(), 1e-18);
  EXPECT_DOUBLE_EQ(again->link.bandwidth_bytes_per_s, m->link.bandwidth_bytes_per_s);
  ASSERT_EQ(again->kernels.size(), 1u);
  EXPECT_EQ(again->kernels.at("wave3d").samples.size(), 3u);
  EXPECT_NEAR(again->kernels.at("wave3d").tile_time(100000).count(),
              m->kernels.at("wave3d").tile_time(100000).count(), 1e-15);

  EXPECT_EQ(again->cpu_copy_bytes_per_s, 0.0);  // absent: the transfer needs no CPU
  m->cpu_copy_bytes_per_s = 8.5e9;
  auto copying = parse_machine(tp::model::machine_to_json(*m), "copying");
  ASSERT_TRUE(copying) << copying.error().message;
  EXPECT_DOUBLE_EQ(copying->cpu_copy_bytes_per_s, 8.5e9);

  EXPECT_EQ(again->tile_spread, 0.0);  // absent: every CPU's tile takes alpha
  m->tile_spread = 0.04;
  auto spread = parse_machine(tp::model::machine_to_json(*m), "spread");
  ASSERT_TRUE(spread) << spread.error().message;
  EXPECT_DOUBLE_EQ(spread->tile_spread, 0.04);

  const auto path = (std::filesystem::temp_directory_path() / "tp_model_roundtrip.json").string();
  ASSERT_TRUE(tp::model::save_machine(*m, path));
  auto loaded = load_machine(path, {});
  std::remove(path.c_str());
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->cpu_model, m->cpu_model);
}

TEST(MachineFileBad, missing_and_unreadable_files) {
  auto m = load_machine("/nonexistent/dir/m.json", {});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "cannot open machine file '/nonexistent/dir/m.json': No such file or directory");
  const auto dir = std::filesystem::temp_directory_path().string();
  auto d = load_machine(dir, {});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().message, "cannot read machine file '" + dir + "': Is a directory");
  EXPECT_TRUE(d.error().is_user_error());
}

TEST(MachineFileBad, malformed_json_names_line_and_column) {
  const auto msg = parse_error("{\"format\": \"tilepipe-machine\",\n \"version\": }");
  EXPECT_TRUE(std::regex_match(msg, std::regex("machine file 'm.json' is not valid JSON: parse "
                                               "error at line 2, column \\d+: .*")))
      << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  EXPECT_EQ(parse_error("[1, 2]"), "machine file 'm.json': the top level must be a JSON object");
}

TEST(MachineFileBad, each_field_is_checked) {
  EXPECT_EQ(parse_error(edited("\"t_start_us\": 49.2,\n", "")),
            "machine file 'm.json': missing field 'comm.t_start_us'");
  EXPECT_EQ(parse_error(edited("\"t_comp1_ns\": 39.6", "\"t_comp1_ns\": -39.6")),
            "machine file 'm.json': 'compute.t_comp1_ns' is -39.6: it must be >= 1e-06");
  EXPECT_EQ(parse_error(edited("\"t_sync_us\": 50.8", "\"t_sync_us\": -1")),
            "machine file 'm.json': 'comm.t_sync_us' is -1: it must be >= 0");
  EXPECT_EQ(
      parse_error(edited("\"bandwidth_bytes_per_s\": 84120000", "\"bandwidth_bytes_per_s\": 0")),
      "machine file 'm.json': 'comm.bandwidth_bytes_per_s' is 0: it must be >= 1");
  EXPECT_EQ(parse_error(edited("\"t_sync_in_us\": 11", "\"t_sync_in_us\": \"11\"")),
            "machine file 'm.json': 'node.t_sync_in_us' must be a number");
  EXPECT_EQ(
      parse_error(edited("\"t_sync_in_us\": 11", "\"t_sync_in_us\": 11, \"tile_spread\": 1.5")),
      "machine file 'm.json': 'node.tile_spread' is 1.5: it must be <= 1");
  EXPECT_EQ(parse_error(edited("\"element_bytes\": 4", "\"element_bytes\": 4.5")),
            "machine file 'm.json': 'compute.element_bytes' must be a whole number");
  EXPECT_EQ(parse_error(edited("\"send_mode\": \"queued\"", "\"send_mode\": \"eager\"")),
            "machine file 'm.json': 'comm.send_mode' is 'eager' (choose queued|serial|parallel)");
  EXPECT_EQ(
      parse_error(edited("\"latency_us\": 0", "\"latency_us\": 0, \"cpu_copy_bytes_per_s\": 0")),
      "machine file 'm.json': 'comm.cpu_copy_bytes_per_s' is 0: it must be >= 1");
  EXPECT_EQ(parse_error(edited("\"latency_us\": 0", "\"latncy_us\": 0")),
            "machine file 'm.json': unknown field 'comm.latncy_us'");
  EXPECT_EQ(parse_error(edited("\"version\": 1", "\"version\": 2")),
            "machine file 'm.json': version 2 is not supported (this tilepipe reads version 1)");
  EXPECT_EQ(parse_error(edited("\"tilepipe-machine\"", "\"other\"")),
            "machine file 'm.json': 'format' is 'other', not 'tilepipe-machine'");
  EXPECT_EQ(parse_error(edited("\"host_bound\": false", "\"host_bound\": true")),
            "machine file 'm.json': 'hostname' is empty but 'host_bound' is true");
  EXPECT_EQ(parse_error(edited("\"node\": {", "\"node\": 3, \"x\": {")),
            "machine file 'm.json': unknown field 'x'");
}

TEST(MachineFileBad, samples_must_grow_in_size_and_time) {
  const std::string one = "\"element_bytes\": 4, \"samples\": [";
  EXPECT_EQ(parse_error(
                edited("\"element_bytes\": 4", one + "{\"tile_points\": 100, \"t_comp1_ns\": 5},"
                                                     "{\"tile_points\": 100, \"t_comp1_ns\": 5}]")),
            "machine file 'm.json': 'compute.samples[1].tile_points' must be larger than the "
            "previous sample's");
  EXPECT_EQ(parse_error(
                edited("\"element_bytes\": 4", one + "{\"tile_points\": 100, \"t_comp1_ns\": 5},"
                                                     "{\"tile_points\": 200, \"t_comp1_ns\": 2}]")),
            "machine file 'm.json': 'compute.samples[1]': the tile time tile_points x t_comp1_ns "
            "is smaller than the previous sample's; a larger tile cannot take less time");
  EXPECT_TRUE(parse_machine(
      edited("\"element_bytes\": 4", one + "{\"tile_points\": 100, \"t_comp1_ns\": 5},"
                                           "{\"tile_points\": 200, \"t_comp1_ns\": 3}]"),
      "m.json"));
}

}  // namespace
