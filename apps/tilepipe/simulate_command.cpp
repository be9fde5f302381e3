// `tilepipe simulate`: the plan of `tilepipe plan` run through the discrete-event simulator on a
// machine file's machine and network; prints the simulated and the predicted time.
#include "command.hpp"
#include "link_option.hpp"
#include "parse_cli.hpp"
#include "plan_options.hpp"
#include "plan_report.hpp"
#include "progress_line.hpp"

#include <tilepipe/exec/trace.hpp>
#include <tilepipe/model/choose.hpp>
#include <tilepipe/model/machine_file.hpp>
#include <tilepipe/sim/simulate.hpp>

#include <fmt/core.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace tp::app {

namespace {

/// Min, median and max of one figure over the ranks.
struct Spread {
  double min = 0, median = 0, max = 0;
};

Spread spread_of(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v.back()};
}

std::string network_text(const model::Network& n) {
  std::string s(model::to_string(n.topology));
  if (n.topology == model::Topology::torus) {
    std::string shape;
    for (auto t : n.torus) shape += (shape.empty() ? "" : "x") + std::to_string(t);
    s += " " + shape + fmt::format(", links {:.4g} B/s", n.link_bandwidth_bytes_per_s);
  }
  if (!n.nodes.empty()) s += fmt::format(", {} node override(s)", n.nodes.size());
  if (n.hosts.shared()) {
    s += fmt::format(", {} rank(s) per host of {} core(s) (wake-up {:.4g} us)",
                     n.hosts.ranks_per_host, n.hosts.cores, n.hosts.wake.count() * 1e6);
  }
  return s;
}

/// "rank 0 steps 0-12 > rank 1 steps 11-63", the middle elided past 6 segments.
std::string segments_text(const std::vector<sim::PathSegment>& segments) {
  const auto one = [](const sim::PathSegment& g) {
    return g.first_step == g.last_step
               ? fmt::format("rank {} step {}", g.rank, g.first_step)
               : fmt::format("rank {} steps {}-{}", g.rank, g.first_step, g.last_step);
  };
  const std::size_t n = segments.size();
  std::string s;
  for (std::size_t k = 0; k < n; ++k) {
    if (n > 6 && k == 3) {
      s += fmt::format(" > ... ({} more) ...", n - 5);
      k = n - 3;
      continue;
    }
    s += (s.empty() ? "" : " > ") + one(segments[k]);
  }
  return s;
}

exec::SpanKind kind_of(sim::SpanKind k) {
  switch (k) {
    case sim::SpanKind::compute:
      return exec::SpanKind::compute;
    case sim::SpanKind::send_start:
      return exec::SpanKind::send_start;
    case sim::SpanKind::wait:
      return exec::SpanKind::wait;
    case sim::SpanKind::sync:
      return exec::SpanKind::sync;
  }
  return exec::SpanKind::compute;
}

/// The simulated schedule in `tilepipe run --trace`'s format: one track per rank (thread 0).
std::string trace_json(const sim::SimResult& r, const std::string& title) {
  std::vector<std::vector<exec::Span>> by_rank;
  for (const auto& spans : r.spans) {
    auto& out = by_rank.emplace_back();
    for (const auto& x : spans) {
      const auto ns = [](sim::Seconds t) { return std::llround(t.count() * 1e9); };
      out.push_back(exec::Span{ns(x.begin), ns(x.end) - ns(x.begin), x.step, 0, kind_of(x.kind)});
    }
  }
  return exec::chrome_trace_json(by_rank, title);
}

/// Adds the simulation's fields to the plan's JSON.
void add_sim_json(nlohmann::ordered_json& j, const sim::SimResult& r, const model::Network& net) {
  j["simulated_s"] = r.simulated.count();
  j["sweeps"] = r.sweeps;
  j["simulated_sweep_s"] = r.sweep.count();
  j["network"] = network_text(net);
  const auto& p = r.critical_path;
  j["critical_path"] = {{"compute_s", p.compute.count()},
                        {"overhead_s", p.overhead.count()},
                        {"network_s", p.network.count()},
                        {"messages", p.messages},
                        {"end_rank", p.end_rank}};
  auto segments = nlohmann::ordered_json::array();
  for (const auto& g : p.segments) {
    segments.push_back({{"rank", g.rank},
                        {"first_step", g.first_step},
                        {"last_step", g.last_step},
                        {"begin_s", g.begin.count()},
                        {"end_s", g.end.count()}});
  }
  j["critical_path"]["segments"] = segments;
  auto ranks = nlohmann::ordered_json::array();
  for (const auto& x : r.ranks) {
    ranks.push_back({{"rank", x.rank},
                     {"steps", x.steps},
                     {"busy_s", x.busy.count()},
                     {"idle_s", x.idle.count()},
                     {"compute_s", x.compute.count()},
                     {"overhead_s", x.overhead.count()},
                     {"first_start_s", x.first_start.count()},
                     {"finish_s", x.finish.count()},
                     {"messages_sent", x.messages_sent},
                     {"bytes_sent", x.bytes_sent}});
  }
  j["ranks"] = ranks;
  j["sim_subtiles"] = r.subtiles;
  j["rank_steps"] = r.rank_steps;
  j["events"] = r.events;
}

std::string sim_text(const sim::SimResult& r, const model::Choice& choice,
                     const model::Network& net) {
  const double predicted = choice.prediction.total.count();
  const auto& p = r.critical_path;
  std::vector<double> busy;
  std::vector<double> idle;
  for (const auto& x : r.ranks) {
    busy.push_back(x.busy.count());
    idle.push_back(x.idle.count());
  }
  const Spread b = spread_of(busy);
  const Spread i = spread_of(idle);
  std::string s;
  s += fmt::format("  network            {}\n", network_text(net));
  s += fmt::format("  simulated time     {:.6g} s\n", r.simulated.count());
  if (r.sweeps > 1) {
    s +=
        fmt::format("  one sweep          {:.6g} s simulated, of {} (the ranks below: one sweep)\n",
                    r.sweep.count(), r.sweeps);
  }
  s += fmt::format(
      "  predicted time     {:.6g} s (closed formula; simulated / predicted = {:.4f})\n", predicted,
      predicted > 0 ? r.simulated.count() / predicted : 0.0);
  s += fmt::format(
      "  critical path      compute {:.6g} s + overhead {:.6g} s + network {:.6g} s, {} "
      "message(s), ends on rank {}\n",
      p.compute.count(), p.overhead.count(), p.network.count(), p.messages, p.end_rank);
  s += fmt::format("  critical ranks     {}\n", segments_text(p.segments));
  s += fmt::format("  rank busy (s)      min {:.6g}  median {:.6g}  max {:.6g}\n", b.min, b.median,
                   b.max);
  s += fmt::format("  rank idle (s)      min {:.6g}  median {:.6g}  max {:.6g}\n", i.min, i.median,
                   i.max);
  s += fmt::format("  simulated          {} rank steps, {} events\n", r.rank_steps, r.events);
  return s;
}

int run_simulate(int argc, char** argv) {
  CLI::App app{"Simulate a plan on a machine file's machine and network (discrete events)",
               "tilepipe simulate"};
  PlanOptions options;
  options.add_to(app);
  ModelFlags model_flags;
  model_flags.add_to(app);
  bool json = false;
  bool progress = false;
  std::string trace;
  app.add_flag("--json", json, "print the plan, prediction and simulation as one JSON object");
  app.add_flag("--progress", progress,
               "show progress on stderr (default: only when stderr is a terminal)");
  app.add_option("--trace", trace,
                 "write the simulated schedule as a Chrome trace (the format of tilepipe run "
                 "--trace; tools/plot/plot_trace.py draws it); plans of at most 100000 rank steps");
  if (const int rc = options.add_plugin_help(app, argc, argv); rc >= 0) return rc;
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;
  if (auto st = options.load_plugins(); !st) return report_error(st.error());
  std::optional<OutputFile> trace_file;
  if (app.count("--trace") > 0) {
    auto t = check_output("--trace", trace);
    if (!t) return report_error(t.error());
    trace_file.emplace(std::move(*t));
  }

  // The flags first (bad input before file trouble), then the file.
  if (!model_flags.given()) {
    return report_error(Error(Errc::invalid_argument,
                              "--machine FILE is required: the simulation needs the machine's "
                              "costs (tests/data/machines/ or tilepipe calibrate)"));
  }
  auto choice_request = options.to_choice_request();
  if (!choice_request) return report_error(choice_request.error());
  auto model_options = model_flags.options(options.kernel);
  if (!model_options) return report_error(model_options.error());
  choice_request->options = *model_options;
  auto workload = options.workload();  // sor's and sweep3d's sweeps and faces, as plan counts them
  if (!workload) return report_error(workload.error());
  if (auto st = model_flags.apply_sweeps(*workload, options.kernel); !st) {
    return report_error(st.error());
  }
  choice_request->options.workload = *workload;
  // A simulated machine need not be this host: the host check is left out.
  model::MachineCheck check{std::nullopt, model_flags.transport, std::nullopt};
  if (!model_flags.link.empty()) {
    auto l = parse_link_option(model_flags.link);
    if (!l) return report_error(l.error());
    check.emulated_link = comm::to_string(*l);
  }
  auto machine = model::load_machine(model_flags.machine, check);
  if (!machine) return report_error(machine.error());
  auto choice = model::choose(*choice_request, *machine);
  if (!choice) return report_error(choice.error());
  auto plan = plan::Plan::make(choice->request);
  if (!plan) return report_error(plan.error());

  sim::SimOptions sim_options;
  sim_options.model = choice_request->options;
  sim_options.model.comm_thread = choice->prediction.comm_thread;
  sim_options.model.subtiles = choice->prediction.step.subtiles;
  sim_options.spans = trace_file.has_value();
  const bool show = progress || ::isatty(STDERR_FILENO) == 1;
  if (show) {
    sim_options.progress = [](double f) { draw_share("simulating:", f); };
  }
  auto result = sim::simulate(*plan, *machine, sim_options);
  if (show) fmt::print(stderr, "\n");
  if (!result) return report_error(result.error());
  if (trace_file) {
    std::string title = "tilepipe simulate " + options.kernel + " on " + machine->name;
    if (auto st = trace_file->write(trace_json(*result, title)); !st) {
      return report_error(st.error());
    }
  }
  if (json) {
    auto j = json_preamble("simulate");
    j.update(plan_to_json(*plan, options.kernel));
    add_prediction_json(j, *choice, *machine);
    add_sim_json(j, *result, machine->network);
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}{}{}", plan_to_text(*plan, options.kernel),
               prediction_to_text(*choice, *machine, plan->cpus()),
               sim_text(*result, *choice, machine->network));
  }
  return exit_ok;
}

const CommandRegistration simulate_registration{
    {"simulate", "simulate a plan on a machine file's cluster (discrete events); print its time",
     &run_simulate}};

}  // namespace

}  // namespace tp::app
