// The machine file's optional "network" (the simulator's): defaults, torus, per-node overrides,
// round trip, and one exact error per bad field.
#include <tilepipe/model/machine_file.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace {

using tp::model::parse_machine;
using tp::model::Topology;

std::string seed002() {
  std::ifstream in(std::string(TILEPIPE_SOURCE_DIR) +
                   "/tests/data/machines/seed002-sci-smp-cluster.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The seed 002 file with `network` added as its last field.
std::string with_network(const std::string& network) {
  std::string text = seed002();
  const auto end = text.rfind('}');
  text.insert(end, ", \"network\": " + network + "\n");
  return text;
}

std::string error_of(const std::string& network) {
  auto m = parse_machine(with_network(network), "n.json");
  EXPECT_FALSE(m) << network;
  return m ? "" : m.error().message;
}

TEST(MachineNetwork, files_without_a_network_are_full_bisection) {
  auto m = parse_machine(seed002(), "seed002");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->network.topology, Topology::full_bisection);
  EXPECT_TRUE(m->network.is_default());
  // Written back without a network field: old readers and golden files see no change.
  EXPECT_EQ(tp::model::machine_to_json(*m).find("network"), std::string::npos);
}

TEST(MachineNetwork, torus_and_overrides_round_trip) {
  auto m = parse_machine(
      with_network(R"({"topology": "torus", "torus": [4, 4, 2], "link_bandwidth_bytes_per_s": 2e9,
                       "hop_latency_us": 0.5,
                       "nodes": [{"node": 3, "compute_scale": 1.5},
                                 {"node": 0, "bandwidth_bytes_per_s": 1e8}]})"),
      "t.json");
  ASSERT_TRUE(m) << m.error().message;
  const auto& n = m->network;
  EXPECT_EQ(n.topology, Topology::torus);
  EXPECT_EQ(n.torus, (std::vector<std::int64_t>{4, 4, 2}));
  EXPECT_EQ(n.link_bandwidth_bytes_per_s, 2e9);
  EXPECT_NEAR(n.hop_latency.count(), 0.5e-6, 1e-18);
  ASSERT_EQ(n.nodes.size(), 2u);
  EXPECT_EQ(n.nodes[0].node, 3);
  EXPECT_EQ(n.nodes[0].compute_scale, 1.5);
  EXPECT_EQ(n.nodes[1].bandwidth_bytes_per_s, 1e8);
  auto again = parse_machine(tp::model::machine_to_json(*m), "again");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->network.torus, n.torus);
  EXPECT_EQ(again->network.nodes.size(), 2u);
  EXPECT_EQ(again->network.nodes[0].compute_scale, 1.5);
  EXPECT_EQ(again->network.nodes[1].bandwidth_bytes_per_s, 1e8);
}

TEST(MachineNetwork, hosts_round_trip_and_a_missing_field_is_named) {
  auto m = parse_machine(
      with_network(R"({"hosts": {"ranks_per_host": 4, "cores": 2, "wake_us": 15.5}})"), "h.json");
  ASSERT_TRUE(m) << m.error().message;
  const auto& h = m->network.hosts;
  EXPECT_TRUE(h.shared());
  EXPECT_FALSE(m->network.is_default());
  EXPECT_EQ(h.ranks_per_host, 4);
  EXPECT_EQ(h.cores, 2);
  EXPECT_NEAR(h.wake.count(), 15.5e-6, 1e-18);
  auto again = parse_machine(tp::model::machine_to_json(*m), "again");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->network.hosts.ranks_per_host, 4);
  EXPECT_EQ(again->network.hosts.cores, 2);
  EXPECT_NEAR(again->network.hosts.wake.count(), 15.5e-6, 1e-18);
  // wake_us is optional (0).
  auto no_wake =
      parse_machine(with_network(R"({"hosts": {"ranks_per_host": 1, "cores": 8}})"), "w.json");
  ASSERT_TRUE(no_wake) << no_wake.error().message;
  EXPECT_EQ(no_wake->network.hosts.wake.count(), 0);
  const std::string f = "machine file 'n.json': ";
  EXPECT_EQ(error_of(R"({"hosts": {"ranks_per_host": 4}})"),
            f + "missing field 'network.hosts.cores' (ranks sharing a host's cores need "
                "ranks_per_host and cores)");
  EXPECT_EQ(error_of(R"({"hosts": {"cores": 2}})"),
            f + "missing field 'network.hosts.ranks_per_host' (ranks sharing a host's cores need "
                "ranks_per_host and cores)");
  EXPECT_EQ(error_of(R"({"hosts": {"ranks_per_host": 0, "cores": 2}})"),
            f + "'network.hosts.ranks_per_host' is 0: it must be >= 1");
  EXPECT_EQ(error_of(R"({"hosts": {"ranks_per_host": 2, "cores": 2.5}})"),
            f + "'network.hosts.cores' must be a whole number");
  EXPECT_EQ(error_of(R"({"hosts": {"ranks_per_host": 2, "cores": 2, "wake_us": -1}})"),
            f + "'network.hosts.wake_us' is -1: it must be >= 0");
  EXPECT_EQ(error_of(R"({"hosts": {"ranks_per_host": 2, "cores": 2, "smt": 2}})"),
            f + "unknown field 'network.hosts.smt'");
  EXPECT_EQ(error_of(R"({"hosts": 4})"), f + "'network.hosts' must be an object");
}

TEST(MachineNetwork, each_bad_field_is_named) {
  const std::string f = "machine file 'n.json': ";
  EXPECT_EQ(error_of(R"({"topology": "torus", "link_bandwidth_bytes_per_s": 1e9})"),
            f + "missing field 'network.torus' (the torus extents, e.g. [8, 8, 8])");
  EXPECT_EQ(error_of(R"({"topology": "torus", "torus": [4]})"),
            f + "missing field 'network.link_bandwidth_bytes_per_s'");
  EXPECT_EQ(error_of(R"({"topology": "mesh"})"),
            f + "'network.topology' is 'mesh' (choose full-bisection|torus)");
  EXPECT_EQ(error_of(R"({"topology": "torus", "torus": [4, 0], "link_bandwidth_bytes_per_s": 1})"),
            f + "'network.torus' has 0: every extent must be a whole number in [1, 1048576]");
  EXPECT_EQ(error_of(R"({"topology": "torus", "torus": [2, 2, 2, 2],
                         "link_bandwidth_bytes_per_s": 1})"),
            f + "'network.torus' must be an array of 1 to 3 whole numbers");
  EXPECT_EQ(error_of(R"({"torus": [4]})"), f + "'network.torus' needs \"topology\": \"torus\"");
  EXPECT_EQ(error_of(R"({"nodes": [{"node": 1, "compute_scale": 0}]})"),
            f + "'network.nodes[0].compute_scale' is 0: it must be >= 1e-06");
  EXPECT_EQ(error_of(R"({"nodes": [{"node": 1}, {"node": 1}]})"),
            f + "'network.nodes[1].node' repeats node 1");
  EXPECT_EQ(error_of(R"({"nodes": [{"node": -1}]})"),
            f + "'network.nodes[0].node' is -1: it must be >= 0");
  EXPECT_EQ(error_of(R"({"nodes": [{"node": 1, "speed": 2}]})"),
            f + "unknown field 'network.nodes[0].speed'");
  EXPECT_EQ(error_of(R"({"latency_us": 1})"), f + "unknown field 'network.latency_us'");
  EXPECT_EQ(error_of(R"([1])"), f + "'network' must be an object");
}

}  // namespace
