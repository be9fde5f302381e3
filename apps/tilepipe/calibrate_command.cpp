// `tilepipe calibrate`: measures this machine and transport and writes a machine file.
#include "calibration.hpp"
#include "command.hpp"
#include "link_option.hpp"
#include "parse_cli.hpp"
#include "plan_options.hpp"

#include <tilepipe/comm/world.hpp>
#include <tilepipe/model/machine_file.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/core.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>

namespace tp::app {
namespace {

/// Below this share of a core the compute probes were preempted enough to say so.
constexpr double busy_share = 0.9;

/// The share of a core the compute probes had (the machine file's notes), -1 when not recorded.
double compute_cpu_share(const model::Machine& m) {
  const auto notes = nlohmann::json::parse(m.notes, nullptr, false);
  if (!notes.is_object() || !notes.contains("compute_cpu_share") ||
      !notes["compute_cpu_share"].is_number()) {
    return -1;
  }
  return notes["compute_cpu_share"].get<double>();
}

int run_calibrate(int argc, char** argv) {
  CLI::App app{"Measure this machine and transport; write a machine file for the cost model",
               "tilepipe calibrate"};
  std::string transport = "shm";
  std::string output;
  PlanOptions problem;
  std::string heights;
  bool quick = false;
  bool quiet = false;
  std::string link;
  app.add_option("--transport", transport,
                 "the transport to measure: shm (local ranks) or mpi (under mpirun)");
  app.add_option("-o,--output", output,
                 "machine file to write (default: $TILEPIPE_MACHINE, else "
                 "~/.config/tilepipe/machine-TRANSPORT.json)");
  app.add_option(
      "--kernel", problem.kernel,
      "with --size: measure the tile shapes of this problem (a built-in kernel or a --plugin's)");
  app.add_option("--plugin", problem.plugins,
                 "with --kernel: a kernel plugin (as for tilepipe run) whose kernel to measure");
  app.add_option("--param", problem.params,
                 "with --kernel: a parameter of its kernel, name=value (repeatable)");
  app.add_option("--size", problem.size, "with --kernel: the problem's extents");
  app.add_option("--nodes", problem.nodes, "with --kernel: nodes of the problem's runs");
  app.add_option("--cpus", problem.cpus, "with --kernel: CPUs per node of the problem's runs");
  app.add_option("--map-dim", problem.map_dim,
                 "with --kernel: the runs' mapping dimension, 1..n (default: the planner's), "
                 "whose tiles the probes time");
  app.add_option("--tile-heights", heights,
                 "with --kernel: tile heights to measure, A:B (doubling) or a comma list "
                 "(default 16:extent)");
  app.add_flag("--quick", quick, "fewer and smaller probes (seconds; for tests and demos)");
  app.add_flag("--quiet", quiet, "no progress display");
  add_link_option(app, link);
  if (const int rc = problem.add_plugin_help(app, argc, argv); rc >= 0) return rc;
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;
  if (auto st = problem.load_plugins(); !st) return report_error(st.error());
  if (const auto* entry = problem.plugin_entry()) {
    if (auto st = check_plugin_probe(*entry, "calibrate"); !st) return report_error(st.error());
  }

  if (transport != "shm" && transport != "mpi") {
    return report_error(Error(Errc::invalid_argument, "--transport: unknown transport '" +
                                                          transport + "' (choose shm|mpi)"));
  }
  const bool over_mpi = transport == "mpi";
  if (over_mpi && !comm::World::launched_by_mpi()) {
    return report_error(Error(Errc::invalid_argument,
                              "--transport mpi: run under mpirun with at least 2 ranks "
                              "(mpirun -np 2 tilepipe calibrate --transport mpi)"));
  }
  auto parsed_link = parse_link_option(link);
  if (!parsed_link) return report_error(parsed_link.error());
  // Over MPI one bar on a terminal, not one line per stage and rank in a log.
  runtime::CalibrateSpec spec = builtin_calibration(quiet || (over_mpi && ::isatty(2) != 1));
  spec.launch = over_mpi ? runtime::LaunchMode::mpi : runtime::LaunchMode::fork;
  spec.link = *parsed_link;
  if (quick) {
    spec.slab_points = std::int64_t{1} << 20;
    spec.passes = 1;
    spec.round_trips = 5;
    spec.sizes = {64, 4096, 65536, 1 << 20};
  }
  spec.shapes = default_shapes(quick);
  if (!problem.kernel.empty() || !problem.size.empty()) {
    if (problem.kernel.empty() || problem.size.empty()) {
      return report_error(Error(Errc::invalid_argument,
                                "--kernel and --size go together (the problem to calibrate for)"));
    }
    problem.tile = "2";
    auto base = problem.to_request();
    if (!base) return report_error(base.error());
    auto plan = plan::Plan::make(*base);
    if (!plan) return report_error(plan.error());
    const std::int64_t extent = base->size[static_cast<std::size_t>(plan->map_dim())];
    auto list = parse_height_list(heights.empty() ? "16:" + std::to_string(extent) : heights,
                                  extent, "--tile-heights");
    if (!list) return report_error(list.error());
    base->map_dim = plan->map_dim() + 1;
    if (heights.empty()) {
      // The default heights and, below 16, the smallest legal height z0 and z0 4^j (2 and 8 for
      // sweep3d and the wave kernels): the model's choice looks down to z0, and below the
      // smallest sample it could only extend that sample's cost per point (ADR 0031).
      auto probed = runtime::choice_probe_heights(*base, *list);
      if (!probed) return report_error(probed.error());
      list = std::move(*probed);
    }
    auto shapes = runtime::plan_shapes(problem.kernel, *base, *list);
    if (!shapes) return report_error(shapes.error());
    spec.shapes = *shapes;
    auto values = problem.param_values();
    if (!values) return report_error(values.error());
    auto entry = problem.kernel_entry();
    if (!entry) return report_error(entry.error());
    add_kernel_probe(spec, **entry, *values);
    spec.compute_ranks = static_cast<int>(
        std::min<std::int64_t>(16, std::max<std::int64_t>(1, base->nodes * base->cpus)));
    spec.slab_points =
        std::min(spec.slab_points, std::max<std::int64_t>(1, plan->space().points() / base->nodes));
  } else if (!heights.empty()) {
    return report_error(Error(Errc::invalid_argument, "--tile-heights needs --kernel and --size"));
  }
  // The output path before a minute of measuring: -o as given (an empty one is refused), else
  // the default path, its directory created.
  std::string output_label = "-o";
  if (app.count("--output") == 0) {
    output = runtime::default_machine_path(transport, spec.link);
    if (output.empty()) {
      return report_error(
          Error(Errc::invalid_argument,
                "no output path: give -o FILE (HOME and TILEPIPE_MACHINE are unset)"));
    }
    output_label = std::getenv("TILEPIPE_MACHINE") != nullptr && *std::getenv("TILEPIPE_MACHINE")
                       ? "TILEPIPE_MACHINE"
                       : "the default machine file";
    const std::filesystem::path parent = std::filesystem::path(output).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  }
  auto out_file = check_output(output_label, output);
  if (!out_file) return report_error(out_file.error());

  auto machine = runtime::calibrate(spec);
  if (!machine) return report_error(machine.error());
  if (!*machine) return exit_ok;  // ranks other than 0 measured; rank 0 writes and reports
  // Read it back as every consumer will, then write it whole (a temporary renamed onto -o).
  const std::string text = model::machine_to_json(**machine);
  model::MachineCheck readback{model::this_host(), transport, std::nullopt};
  readback.emulated_link = comm::to_string(spec.link);
  auto parsed = model::parse_machine(text, output);
  if (!parsed) return report_error(parsed.error());
  if (auto st = model::check_machine(*parsed, output, readback); !st) {
    return report_error(st.error());
  }
  if (auto st = out_file->write(text); !st) return report_error(st.error());
  const model::Machine& m = **machine;
  fmt::print("tilepipe calibrate: wrote {}\n", output);
  // One line per kernel measured (the file's "compute" is wave3d's when it was measured).
  for (const auto& [name, c] : m.kernels) {
    fmt::print("  t_comp1 {:<10} {:.3f} ns per point (median of {} tile sizes, {:.3f} to {:.3f})\n",
               "(" + name + ")", c.t_comp1.count() * 1e9, c.samples.size(),
               c.samples.empty() ? 0.0 : c.samples.front().t_comp1.count() * 1e9,
               c.samples.empty() ? 0.0 : c.samples.back().t_comp1.count() * 1e9);
  }
  if (const double share = compute_cpu_share(m); share >= 0) {
    fmt::print("  compute probes     had {:.0f}% of a core{}\n", share * 100,
               share < busy_share ? " (a busy machine: their CPU time is what counts; the "
                                    "communication probes may read high, calibrate again when "
                                    "it is idle)"
                                  : "");
  }
  fmt::print("  t_start            {:.3f} us\n", m.t_start.count() * 1e6);
  fmt::print("  t_sync             {:.3f} us (notification, {})\n", m.t_sync.count() * 1e6,
             comm::to_string(spec.sync));
  fmt::print("  link               {:.3f} us + bytes / {:.3f} GB/s\n", m.link.latency.count() * 1e6,
             m.link.bandwidth_bytes_per_s / 1e9);
  fmt::print("  t_sync_in          {:.3f} us\n", m.t_sync_in.count() * 1e6);
  if (spec.link.enabled) {
    fmt::print("  emulated link      {} (measured through it)\n", m.emulated_link);
  }
  return exit_ok;
}

const CommandRegistration calibrate_registration{
    {"calibrate", "measure this machine and transport; write a machine file (cost model)",
     &run_calibrate}};

}  // namespace
}  // namespace tp::app
