// Parsing and validation of the planning flags into a plan::PlanRequest.
#include "plan_options.hpp"

#include <algorithm>
#include <optional>

#include "command.hpp"
#include "kernel_catalog.hpp"
#include "link_option.hpp"

#include <tilepipe/model/machine_file.hpp>
#include <tilepipe/support/parse.hpp>

namespace tp::app {

void PlanOptions::add_to(CLI::App& app, bool executes) {
  if (executes) {
    app.add_option("--kernel", kernel,
                   "built-in kernel: " + run_kernel_names() + ", or a --plugin's kernel");
  } else {
    app.add_option("--kernel", kernel,
                   "built-in kernel: " + kernel_names() + ", or a --plugin's kernel");
    app.add_option("--deps", deps,
                   "dependence vectors, e.g. \"1,0,0;0,1,0;0,0,1\" (negative components: the "
                   "plan runs in a skewed or reversed space)");
  }
  app.add_option("--plugin", plugins,
                 "a kernel plugin, a shared library built with tilepipe/plugin.hpp (repeatable): "
                 "--kernel names one of its kernels");
  app.add_option("--param", params,
                 "a kernel parameter name=value (repeatable), e.g. iterations=64 for sor2d");
  app.add_option("--size", size, "iteration space extents N_1xN_2x..., e.g. 12x12x524288")
      ->required();
  app.add_option("--tile", tile,
                 "tile extents 4x4x1024, or the tile height along the mapping dimension only, or "
                 "auto (chosen by the cost model; needs --machine)");
  if (!executes) {
    app.add_option("--tiling-matrix", tiling_matrix,
                   "general tiling matrix H by rows, e.g. \"1/4,0;-1/8,1/8\" (instead of --tile)");
  }
  app.add_option("--nodes", nodes, "number of nodes (ranks)");
  app.add_option("--cpus", cpus, "CPUs (threads) per node");
  app.add_option("--mesh", mesh, "node mesh, one factor per non-mapping dimension, e.g. 3x3");
  app.add_option(
      "--cyclic", cyclic,
      "block-cyclic factor: rows of tiles per CPU along every non-mapping dimension "
      "(K), one per non-mapping dimension (2x3), or auto (chosen by the cost model; needs "
      "--machine); default 1 (block mapping)");
  app.add_option("--map-dim", map_dim, "mapping dimension: auto or 1..n");
  app.add_option("--schedule", schedule, "blocking|overlap|auto (auto needs --machine)");
  app.add_option("--grouping", grouping, "hyperplane|vertical|auto (auto needs --machine)");
}

namespace {

Unexpected needs_machine(const std::string& flag) {
  return fail(Errc::invalid_argument,
              flag +
                  " auto needs --machine FILE: the cost model chooses it from the machine's "
                  "parameters (write a machine file with `tilepipe calibrate`)");
}

/// A tile longer than the space along a dimension is one tile along it either way; clamped to the
/// extent, the plan's grain and faces count the points that exist (a --tile 1000000 on a 64x64
/// space is a 64-point-high tile, not a grain of 64,000,000 points), but never below the longest
/// dependence component + 1 (a legal side: an extent of 1 with unit dependences keeps a tile of
/// 2). A tile height goes to the mapping dimension: its extent when --map-dim names it, else the
/// largest extent.
void clamp_tile_to_space(plan::PlanRequest& req) {
  if (req.tile_kind == plan::TileSpecKind::extents && req.tile_extents.size() == req.size.size()) {
    for (std::size_t d = 0; d < req.size.size(); ++d) {
      std::int64_t legal = 1;
      if (req.deps && req.deps->dims() == static_cast<int>(req.size.size())) {
        for (const auto& v : req.deps->vectors()) legal = std::max<std::int64_t>(legal, v[d] + 1);
      }
      req.tile_extents[d] =
          std::min(req.tile_extents[d], std::max<std::int64_t>(req.size[d], legal));
    }
  } else if (req.tile_kind == plan::TileSpecKind::height && req.tile_height > 0 &&
             !req.size.empty()) {
    const bool mapped = req.map_dim >= 1 && req.map_dim <= static_cast<int>(req.size.size());
    const std::int64_t limit = mapped ? req.size[static_cast<std::size_t>(req.map_dim - 1)]
                                      : *std::max_element(req.size.begin(), req.size.end());
    req.tile_height = std::min(req.tile_height, limit);
  }
}

}  // namespace

Expected<plan::PlanRequest> PlanOptions::to_request() const {
  return parse(nullptr);
}

Expected<model::ChoiceRequest> PlanOptions::to_choice_request() const {
  model::ChoiceRequest choice;
  auto req = parse(&choice);
  if (!req) return Unexpected{req.error()};
  choice.base = *req;
  return choice;
}

Expected<model::Workload> PlanOptions::workload() const {
  if (kernel.empty()) return model::Workload{};
  auto k = kernel_entry();
  if (!k) return Unexpected{k.error()};
  if (!(*k)->workload) return model::Workload{};
  auto extents = parse_extents(size, "--size");
  if (!extents) return Unexpected{extents.error()};
  auto values = param_values();
  if (!values) return Unexpected{values.error()};
  return (*k)->workload(*extents, *values);
}

Status PlanOptions::load_plugins() {
  if (plugins.empty()) return {};
  registry_ = std::make_shared<runtime::KernelRegistry>();
  for (const auto& path : plugins) TP_TRY(runtime::load_plugin(path, *registry_));
  if (kernel.empty()) {
    return fail(Errc::invalid_argument,
                "--kernel is required with --plugin (it has " + registry_->names() + ")");
  }
  auto entry = registry_->find(kernel);
  if (!entry) return Unexpected{entry.error()};
  plugin_entry_ = *entry;
  return {};
}

int PlanOptions::add_plugin_help(CLI::App& app, int argc, char** argv) {
  bool help = false;
  std::vector<std::string> paths;
  std::string name;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto value = [&](std::string_view flag) -> std::optional<std::string> {
      if (a == flag && i + 1 < argc) return std::string(argv[++i]);
      if (a.size() > flag.size() && a.starts_with(flag) && a[flag.size()] == '=') {
        return std::string(a.substr(flag.size() + 1));
      }
      return std::nullopt;
    };
    if (a == "--help" || a == "-h") {
      help = true;
    } else if (auto p = value("--plugin")) {
      paths.push_back(*p);
    } else if (auto k = value("--kernel")) {
      name = *k;
    }
  }
  if (help && paths.empty() && !name.empty()) {
    // A built-in kernel's parameters (--kernel sweep3d --help).
    auto k = find_kernel(name);
    if (k && !(*k)->params.empty()) {
      std::string text = "Kernel '" + name + "' parameters, --param NAME=VALUE:\n";
      for (const auto& spec : (*k)->params) text += "  " + exec::describe_params({&spec, 1});
      app.footer(text);
    }
    return -1;
  }
  if (!help || paths.empty()) return -1;
  runtime::KernelRegistry registry;
  for (const auto& path : paths) {
    if (auto st = runtime::load_plugin(path, registry); !st) return report_error(st.error());
  }
  std::string text;
  if (name.empty()) {
    text = "Kernels of the plugin(s): " + registry.names() +
           " (--kernel NAME --help: its "
           "parameters)\n";
  } else {
    auto entry = registry.find(name);
    if (!entry) return report_error(entry.error());
    const runtime::KernelEntry& e = **entry;
    text = "Kernel '" + name + "' (" +
           (e.storage == exec::Storage::resident ? "resident" : "frontier") + ", " +
           std::to_string(e.dims) + " dimensions) parameters, --param NAME=VALUE:\n";
    for (const auto& spec : e.params) text += "  " + exec::describe_params({&spec, 1});
    if (e.params.empty()) text += "  (none)\n";
  }
  app.footer(text);
  return -1;
}

std::string PlanOptions::plugin_kernel_names() const {
  return registry_ ? registry_->names() : std::string();
}

Expected<const runtime::KernelEntry*> PlanOptions::kernel_entry() const {
  if (plugin_entry_) return plugin_entry_;
  return find_kernel(kernel);
}

Expected<KernelInfo> PlanOptions::kernel_info() const {
  auto e = kernel_entry();
  if (!e) return Unexpected{e.error()};
  return info_of(**e);
}

Expected<exec::ParamValues> PlanOptions::param_values() const {
  if (kernel.empty()) {
    if (!params.empty()) return fail(Errc::invalid_argument, "--param needs --kernel");
    return exec::ParamValues::parse({}, {});
  }
  auto k = kernel_info();
  if (!k) return Unexpected{k.error()};
  return exec::ParamValues::parse(k->params, params);
}

Expected<std::pair<plan::Index, plan::DependenceMatrix>> PlanOptions::loop_nest() const {
  auto extents = parse_extents(size, "--size");
  if (!extents) return Unexpected{extents.error()};
  const int n = static_cast<int>(extents->size());
  if (!kernel.empty() && !deps.empty()) {
    return fail(Errc::invalid_argument, "give either --kernel or --deps, not both");
  }
  if (kernel.empty() && deps.empty()) {
    return fail(Errc::invalid_argument, "give --kernel (" + kernel_names() + ") or --deps");
  }
  auto values = param_values();
  if (!values) return Unexpected{values.error()};
  if (!kernel.empty()) {
    auto k = kernel_info();
    if (!k) return Unexpected{k.error()};
    const int given = k->time_loop ? k->dims - 1 : k->dims;
    if (given != n) {
      return fail(Errc::invalid_argument,
                  "--kernel " + kernel + " is " + std::to_string(given) + "-dimensional" +
                      (k->time_loop ? " (the time loop comes from --param iterations)" : "") +
                      " but --size " + size + " has " + std::to_string(n) + " dimensions");
    }
    if (k->check) TP_TRY(k->check(*extents, *values));
    return std::make_pair(loop_extents(*k, *extents, *values), k->deps);
  }
  auto d = plan::DependenceMatrix::parse(deps);
  if (!d) return Unexpected{d.error()};
  if (d->dims() != n) {
    return fail(Errc::invalid_argument, "--deps vectors have " + std::to_string(d->dims()) +
                                            " entries but --size " + size + " has " +
                                            std::to_string(n) + " dimensions");
  }
  return std::make_pair(*extents, *d);
}

Expected<std::optional<plan::TransformedSpace>> PlanOptions::transformed() const {
  auto nest = loop_nest();
  if (!nest) return Unexpected{nest.error()};
  // A general tiling matrix is the user's own answer to negative dependences (HD >= 0 checks it).
  if (!tiling_matrix.empty() || !plan::has_negative_component(nest->second)) {
    return std::optional<plan::TransformedSpace>();
  }
  auto t = plan::transform_space(nest->first, nest->second);
  if (!t) return Unexpected{t.error()};
  return std::optional<plan::TransformedSpace>(std::move(*t));
}

Expected<plan::PlanRequest> PlanOptions::parse(model::ChoiceRequest* autos) const {
  plan::PlanRequest req;
  auto nest = loop_nest();
  if (!nest) return Unexpected{nest.error()};
  req.size = nest->first;
  req.deps = nest->second;
  if (tiling_matrix.empty() && plan::has_negative_component(nest->second)) {
    auto t = plan::transform_space(nest->first, nest->second);
    if (!t) return Unexpected{t.error()};
    req.size = t->box.extents;
    req.deps = t->deps;
  }
  const int n = static_cast<int>(req.size.size());
  if (!kernel.empty()) {
    auto k = kernel_info();
    if (!k) return Unexpected{k.error()};
    req.contiguous_dim = exec::contiguous_dim(k->storage, n);  // as the run's
  }

  if (!tile.empty() && !tiling_matrix.empty()) {
    return fail(Errc::invalid_argument, "give either --tile or --tiling-matrix, not both");
  }
  if (!tiling_matrix.empty()) {
    auto h = plan::parse_rational_matrix(tiling_matrix, "--tiling-matrix");
    if (!h) return Unexpected{h.error()};
    req.tile_kind = plan::TileSpecKind::matrix;
    req.h = *h;
  } else if (tile.empty()) {
    return fail(
        Errc::invalid_argument,
        "--tile is required: the tile extents (e.g. 4x4x1024) or the tile height (e.g. 1024)");
  } else if (tile == "auto") {
    if (!autos) return needs_machine("--tile");
    autos->auto_tile = true;
    req.tile_kind = plan::TileSpecKind::height;
  } else if (tile.find('x') == std::string::npos) {
    auto z = parse_int(tile, "--tile");
    if (!z) return Unexpected{z.error()};
    if (*z < 1) {
      return fail(Errc::invalid_argument,
                  "--tile: tile height " + std::to_string(*z) + " must be >= 1");
    }
    req.tile_kind = plan::TileSpecKind::height;
    req.tile_height = *z;
  } else {
    auto w = parse_extents(tile, "--tile");
    if (!w) return Unexpected{w.error()};
    req.tile_kind = plan::TileSpecKind::extents;
    req.tile_extents = *w;
  }

  auto p = parse_int(nodes, "--nodes", 1, plan::max_nodes);
  if (!p) return Unexpected{p.error()};
  req.nodes = *p;
  auto m = parse_int(cpus, "--cpus", 1, plan::max_cpus);
  if (!m) return Unexpected{m.error()};
  req.cpus = *m;
  if (!mesh.empty()) {
    auto me = parse_extents(mesh, "--mesh");
    if (!me) return Unexpected{me.error()};
    req.mesh = *me;
  }
  if (cyclic == "auto") {
    if (!autos) return needs_machine("--cyclic");
    autos->auto_cyclic = true;
  } else {
    auto c = parse_extents(cyclic, "--cyclic");
    if (!c) return Unexpected{c.error()};
    req.cyclic = *c;
  }
  if (map_dim != "auto") {
    auto md = parse_int(map_dim, "--map-dim");
    if (!md) {
      return fail(Errc::invalid_argument,
                  "--map-dim: '" + map_dim + "' is not auto or 1.." + std::to_string(n));
    }
    if (*md < 1 || *md > n) {
      return fail(Errc::invalid_argument, "--map-dim " + std::to_string(*md) +
                                              ": the space has dimensions 1 to " +
                                              std::to_string(n));
    }
    req.map_dim = static_cast<int>(*md);
  }
  if (schedule == "auto") {
    if (!autos) return needs_machine("--schedule");
    autos->auto_schedule = true;
  } else if (schedule == "blocking") {
    req.schedule = plan::ScheduleKind::blocking;
  } else if (schedule == "overlap") {
    req.schedule = plan::ScheduleKind::overlap;
  } else {
    return fail(Errc::invalid_argument,
                "--schedule: unknown schedule '" + schedule + "' (choose blocking|overlap)");
  }
  if (grouping == "auto") {
    if (!autos) return needs_machine("--grouping");
    autos->auto_grouping = true;
  } else if (grouping == "hyperplane") {
    req.grouping = plan::GroupingKind::hyperplane;
  } else if (grouping == "vertical") {
    req.grouping = plan::GroupingKind::vertical;
  } else {
    return fail(Errc::invalid_argument,
                "--grouping: unknown grouping '" + grouping + "' (choose hyperplane|vertical)");
  }
  clamp_tile_to_space(req);
  return req;
}

Expected<model::Formula> parse_formula(const std::string& text) {
  if (text == "executed") return model::Formula::executed;
  if (text == "seeds") return model::Formula::seeds;
  return fail(Errc::invalid_argument,
              "--formula: unknown formula '" + text + "' (choose executed|seeds)");
}

void add_formula_option(CLI::App& app, std::string& formula) {
  app.add_option("--formula", formula,
                 "the cost model's closed form: executed (default; fill, drain and hand-overs "
                 "as the executor runs them) or seeds (the papers' formulas)");
}

void ModelFlags::add_to(CLI::App& app) {
  app.add_option("--machine", machine,
                 "machine file (tilepipe calibrate, or tests/data/machines/): adds the predicted "
                 "time and allows auto");
  app.add_option("--transport", transport,
                 "the transport the plan is for; the machine file must be for it (shm|mpi)");
  app.add_flag("--comm-thread", comm_thread,
               "predict with one communication thread (seed 002 5.4; overlap + hyperplane)");
  app.add_option("--subtiles", subtiles,
                 "vertical grouping: subtiles per tile N (default: best by seed 002 formula (7))");
  add_link_option(app, link);
  add_formula_option(app, formula);
  app.add_option("--sweeps", sweeps,
                 "predict the whole sweep run this many times over the same arrays, as "
                 "tilepipe run --sweeps T runs it (1 to 10^6)");
}

Status ModelFlags::apply_sweeps(model::Workload& workload, const std::string& kernel) const {
  if (sweeps.empty()) return {};
  auto t = parse_int(sweeps, "--sweeps", 1, 1000000);
  if (!t) return Unexpected{t.error()};
  if (*t == 1) return {};
  if (workload.sweeps != 1) {
    return fail(Errc::invalid_argument, "--sweeps: " + kernel +
                                            " sets its own sweeps (tilepipe run refuses --sweeps "
                                            "for it too)");
  }
  workload.sweeps = *t;
  return {};
}

Status ModelFlags::check_without_machine() const {
  const char* flag = !transport.empty()      ? "--transport"
                     : !link.empty()         ? "--link"
                     : comm_thread           ? "--comm-thread"
                     : !subtiles.empty()     ? "--subtiles"
                     : formula != "executed" ? "--formula"
                     : !sweeps.empty()       ? "--sweeps"
                                             : nullptr;
  if (flag) {
    return fail(Errc::invalid_argument,
                std::string(flag) + " needs --machine FILE: it only affects the predicted time");
  }
  return {};
}

Expected<model::Machine> ModelFlags::load() const {
  model::MachineCheck check{model::this_host(), transport, std::nullopt};
  if (!link.empty()) {
    auto l = parse_link_option(link);
    if (!l) return Unexpected{l.error()};
    check.emulated_link = comm::to_string(*l);
  }
  return model::load_machine(machine, check);
}

Expected<model::ModelOptions> ModelFlags::options(const std::string& kernel) const {
  if (!transport.empty() && transport != "shm" && transport != "mpi") {
    return fail(Errc::invalid_argument,
                "--transport: unknown transport '" + transport + "' (choose shm|mpi)");
  }
  auto f = parse_formula(formula);
  if (!f) return Unexpected{f.error()};
  model::ModelOptions o;
  o.kernel = kernel;
  o.comm_thread = comm_thread;
  o.formula = *f;
  if (!subtiles.empty()) {
    auto n = parse_int(subtiles, "--subtiles", 1);
    if (!n) return Unexpected{n.error()};
    o.subtiles = *n;
  }
  return o;
}

}  // namespace tp::app
