// Rendering a plan for people (a table) and for programs (JSON).
#include "plan_report.hpp"

#include <fmt/format.h>

namespace tp::app {

namespace {

std::string join(const plan::Index& v, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? std::string(sep) : "") + std::to_string(v[i]);
  return s;
}

nlohmann::ordered_json matrix_json(const plan::RationalMatrix& m) {
  auto rows = nlohmann::ordered_json::array();
  for (int r = 0; r < m.size(); ++r) {
    auto row = nlohmann::ordered_json::array();
    for (int c = 0; c < m.size(); ++c) row.push_back(m.at(r, c).to_string());
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

nlohmann::ordered_json plan_to_json(const plan::Plan& p, const std::string& kernel) {
  nlohmann::ordered_json j;
  j["kernel"] = kernel.empty() ? nullptr : nlohmann::ordered_json(kernel);
  j["dims"] = p.space().dims();
  j["size"] = p.space().extents();
  j["deps"] = p.deps().vectors();
  if (p.tiling().is_rectangular()) {
    j["tile"] = p.tiling().tile_extents();
  } else {
    j["tile"] = nullptr;
  }
  j["tiling_matrix"] = matrix_json(p.tiling().h());
  j["tile_space"] = p.tile_space().counts();
  j["tiles"] = p.tile_space().size();
  j["tile_deps"] = p.tile_deps();
  j["map_dim"] = p.map_dim() + 1;
  j["nodes"] = p.nodes();
  j["cpus"] = p.cpus();
  j["mesh"] = p.mesh();
  j["cpu_grid"] = p.cpu_grid();
  j["cyclic"] = p.cyclic();
  j["schedule"] = std::string(plan::to_string(p.schedule().kind()));
  j["grouping"] = std::string(plan::to_string(p.schedule().grouping().kind()));
  j["grouping_matrix"] = matrix_json(p.schedule().grouping().p());
  j["schedule_vector"] = p.schedule().vector();
  j["steps"] = p.steps();
  j["face_points"] = p.face_points();
  j["idle_nodes"] = p.idle_nodes();
  j["idle_cpus"] = p.idle_cpus();
  j["points"] = p.space().points();
  j["legal"] = true;
  return j;
}

void add_transform_json(nlohmann::ordered_json& json, const plan::TransformedSpace& t) {
  std::int64_t points = 1;
  for (const auto e : t.original_size) points *= e;  // validated by the loop nest's kernel
  nlohmann::ordered_json j;
  j["size"] = t.original_size;
  j["deps"] = t.original_deps.vectors();
  j["points"] = points;
  j["transformation"] = t.transform.rows();
  j["mapping"] = t.transform.to_string();
  j["lower_corner"] = t.box.lo;
  json["loop_nest"] = j;
}

std::string transform_to_text(const plan::TransformedSpace& t) {
  std::string s;
  const auto row = [&](std::string_view key, const std::string& value) {
    s += fmt::format("  {:<18} {}\n", key, value);
  };
  row("loop nest", join(t.original_size, "x"));
  row("its dependences", t.original_deps.to_string());
  row("transformation T",
      fmt::format("{}  (rows {}); the space below is T J^n's bounding box, "
                  "shifted to start at 1 (lower corner {})",
                  t.transform.to_string(), t.transform.rows_string(), plan::to_string(t.box.lo)));
  return s;
}

std::string idle_text(const plan::Plan& p) {
  return fmt::format("{} of {} nodes and {} of {} CPUs have no row of tiles and run none",
                     p.idle_nodes(), p.nodes(), p.idle_cpus(), p.nodes() * p.cpus());
}

std::string plan_to_text(const plan::Plan& p, const std::string& kernel) {
  std::string s;
  const auto row = [&](std::string_view key, const std::string& value) {
    s += fmt::format("  {:<18} {}\n", key, value);
  };
  s += fmt::format("tilepipe plan{}\n", kernel.empty() ? "" : " (" + kernel + ")");
  row("iteration space",
      fmt::format("{}  ({} points)", join(p.space().extents(), "x"), p.space().points()));
  row("dependences D", p.deps().to_string());
  if (p.tiling().is_rectangular()) {
    row("tile", fmt::format("{}  (grain {} points)", join(p.tiling().tile_extents(), "x"),
                            p.tiling().grain().to_string()));
  } else {
    row("tiling matrix H", p.tiling().h().to_string());
  }
  row("tile space J^S",
      fmt::format("{}  ({} tiles)", join(p.tile_space().counts(), "x"), p.tile_space().size()));
  std::string ds;
  for (const auto& d : p.tile_deps()) ds += (ds.empty() ? "" : " ") + plan::to_string(d);
  row("tile deps D^S", ds);
  row("mapping dimension", std::to_string(p.map_dim() + 1));
  row("nodes", fmt::format("{} as mesh {}", p.nodes(), join(p.mesh(), "x")));
  row("CPUs per node", fmt::format("{} as grid {}", p.cpus(), join(p.cpu_grid(), "x")));
  if (p.is_cyclic()) {
    row("cyclic", fmt::format("{} (rows of tiles per CPU, block-cyclic)", join(p.cyclic(), "x")));
  }
  row("schedule", fmt::format("{}, {} grouping", plan::to_string(p.schedule().kind()),
                              plan::to_string(p.schedule().grouping().kind())));
  row("grouping P^G", p.schedule().grouping().p().to_string());
  row("schedule Pi^G", plan::to_string(p.schedule().vector()));
  row("time steps", std::to_string(p.steps()));
  row("face per step", fmt::format("{} points sent per node", p.face_points()));
  if (p.idle_cpus() > 0) row("idle", idle_text(p));
  return s;
}

namespace {

/// A duration with a readable unit: "49.2 us", "1.734 ms", "0.2413 s".
std::string human(model::Seconds t) {
  const double s = t.count();
  if (s == 0) return "0";
  if (s < 1e-3) return fmt::format("{:.4g} us", s * 1e6);
  if (s < 1) return fmt::format("{:.4g} ms", s * 1e3);
  return fmt::format("{:.4g} s", s);
}

}  // namespace

void add_prediction_json(nlohmann::ordered_json& j, const model::Choice& choice,
                         const model::Machine& machine) {
  const auto& p = choice.prediction;
  const auto& s = p.step;
  j["machine"] = machine.name;
  j["predicted_s"] = p.total.count();
  j["formula"] = model::to_string(p.formula);
  j["step_s"] = s.step.count();
  j["edge_steps"] = p.edge_steps;
  j["hop_s"] = s.hop.count() > 0 ? nlohmann::ordered_json(s.hop.count()) : nullptr;
  if (p.sweeps > 1) {
    // Repeated sweeps (sweep3d): the whole pipeline per sweep and what runs between sweeps.
    j["sweeps"] = p.sweeps;
    j["sweep_s"] = p.sweep.count();
    j["copy_sweeps"] = p.copy_sweeps;
    j["copy_sweep_s"] = p.copy_sweep.count();
    j["between_sweeps_s"] = p.between.count();
  }
  nlohmann::ordered_json st;
  st["tile_points"] = s.tile_points;
  st["alpha_s"] = s.alpha.count();
  st["t_comp_s"] = s.t_comp.count();
  st["subtiles"] =
      s.subtiles == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.subtiles);
  st["messages"] = s.messages;
  st["face_bytes"] = s.face_bytes;
  st["t_start_s"] = s.t_start.count();
  st["t_comm_s"] = s.t_comm.count();
  st["t_sync_s"] = s.t_sync.count();
  st["comm_thread"] = p.comm_thread;
  st["comm_thread_comp_s"] = s.comm_thread_comp.count();
  st["bound"] = s.compute_bound ? "compute" : "communication";
  j["step_time"] = st;
  j["chosen_by"] = choice.chosen_by_model ? "model" : "user";
  j["evaluated"] = choice.evaluated;
  j["reason"] = choice.reason;
}

std::string prediction_to_text(const model::Choice& choice, const model::Machine& machine,
                               std::int64_t cpus) {
  const auto& p = choice.prediction;
  const auto& s = p.step;
  std::string out;
  const auto row = [&](std::string_view key, const std::string& value) {
    out += fmt::format("  {:<18} {}\n", key, value);
  };
  row("machine", fmt::format("{} ({})", machine.name, machine.transport));
  const std::string comp =
      s.subtiles != 0
          ? fmt::format("beta {} (alpha {}, N = {})", human(s.t_comp), human(s.alpha), s.subtiles)
          : fmt::format("t_comp {}", human(s.t_comp));
  row("computation", comp);
  row("communication",
      fmt::format("{} messages, {} bytes: t_start {}, t_comm {}, t_sync {}", s.messages,
                  s.face_bytes, human(s.t_start), human(s.t_comm), human(s.t_sync)));
  std::string formula;
  if (p.schedule == plan::ScheduleKind::blocking) {
    formula = "t_comp + t_start + t_comm + t_sync";
  } else if (p.comm_thread) {
    formula =
        fmt::format("max(({} alpha + t_start + t_sync)/{}, t_start + t_sync + t_comm)", cpus, cpus);
  } else {
    formula = "t_start + max(t_comp, t_comm) + t_sync";
  }
  row("step time", fmt::format("{} = {} ({}-bound)", formula, human(s.step),
                               s.compute_bound ? "compute" : "communication"));
  // How a sweep's steps are counted: all at full length (the seeds), or with the fill and drain
  // at t_comp alone and each hand-over between nodes as one hop (the executed formula).
  std::string steps = fmt::format("{} steps x {}", p.steps, human(s.step));
  if (p.edge_steps > 0) steps += fmt::format(", {} of them at t_comp alone", p.edge_steps);
  if (s.hop.count() > 0)
    steps += fmt::format(", hand-overs between nodes as hops of {}", human(s.hop));
  steps += fmt::format("; {} formula", model::to_string(p.formula));
  if (p.sweeps == 1) {
    row("predicted time", fmt::format("{} ({})", human(p.total), steps));
  } else {
    row("sweep",
        fmt::format("{} ({}), {} of them{}", human(p.sweep), steps, p.sweeps - p.copy_sweeps,
                    p.copy_sweeps > 0
                        ? fmt::format("; {} copying: {} each", p.copy_sweeps, human(p.copy_sweep))
                        : std::string()));
    row("predicted time",
        fmt::format("{} ({} sweeps, {} between two)", human(p.total), p.sweeps, human(p.between)));
  }
  row("chosen by", fmt::format("{}: {}", choice.chosen_by_model ? "model" : "user", choice.reason));
  return out;
}

}  // namespace tp::app
