// `tilepipe run`: executes a plan for any kernel of the registry, built-in or a plugin's, through
// its entry's run (the door) on ranks x threads; reports the wall time, points per second, the
// checksum (or the kernel's result), per-phase times and the hidden communication.
#include "comm_options.hpp"
#include "command.hpp"
#include "kernel_catalog.hpp"
#include "parse_cli.hpp"
#include "plan_options.hpp"
#include "plan_report.hpp"

#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/face_transport.hpp>
#include <tilepipe/model/choose.hpp>
#include <tilepipe/model/machine_file.hpp>
#include <tilepipe/runtime/calibrate.hpp>
#include <tilepipe/runtime/run.hpp>
#include <tilepipe/support/npy.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/core.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

namespace tp::app {
namespace {

struct RunFlags {
  PlanOptions plan;
  CommFlags comm;
  std::string subtiles = "auto";
  std::string trace;
  std::string output;  ///< --output FILE.npy
  std::string input;   ///< --input FILE.npy
  int sweeps = 1;      ///< --sweeps T
  bool verify = false;
  bool json = false;
  bool cpus_given = false;
  std::string machine;        ///< --machine FILE
  std::string machine_label;  ///< the machine file's label and path, with choice
  bool comm_thread = false;
  std::string formula = "executed";  ///< --formula
  bool rendezvous_faces = false;     ///< keep the transport's default protocols for faces
  comm::Link parsed_link;            ///< the emulated link in force
  exec::FaceMode faces = exec::FaceMode::automatic;  ///< --faces
  std::string params_text;  ///< the kernel's parameters (none declared: empty)
};

std::string join_x(const plan::Index& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

nlohmann::ordered_json phases_json(const exec::PhaseTimes& p) {
  nlohmann::ordered_json j;
  j["compute_s"] = p.compute_s;
  j["send_start_s"] = p.send_start_s;
  j["wait_s"] = p.wait_s;
  j["sync_s"] = p.sync_s;
  return j;
}

// Everything rank 0 prints once every rank has finished; the trace file, when asked for.
int report(const RunFlags& f, const runtime::RunReport& total, OutputFile* trace) {
  const plan::Plan& plan = total.planned.plan;
  const std::optional<model::Choice>& choice = total.planned.choice;
  const std::optional<bool> verified = total.verified;
  const double seconds = total.summary.wall_s();
  const auto points = total.points > 0 ? total.points : plan.space().points() * f.sweeps;
  const plan::Index& space = plan.space().extents();
  const plan::Index& size = total.size.empty() ? space : total.size;
  const bool loop_nest = !total.loop_nest.empty();
  const double rate = seconds > 0 ? static_cast<double>(points) / seconds : 0;
  const auto phases = total.summary.phases();
  const double hidden = total.summary.hidden_share();
  const char* result_key = total.checksum ? "checksum" : "result";
  if (f.json) {
    nlohmann::ordered_json j = json_preamble("run");
    j["kernel"] = f.plan.kernel;
    j["size"] = size;
    if (!f.params_text.empty()) j["params"] = f.params_text;
    if (size != space) j["space"] = space;
    if (!total.transformation.empty()) j["transformation"] = total.transformation;
    j["tile"] = plan.tiling().tile_extents();
    j["nodes"] = plan.nodes();
    j["cpus"] = plan.cpus();
    j["mesh"] = plan.mesh();
    j["cpu_grid"] = plan.cpu_grid();
    j["cyclic"] = plan.cyclic();
    j["map_dim"] = plan.map_dim() + 1;
    j["schedule"] = std::string(plan::to_string(plan.schedule().kind()));
    j["grouping"] = std::string(plan::to_string(plan.schedule().grouping().kind()));
    j["subtiles"] = total.summary.ranks.front().subtiles;
    j["faces"] = total.summary.ranks.front().direct_faces ? "direct" : "copy";
    j["comm_thread"] = f.comm_thread;
    j["comm_thread_share"] =
        f.comm_thread ? nlohmann::ordered_json(total.summary.ranks.front().comm_thread.share)
                      : nlohmann::ordered_json(nullptr);
    j["steps"] = plan.steps();
    j["idle_nodes"] = plan.idle_nodes();
    j["idle_cpus"] = plan.idle_cpus();
    j["sweeps"] = f.sweeps;
    j["seconds_per_sweep"] = seconds / f.sweeps;
    j[result_key] = total.result;
    j["seconds"] = seconds;
    j["setup_s"] = total.summary.setup_s();
    j["points"] = points;
    j["points_per_s"] = rate;
    j["phases"] = phases_json(phases);
    j["hidden_share"] =
        hidden < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(hidden);
    j["verified"] = verified ? nlohmann::ordered_json(*verified) : nlohmann::ordered_json(nullptr);
    j["link"] = comm::to_string(f.parsed_link);
    j["input"] =
        f.input.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(f.input);
    j["output"] =
        f.output.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(f.output);
    if (choice) {
      j["chosen_by"] = choice->chosen_by_model ? "model" : "user";
      j["machine"] = f.machine_label;
      j["predicted_s"] = choice->prediction.total.count();
      j["formula"] = model::to_string(choice->prediction.formula);
      j["reason"] = choice->reason;
    }
    auto ranks = nlohmann::ordered_json::array();
    for (const auto& r : total.summary.ranks) {
      nlohmann::ordered_json x;
      x["rank"] = r.rank;
      x["wall_s"] = r.wall_s;
      x["setup_s"] = r.setup_s;
      x["phases"] = phases_json(r.phases);
      x["tiles"] = r.tiles;
      x["points"] = r.points;
      x["messages_sent"] = r.messages_sent;
      x["bytes_sent"] = r.bytes_sent;
      x["messages_received"] = r.messages_received;
      x["face_transfer_s"] = r.face_transfer_s;
      if (f.comm_thread) {
        const auto& c = r.comm_thread;
        x["comm_thread"] = {{"share", c.share},         {"split_dim", c.split_dim},
                            {"alpha_s", c.alpha_s},     {"comm_round_s", c.comm_round_s},
                            {"compute_s", c.compute_s}, {"comm_s", c.comm_s}};
      }
      ranks.push_back(x);
    }
    j["ranks"] = ranks;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("tilepipe run: {} {} on {} node(s) x {} CPU(s), mesh {}{}, tile {}, {} + {}{}\n",
               f.plan.kernel, join_x(plan.space().extents()), plan.nodes(), plan.cpus(),
               join_x(plan.mesh()),
               plan.is_cyclic() ? fmt::format(", cyclic {}", join_x(plan.cyclic())) : "",
               join_x(plan.tiling().tile_extents()), plan::to_string(plan.schedule().kind()),
               plan::to_string(plan.schedule().grouping().kind()),
               plan.schedule().grouping().kind() == plan::GroupingKind::vertical
                   ? fmt::format(" ({} subtiles)", total.summary.ranks.front().subtiles)
                   : "");
    if (loop_nest) {
      fmt::print("  loop nest          {} ({}), run as {}\n", join_x(total.loop_nest),
                 f.params_text, total.transformation);
    } else if (!f.params_text.empty()) {
      fmt::print("  parameters         {}\n", f.params_text);
    }
    fmt::print("  wall time          {:.6f} s  ({} steps)\n", seconds, plan.steps());
    if (plan.idle_cpus() > 0) fmt::print("  idle               {}\n", idle_text(plan));
    if (f.sweeps > 1) {
      fmt::print("  sweeps             {} ({:.6f} s per sweep, set-up paid once)\n", f.sweeps,
                 seconds / f.sweeps);
    }
    if (f.parsed_link.enabled) {
      fmt::print("  emulated link      {}\n", comm::to_string(f.parsed_link));
    }
    fmt::print("  points per second  {:.4g}\n", rate);
    fmt::print("  {:<18} {}\n", result_key, total.result);
    fmt::print(
        "  phases (s, all threads): compute {:.6f}  send start {:.6f}  waiting {:.6f}  "
        "synchronization {:.6f}\n",
        phases.compute_s, phases.send_start_s, phases.wait_s, phases.sync_s);
    if (plan.nodes() > 1) {
      fmt::print("  faces              {}\n", total.summary.ranks.front().direct_faces
                                                  ? "direct (one copy into the neighbour's slab)"
                                                  : "copy (sent as messages)");
    }
    if (f.comm_thread) {
      const auto& c = total.summary.ranks.front().comm_thread;
      fmt::print(
          "  comm thread        share {:.3f} of a row{}; rank 0: compute {:.6f} s, comm {:.6f} s\n",
          c.share, plan.cpus() == 1 ? " (an extra thread, m = 1)" : "", c.compute_s, c.comm_s);
    }
    if (hidden >= 0) {
      fmt::print("  communication hidden behind computation: {:.0f}%\n", 100 * hidden);
    } else {
      fmt::print("  communication hidden behind computation: no faces moved between ranks\n");
    }
    if (verified) fmt::print("  verified           {}\n", *verified ? "yes (bit for bit)" : "NO");
    if (!f.input.empty()) fmt::print("  array read from    {}\n", f.input);
    if (!f.output.empty()) fmt::print("  array written to   {}\n", f.output);
    if (choice) {
      fmt::print("  predicted time     {:.6f} s (machine {}, {} formula)\n",
                 choice->prediction.total.count(), f.machine_label,
                 model::to_string(choice->prediction.formula));
      fmt::print("  chosen by          {}: {}\n", choice->chosen_by_model ? "model" : "user",
                 choice->reason);
    }
  }
  if (trace) {
    auto st = trace->write(exec::chrome_trace_json(
        total.spans, "tilepipe run " + f.plan.kernel + " " + join_x(plan.space().extents())));
    if (!st) return report_error(st.error());
  }
  if (verified && !*verified) {
    return report_error(Error(Errc::internal, std::string("the ") + result_key +
                                                  " differs from the sequential reference"));
  }
  return exit_ok;
}

/// A kernel through its entry points (a built-in one's, or a --plugin's: the plugin runs the
/// door).
int run_through_entry(RunFlags& f, const runtime::KernelEntry& entry, const plan::Index& size,
                      const runtime::RunOptions& options, OutputFile* trace) {
  auto values = f.plan.param_values();
  if (!values) return report_error(values.error());
  if (!entry.params.empty()) f.params_text = values->to_string();
  std::fflush(stdout);  // forked ranks must not repeat buffered output
  auto result = entry.run(size, *values, options);
  if (!result) return report_error(result.error());
  if (!result->root) return exit_ok;
  return report(f, *result, trace);
}

/// The machine file the run's automatic choices use: --machine (errors are the user's), else the
/// default file of `tilepipe calibrate` when no tile is given (a file that does not load is
/// skipped with a note). nullopt: no model; then "auto" flags are refused. Sets the flags left to
/// the model to "auto": the tile when not given, the schedule and grouping when not given.
Expected<std::optional<model::Machine>> model_machine(RunFlags& f, bool schedule_given,
                                                      bool grouping_given,
                                                      const comm::Config& config) {
  const std::string transport = config.transport == comm::TransportKind::mpi ? "mpi" : "shm";
  const bool tile_open = f.plan.tile.empty() && f.plan.tiling_matrix.empty();
  const bool any_auto = f.plan.tile == "auto" || f.plan.schedule == "auto" ||
                        f.plan.grouping == "auto" || f.plan.cyclic == "auto";
  std::optional<model::Machine> machine;
  model::MachineCheck check{model::this_host(), transport, std::nullopt};
  check.emulated_link = comm::to_string(config.link);
  if (!f.machine.empty()) {
    auto m = model::load_machine(f.machine, check);
    if (!m) return Unexpected{m.error()};
    machine = *m;
    f.machine_label = m->name + " (" + f.machine + ")";
  } else if (tile_open || any_auto) {
    const std::string path = runtime::default_machine_path(transport, config.link);
    std::error_code ec;
    if (!path.empty() && std::filesystem::exists(path, ec)) {
      auto m = model::load_machine(path, check);
      if (m) {
        machine = *m;
        f.machine_label = m->name + " (" + path + ")";
      } else if (!any_auto) {
        fmt::print(stderr, "tilepipe: note: not using the default machine file: {}\n",
                   m.error().message);
      } else {
        return Unexpected{m.error()};
      }
    }
  }
  if (!machine) {
    if (any_auto) {
      const char* flag = f.plan.tile == "auto"       ? "--tile"
                         : f.plan.schedule == "auto" ? "--schedule"
                         : f.plan.grouping == "auto" ? "--grouping"
                                                     : "--cyclic";
      return fail(Errc::invalid_argument,
                  std::string(flag) +
                      " auto needs --machine FILE or a machine file at the default path "
                      "(write one with `tilepipe calibrate`)");
    }
    return std::optional<model::Machine>();
  }
  if (tile_open) f.plan.tile = "auto";
  if (!schedule_given) f.plan.schedule = "auto";
  if (!grouping_given) f.plan.grouping = "auto";
  return machine;
}

int run_run(int argc, char** argv) {
  CLI::App app{"Run a tiled loop nest on ranks x threads and report time, checksum and phases",
               "tilepipe run"};
  RunFlags f;
  f.plan.add_to(app, true);
  add_comm_options(app, f.comm);
  app.add_option("--subtiles", f.subtiles, "vertical grouping: subtiles per tile, or auto");
  app.add_option("--trace", f.trace, "write a Chrome trace-event JSON file (Perfetto opens it)");
  app.add_flag("--rendezvous-faces", f.rendezvous_faces,
               "keep the transport's size thresholds for faces (default: faces up to 1 MiB are "
               "sent eagerly, inside isend)");
  std::string faces = "auto";
  app.add_option("--faces", faces,
                 "auto|copy|direct: how faces reach a neighbour rank (direct: packed straight into "
                 "its slab, shared memory only; auto: direct where possible)");
  app.add_flag("--comm-thread", f.comm_thread,
               "one thread per rank does all communication and computes a smaller share");
  app.add_flag("--verify", f.verify, "also run the sequential reference; fail unless identical");
  app.add_option("--sweeps", f.sweeps,
                 "run the whole sweep this many times over the same arrays, set up once")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--output", f.output,
                 "write the computed array (the interior, C order, the kernel's element type; "
                 "sor: u after the last sweep and sweep3d: phi, as float64) to this .npy file");
  app.add_option("--input", f.input,
                 "start from the array in this .npy file (the shape and element type --output "
                 "writes; kernels that keep their elements: wave2d-4d and resident plugins)");
  app.add_flag("--json", f.json, "print the results as one JSON object");
  app.add_option("--machine", f.machine,
                 "machine file (tilepipe calibrate): --tile/--schedule/--grouping auto choose by "
                 "the cost model; default: the file tilepipe calibrate writes, if present");
  add_formula_option(app, f.formula);
  if (const int rc = f.plan.add_plugin_help(app, argc, argv); rc >= 0) return rc;
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;
  if (auto st = f.plan.load_plugins(); !st) return report_error(st.error());
  // Output paths before any work (an empty --trace '' is refused, not ignored).
  std::optional<OutputFile> trace_file;
  if (app.count("--trace") > 0) {
    auto t = check_output("--trace", f.trace);
    if (!t) return report_error(t.error());
    trace_file.emplace(std::move(*t));
  }
  if (app.count("--output") > 0) {  // the door opens it (forked: before any rank starts)
    if (auto o = check_output("--output", f.output); !o) return report_error(o.error());
  }
  if (app.count("--input") > 0 && f.input.empty()) {  // read by the door, before any work
    return report_error(Error(Errc::invalid_argument, "--input: the path is empty"));
  }
  f.cpus_given = app.count("--cpus") > 0;
  auto face_mode = exec::parse_face_mode(faces, "--faces");
  if (!face_mode) return report_error(face_mode.error());
  f.faces = *face_mode;
  auto formula = parse_formula(f.formula);
  if (!formula) return report_error(formula.error());

  if (f.plan.kernel.empty()) {
    return report_error(Error(Errc::invalid_argument,
                              "--kernel is required (tilepipe run runs " + run_kernel_names() +
                                  "; Smith-Waterman runs with tilepipe align)"));
  }
  if (auto k = f.plan.kernel_entry(); !k || !runs(**k)) {
    return report_error(Error(Errc::invalid_argument,
                              "--kernel: tilepipe run runs " + run_kernel_names() + ", not '" +
                                  f.plan.kernel + "' (Smith-Waterman: tilepipe align)"));
  }
  auto comm_config = apply_comm_flags(f.comm);
  if (!comm_config) return report_error(comm_config.error());
  const comm::Config config = *comm_config;
  f.parsed_link = config.link;
  if (f.faces == exec::FaceMode::direct && config.transport == comm::TransportKind::mpi) {
    return report_error(Error(Errc::invalid_argument,
                              "--faces direct needs shared memory between the ranks (not "
                              "--transport mpi); use --faces copy or auto"));
  }
  if (f.faces == exec::FaceMode::direct && config.link.enabled) {
    return report_error(
        Error(Errc::invalid_argument, "--faces direct bypasses the emulated link (--link " +
                                          f.comm.link + "); use --faces copy or auto"));
  }

  auto extents = parse_extents(f.plan.size, "--size");
  if (!extents) return report_error(extents.error());

  auto machine = model_machine(f, app.count("--schedule") > 0, app.count("--grouping") > 0, config);
  if (!machine) return report_error(machine.error());
  // What is left open goes to the door: the cost model's choice with a machine, else about 64
  // tiles along the longest dimension and the CPUs of this process's affinity mask.
  if (f.plan.tile.empty()) f.plan.tile = "auto";
  auto request = f.plan.to_choice_request();
  if (!request) return report_error(request.error());
  runtime::RunOptions o;
  o.last_words = &print_last_words;
  const plan::PlanRequest& base = request->base;
  o.nodes = app.count("--nodes") > 0 ? base.nodes : 0;
  o.cpus = f.cpus_given ? base.cpus : 0;
  o.mesh = base.mesh;
  o.map_dim = base.map_dim;
  o.cyclic = base.cyclic;
  o.auto_cyclic = request->auto_cyclic;
  if (!request->auto_tile && base.tile_kind == plan::TileSpecKind::extents) {
    o.tile_extents = base.tile_extents;
  } else if (!request->auto_tile) {
    o.tile_height = base.tile_height;
  }
  if (!request->auto_schedule) o.schedule = base.schedule;
  if (!request->auto_grouping) o.grouping = base.grouping;
  if (f.subtiles != "auto") {
    auto n = parse_int(f.subtiles, "--subtiles", 1, 1 << 20);
    if (!n) return report_error(n.error());
    o.subtiles = static_cast<int>(*n);
  }
  o.faces = f.faces;
  o.comm_thread = f.comm_thread;
  o.eager_faces = !f.rendezvous_faces;
  o.comm = config;
  o.trace = trace_file.has_value();
  o.verify = f.verify;
  o.output = f.output;
  o.input = f.input;
  o.sweeps = f.sweeps;
  auto workload = f.plan.workload();
  if (!workload) return report_error(workload.error());
  o.workload = *workload;
  o.machine = *machine;
  o.formula = *formula;
  o.kernel_name = f.plan.kernel;
  OutputFile* trace = trace_file ? &*trace_file : nullptr;
  // Every kernel through its entry's run, a built-in one's as a plugin's (ADR 0025).
  auto entry = f.plan.kernel_entry();
  if (!entry) return report_error(entry.error());
  return run_through_entry(f, **entry, *extents, o, trace);
}

const CommandRegistration run_registration{
    {"run", "run a kernel's plan on ranks x threads: time, checksum, phases", &run_run}};

}  // namespace
}  // namespace tp::app
