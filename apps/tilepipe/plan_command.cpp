// `tilepipe plan`: tiling, mesh, CPU grid, mapping and schedule of a loop nest, without running it.
#include "command.hpp"
#include "parse_cli.hpp"
#include "plan_options.hpp"
#include "plan_report.hpp"

#include <tilepipe/model/choose.hpp>

#include <fmt/core.h>

namespace tp::app {

namespace {

int run_plan(int argc, char** argv) {
  CLI::App app{"Plan a tiled loop nest on nodes x CPUs: tile space, mesh, schedule, time steps",
               "tilepipe plan"};
  PlanOptions options;
  options.add_to(app);
  ModelFlags model_flags;
  model_flags.add_to(app);
  bool json = false;
  app.add_flag("--json", json, "print the plan as one JSON object");
  if (const int rc = options.add_plugin_help(app, argc, argv); rc >= 0) return rc;
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;
  if (auto st = options.load_plugins(); !st) return report_error(st.error());

  // A loop nest with negative dependence components runs in a transformed space (to_request
  // plans that space); the transformation is printed ahead of the plan.
  const auto to_json = [&](const plan::Plan& plan, const std::optional<plan::TransformedSpace>& t) {
    auto j = plan_to_json(plan, options.kernel);
    if (t) add_transform_json(j, *t);
    return j;
  };
  const auto to_text = [&](const plan::Plan& plan, const std::optional<plan::TransformedSpace>& t) {
    const std::string s = plan_to_text(plan, options.kernel);
    if (!t) return s;
    const auto eol = s.find('\n') + 1;  // after the title line
    return s.substr(0, eol) + transform_to_text(*t) + s.substr(eol);
  };
  if (!model_flags.given()) {
    if (auto st = model_flags.check_without_machine(); !st) return report_error(st.error());
    auto request = options.to_request();
    if (!request) return report_error(request.error());
    auto transformed = options.transformed();
    if (!transformed) return report_error(transformed.error());
    auto plan = plan::Plan::make(*request);
    if (!plan) return report_error(plan.error());
    if (json) {
      auto j = json_preamble("plan");
      j.update(to_json(*plan, *transformed));
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("{}", to_text(*plan, *transformed));
    }
    return exit_ok;
  }

  // With a machine file: the flags first (bad input before file trouble), then the file.
  auto choice_request = options.to_choice_request();
  if (!choice_request) return report_error(choice_request.error());
  auto model_options = model_flags.options(options.kernel);
  if (!model_options) return report_error(model_options.error());
  choice_request->options = *model_options;
  auto workload = options.workload();
  if (!workload) return report_error(workload.error());
  if (auto st = model_flags.apply_sweeps(*workload, options.kernel); !st) {
    return report_error(st.error());
  }
  choice_request->options.workload = *workload;
  auto machine = model_flags.load();
  if (!machine) return report_error(machine.error());
  auto choice = model::choose(*choice_request, *machine);
  if (!choice) return report_error(choice.error());
  auto transformed = options.transformed();
  if (!transformed) return report_error(transformed.error());
  auto plan = plan::Plan::make(choice->request);
  if (!plan) return report_error(plan.error());
  if (json) {
    auto j = json_preamble("plan");
    j.update(to_json(*plan, *transformed));
    add_prediction_json(j, *choice, *machine);
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}{}", to_text(*plan, *transformed),
               prediction_to_text(*choice, *machine, plan->cpus()));
  }
  return exit_ok;
}

const CommandRegistration plan_registration{
    {"plan", "tile, map and schedule a loop nest; print the plan and its time steps", &run_plan}};

}  // namespace

}  // namespace tp::app
