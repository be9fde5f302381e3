// `tilepipe plan`: tiling, mesh, CPU grid, mapping and schedule of a loop nest, without running it.
#include "command.hpp"
#include "plan_options.hpp"
#include "plan_report.hpp"

#include <fmt/core.h>

namespace tp::app {

namespace {

int run_plan(int argc, char** argv) {
  CLI::App app{"Plan a tiled loop nest on nodes x CPUs: tile space, mesh, schedule, time steps",
               "tilepipe plan"};
  PlanOptions options;
  options.add_to(app);
  bool json = false;
  app.add_flag("--json", json, "print the plan as one JSON object");
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;

  auto request = options.to_request();
  if (!request) return report_error(request.error());
  auto plan = plan::Plan::make(*request);
  if (!plan) return report_error(plan.error());
  if (json) {
    fmt::print("{}\n", plan_to_json(*plan, options.kernel).dump(2));
  } else {
    fmt::print("{}", plan_to_text(*plan, options.kernel));
  }
  return exit_ok;
}

const CommandRegistration registration{
    {"plan", "tile, map and schedule a loop nest; print the plan and its time steps", &run_plan}};

}  // namespace

}  // namespace tp::app
