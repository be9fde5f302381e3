// `tilepipe sweep`: runs every scheme x tile height with `tilepipe run`, next to the model's
// prediction; table, JSON, CSV and a plot of time against tile height like the seeds' figures.
#include "calibration.hpp"
#include "command.hpp"
#include "kernel_catalog.hpp"
#include "link_option.hpp"
#include "parse_cli.hpp"
#include "plan_options.hpp"
#include "progress_line.hpp"

#include <tilepipe/model/choose.hpp>
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/model/fit.hpp>
#include <tilepipe/model/machine_file.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

namespace tp::app {
namespace {

struct Scheme {
  plan::ScheduleKind schedule;
  plan::GroupingKind grouping;
};

/// Block-cyclic factors as --cyclic takes them (2x3; "1" for none given).
std::string cyclic_text(const std::vector<std::int64_t>& factors) {
  return factors.empty() ? std::string("1") : fmt::format("{}", fmt::join(factors, "x"));
}

/// One configuration the sweep runs, with its prediction and its measurements.
struct Point {
  Scheme scheme{};
  std::int64_t height = 0;
  bool chosen = false;  ///< the model's automatic choice
  bool swept = true;    ///< on the sweep's grid (false: only run as the choice)
  model::Prediction prediction;
  std::string cyclic = "1";     ///< the block-cyclic factors it runs (--cyclic's text)
  std::vector<double> seconds;  ///< one per repeat (tilepipe run's wall time)
  std::vector<double> tile_s;   ///< one per repeat: compute time per tile
};

Expected<std::vector<Scheme>> parse_schemes(const std::string& text) {
  const std::array<Scheme, 4> all{
      Scheme{plan::ScheduleKind::blocking, plan::GroupingKind::hyperplane},
      Scheme{plan::ScheduleKind::blocking, plan::GroupingKind::vertical},
      Scheme{plan::ScheduleKind::overlap, plan::GroupingKind::hyperplane},
      Scheme{plan::ScheduleKind::overlap, plan::GroupingKind::vertical}};
  if (text == "all") return std::vector<Scheme>(all.begin(), all.end());
  std::vector<Scheme> out;
  for (auto part : split(text, ',')) {
    const std::string name(trim(part));
    bool found = false;
    for (const auto& s : all) {
      const std::string n =
          std::string(plan::to_string(s.schedule)) + "+" + std::string(plan::to_string(s.grouping));
      if (n == name) {
        found = true;
        const bool dup = std::any_of(out.begin(), out.end(), [&](const Scheme& o) {
          return o.schedule == s.schedule && o.grouping == s.grouping;
        });
        if (!dup) out.push_back(s);
      }
    }
    if (!found) {
      return fail(Errc::invalid_argument,
                  "--schemes: unknown scheme '" + name +
                      "' (all, or a comma list of blocking|overlap+hyperplane|vertical, e.g. "
                      "overlap+hyperplane)");
    }
  }
  return out;
}

std::string scheme_text(const Scheme& s) {
  return std::string(plan::to_string(s.schedule)) + "+" + std::string(plan::to_string(s.grouping));
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("tilepipe");
}

struct ChildResult {
  int status = -1;
  std::string out;
};

/// Runs argv (no shell) and captures its stdout; its stderr is discarded unless it fails.
ChildResult run_child(const std::vector<std::string>& args, std::string* err_text) {
  ChildResult r;
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe(out_pipe) != 0) return r;
  if (::pipe(err_pipe) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return r;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  const auto drain = [](int fd, std::string& into) {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        into.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    ::close(fd);
  };
  std::string err;
  drain(out_pipe[0], r.out);  // run's stderr holds at most a few lines: the pipe cannot fill
  drain(err_pipe[0], err);
  if (pid < 0) return r;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (err_text) *err_text = err;
  return r;
}

std::string plot_script() {
  if (const char* e = std::getenv("TILEPIPE_PLOT_SWEEP"); e != nullptr && *e != '\0') return e;
  const std::filesystem::path exe = self_exe();
  for (const auto& p : {exe.parent_path() / "../../../../tools/plot/plot_sweep.py",
                        exe.parent_path() / "../share/tilepipe/plot_sweep.py"}) {
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return std::filesystem::weakly_canonical(p, ec).string();
  }
  return "";
}

/// The median, 0 for a point that has no sample.
double median_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : model::median(v);
}

/// Checks each output flag that was given (an empty value too), before any work; two flags may
/// not name the same file. One optional per flag, in order.
Expected<std::vector<std::optional<OutputFile>>> check_outputs(
    const CLI::App& app, const std::vector<std::pair<std::string, std::string>>& flags) {
  std::vector<std::optional<OutputFile>> out(flags.size());
  std::vector<std::pair<std::string, std::string>> seen;  // (canonical path, flag)
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const auto& [flag, path] = flags[i];
    if (app.count(flag) == 0) continue;
    auto file = check_output(flag, path);
    if (!file) return Unexpected{file.error()};
    std::error_code ec;
    const std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
    for (const auto& [other, other_flag] : seen) {
      if (other == canonical) {
        return fail(Errc::invalid_argument,
                    other_flag + " and " + flag + " name the same file '" + path + "'");
      }
    }
    seen.emplace_back(canonical, flag);
    out[i].emplace(std::move(*file));
  }
  return out;
}

/// The plot's image format: the file's extension when matplotlib writes it (.svg, .pdf), else
/// PNG (a name without one, or another one, still gets exactly that name).
std::string plot_format(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".svg" || ext == ".pdf") return ext.substr(1);
  return "png";
}

/// Draws the CSV with plot_sweep.py into a temporary next to the plot, renamed onto it when the
/// script succeeds. The CSV reaches the script through an anonymous memory file (memfd), so that
/// no file the user did not name is written.
Status draw_plot(OutputFile& plot, const std::string& script, const std::string& csv,
                 const std::string& title) {
  const int memfd = ::memfd_create("tilepipe-sweep-csv", 0);  // inherited by the script
  if (memfd < 0) {
    return fail(Errc::system, std::string("--plot: memfd_create: ") + std::strerror(errno));
  }
  std::size_t done = 0;
  while (done < csv.size()) {
    const ssize_t n = ::write(memfd, csv.data() + done, csv.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(memfd);
      return fail(Errc::system, std::string("--plot: writing the CSV: ") + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  auto temp = plot.reserve_temp();
  if (!temp) {
    ::close(memfd);
    Error e = temp.error();
    e.message = "--plot: " + e.message;
    return Unexpected{e};
  }
  std::string err;
  const auto r = run_child({"/usr/bin/python3", script, "/dev/fd/" + std::to_string(memfd), *temp,
                            "--format", plot_format(plot.path()), "--title", title},
                           &err);
  ::close(memfd);
  if (r.status != 0) {
    plot.discard();
    if (auto p = err.rfind('\n', err.size() > 1 ? err.size() - 2 : 0); p != std::string::npos) {
      err = err.substr(p + 1);
    }
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return fail(Errc::system, "--plot: plot_sweep.py failed: " + err);
  }
  if (auto st = plot.commit(); !st) {
    Error e = st.error();
    e.message = "--plot: " + e.message;
    return Unexpected{e};
  }
  return {};
}

int run_sweep(int argc, char** argv) {
  CLI::App app{"Run every scheme x tile height and compare the measured time with the model's",
               "tilepipe sweep"};
  PlanOptions problem;
  problem.nodes = "2";
  std::string heights;
  std::string schemes_text = "all";
  std::string machine_path;
  std::string save_machine_path;
  std::string csv_path;
  std::string plot_path;
  std::string sync = "hybrid";
  int repeat = 3;
  bool json = false;
  bool quiet = false;
  std::string link_spec;
  app.add_option("--kernel", problem.kernel,
                 "a kernel tilepipe run executes (" + run_kernel_names() + "), or a --plugin's")
      ->required();
  app.add_option("--plugin", problem.plugins,
                 "a kernel plugin (as for tilepipe run): --kernel names one of its kernels");
  app.add_option("--param", problem.params,
                 "a parameter of the kernel, name=value (repeatable; e.g. iterations=8)");
  app.add_option("--size", problem.size, "iteration space extents, e.g. 12x12x524288")->required();
  app.add_option("--nodes", problem.nodes, "nodes (local ranks), default 2");
  app.add_option("--cpus", problem.cpus, "CPUs (threads) per node, default 1");
  app.add_option("--cyclic", problem.cyclic,
                 "block-cyclic factor of every run and prediction (K, or 2x3: one per "
                 "non-mapping dimension, as for tilepipe run), or auto (the model's factors "
                 "for each point); default 1");
  app.add_option("--tile-heights", heights,
                 "A:B (A, 2A, 4A, ... and B) or a comma list, e.g. 256:65536")
      ->required();
  app.add_option("--schemes", schemes_text,
                 "all, or a comma list of SCHEDULE+GROUPING (e.g. overlap+hyperplane)");
  app.add_option("--machine", machine_path,
                 "machine file for the predictions (default: calibrate for this sweep first)");
  app.add_option("--save-machine", save_machine_path,
                 "write the machine file the predictions used (e.g. the one calibrated first)");
  app.add_option("--repeat", repeat, "runs per point (median), 1..50; repeats are interleaved");
  app.add_option("--sync", sync, "poll|block|hybrid for the runs");
  app.add_option("--csv", csv_path, "write the points as CSV");
  app.add_option("--plot", plot_path,
                 "write a plot: PNG, or SVG/PDF by the extension (needs /usr/bin/python3 with "
                 "matplotlib)");
  app.add_flag("--json", json, "print one JSON object: the results, one object per point");
  app.add_flag("--quiet", quiet, "no progress display");
  add_link_option(app, link_spec);
  if (const int rc = problem.add_plugin_help(app, argc, argv); rc >= 0) return rc;
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;

  // Bad input first, before any measurement; the output paths first of all.
  auto outputs = check_outputs(
      app, {{"--save-machine", save_machine_path}, {"--csv", csv_path}, {"--plot", plot_path}});
  if (!outputs) return report_error(outputs.error());
  std::optional<OutputFile>& save_machine_file = (*outputs)[0];
  std::optional<OutputFile>& csv_file = (*outputs)[1];
  std::optional<OutputFile>& plot_file = (*outputs)[2];
  if (auto st = problem.load_plugins(); !st) return report_error(st.error());
  const runtime::KernelEntry* plugin = problem.plugin_entry();
  if (plugin) {
    if (auto st = check_plugin_probe(*plugin, "sweep"); !st) return report_error(st.error());
  } else if (auto k = problem.kernel_entry(); !k || !runs(**k)) {
    return report_error(Error(
        Errc::invalid_argument,
        "--kernel: tilepipe sweep runs " + run_kernel_names() + ", not '" + problem.kernel + "'"));
  }
  if (repeat < 1 || repeat > 50) {
    return report_error(
        Error(Errc::invalid_argument, "--repeat " + std::to_string(repeat) + ": must be 1..50"));
  }
  if (auto s = comm::parse_sync_mode(sync, "--sync"); !s) return report_error(s.error());
  auto link = parse_link_option(link_spec);
  if (!link) return report_error(link.error());
  auto schemes = parse_schemes(schemes_text);
  if (!schemes) return report_error(schemes.error());
  problem.tile = "2";
  // --cyclic auto: each point runs the factors the model chooses for its height and scheme
  // (the plans are checked with factor 1; the machine is known only after the calibration).
  const bool auto_cyclic = problem.cyclic == "auto";
  if (auto_cyclic) problem.cyclic = "1";
  auto base = problem.to_request();
  if (!base) return report_error(base.error());
  auto base_plan = plan::Plan::make(*base);
  if (!base_plan) return report_error(base_plan.error());
  base->map_dim = base_plan->map_dim() + 1;
  const std::int64_t extent = base->size[static_cast<std::size_t>(base_plan->map_dim())];
  auto height_list = parse_height_list(heights, extent, "--tile-heights");
  if (!height_list) return report_error(height_list.error());
  std::vector<Point> points;
  for (const auto& s : *schemes) {
    for (auto z : *height_list) {
      plan::PlanRequest r = *base;
      r.tile_height = z;
      r.schedule = s.schedule;
      r.grouping = s.grouping;
      if (auto p = plan::Plan::make(r); !p) {
        return report_error(
            Error(Errc::invalid_argument, fmt::format("--tile-heights: tile height {} with {}: {}",
                                                      z, scheme_text(s), p.error().message)));
      }
      points.push_back(Point{s, z, false, true, {}, problem.cyclic, {}, {}});
    }
  }
  const std::size_t runs = points.size() * static_cast<std::size_t>(repeat);
  if (runs > 2000) {
    return report_error(Error(Errc::invalid_argument,
                              fmt::format("the sweep has {} runs ({} points x {} repeats): at most "
                                          "2000",
                                          runs, points.size(), repeat)));
  }
  std::string script;
  if (plot_file) {
    script = plot_script();
    if (script.empty()) {
      return report_error(Error(Errc::invalid_argument,
                                "--plot: cannot find tools/plot/plot_sweep.py (set "
                                "TILEPIPE_PLOT_SWEEP to its path)"));
    }
  }

  // The machine: the file given, or a calibration for this sweep's tile shapes.
  model::Machine machine;
  if (!machine_path.empty()) {
    model::MachineCheck check{model::this_host(), "shm", std::nullopt};
    check.emulated_link = comm::to_string(*link);
    auto m = model::load_machine(machine_path, check);
    if (!m) return report_error(m.error());
    machine = *m;
  } else {
    runtime::CalibrateSpec spec = builtin_calibration(quiet);
    spec.link = *link;
    // Also the small heights the model's own choice may take (ADR 0031).
    auto probed = runtime::choice_probe_heights(*base, *height_list);
    if (!probed) return report_error(probed.error());
    auto shapes = runtime::plan_shapes(problem.kernel, *base, *probed);
    if (!shapes) return report_error(shapes.error());
    spec.shapes = *shapes;
    auto values = problem.param_values();
    if (!values) return report_error(values.error());
    auto entry = problem.kernel_entry();
    if (!entry) return report_error(entry.error());
    add_kernel_probe(spec, **entry, *values);
    spec.compute_ranks =
        static_cast<int>(std::clamp<std::int64_t>(base->nodes * base->cpus, 1, 16));
    spec.slab_points = std::min(
        spec.slab_points, std::max<std::int64_t>(1, base_plan->space().points() / base->nodes));
    auto m = runtime::calibrate(spec);
    if (!m) return report_error(m.error());
    machine = **m;
  }

  if (save_machine_file) {
    if (auto st = save_machine_file->write(model::machine_to_json(machine)); !st) {
      return report_error(st.error());
    }
  }

  // Predictions, and the model's own choice over every height and the swept schemes.
  model::ModelOptions mopt;
  mopt.kernel = problem.kernel;
  auto workload = problem.workload();  // sweeps and faces of sor and sweep3d
  if (!workload) return report_error(workload.error());
  mopt.workload = *workload;
  // The formula that follows the executor: fill and drain, and one hop per hand-over between
  // nodes (docs/model.md, "Two formulas"; kernels of several sweeps too, ADR 0034): a short run
  // has few steps, and the extra step per hand-over is a tenth of them.
  mopt.formula = model::Formula::executed;
  for (auto& pt : points) {
    plan::PlanRequest r = *base;
    r.tile_height = pt.height;
    r.schedule = pt.scheme.schedule;
    r.grouping = pt.scheme.grouping;
    if (auto_cyclic) {
      model::ChoiceRequest one;
      one.base = r;
      one.auto_cyclic = true;
      one.options = mopt;
      auto c = model::choose(one, machine);
      if (!c) return report_error(c.error());
      pt.prediction = c->prediction;
      pt.cyclic = cyclic_text(c->request.cyclic);
      continue;
    }
    auto plan = plan::Plan::make(r);
    if (!plan) return report_error(plan.error());
    auto pred = model::predict(*plan, machine, mopt);
    if (!pred) return report_error(pred.error());
    pt.prediction = *pred;
  }
  model::ChoiceRequest creq;
  creq.base = *base;
  creq.auto_tile = true;
  const bool both_schedules = std::any_of(schemes->begin(), schemes->end(), [&](const Scheme& s) {
    return s.schedule != schemes->front().schedule;
  });
  const bool both_groupings = std::any_of(schemes->begin(), schemes->end(), [&](const Scheme& s) {
    return s.grouping != schemes->front().grouping;
  });
  creq.auto_cyclic = auto_cyclic;
  creq.auto_schedule = both_schedules;
  creq.auto_grouping = both_groupings;
  creq.base.schedule = schemes->front().schedule;
  creq.base.grouping = schemes->front().grouping;
  creq.options = mopt;
  auto choice = model::choose(creq, machine);
  if (!choice) return report_error(choice.error());
  {
    const Scheme cs{choice->request.schedule, choice->request.grouping};
    auto it = std::find_if(points.begin(), points.end(), [&](const Point& p) {
      return p.height == choice->request.tile_height && p.scheme.schedule == cs.schedule &&
             p.scheme.grouping == cs.grouping &&
             (!auto_cyclic || p.cyclic == cyclic_text(choice->request.cyclic));
    });
    if (it != points.end()) {
      it->chosen = true;
    } else {
      points.push_back(Point{cs,
                             choice->request.tile_height,
                             true,
                             false,
                             choice->prediction,
                             auto_cyclic ? cyclic_text(choice->request.cyclic) : problem.cyclic,
                             {},
                             {}});
    }
  }

  // The runs: the repeats interleaved (every point once, then again), so that a change in the
  // machine's load touches every point alike.
  const std::string exe = self_exe();
  const int total = static_cast<int>(points.size()) * repeat;
  int done = 0;
  for (int rep = 0; rep < repeat; ++rep) {
    for (auto& pt : points) {
      if (!quiet) {
        draw_bar(
            "sweep", done, total,
            fmt::format("{} height {} (repeat {})", scheme_text(pt.scheme), pt.height, rep + 1),
            44);
      }
      std::vector<std::string> args{exe,          "run",
                                    "--kernel",   problem.kernel,
                                    "--size",     problem.size,
                                    "--nodes",    std::to_string(base->nodes),
                                    "--cpus",     std::to_string(base->cpus),
                                    "--cyclic",   pt.cyclic,
                                    "--tile",     std::to_string(pt.height),
                                    "--schedule", std::string(plan::to_string(pt.scheme.schedule)),
                                    "--grouping", std::string(plan::to_string(pt.scheme.grouping)),
                                    "--sync",     sync,
                                    "--json"};
      if (link->enabled) {
        args.emplace_back("--link");
        args.push_back(comm::to_string(*link));
      }
      for (const auto& path : problem.plugins) args.insert(args.end(), {"--plugin", path});
      for (const auto& param : problem.params) args.insert(args.end(), {"--param", param});
      std::string err;
      const auto r = run_child(args, &err);
      if (r.status != 0) {
        if (auto p = err.find('\n'); p != std::string::npos) err.resize(p);
        return report_error(
            Error(Errc::system, fmt::format("the run {} at tile height {} failed "
                                            "(exit {}): {}",
                                            scheme_text(pt.scheme), pt.height, r.status, err)));
      }
      try {
        const auto j = nlohmann::json::parse(r.out);
        pt.seconds.push_back(j.at("seconds").get<double>());
        std::int64_t tiles = 0;
        for (const auto& rk : j.at("ranks")) tiles += rk.at("tiles").get<std::int64_t>();
        const double compute = j.at("phases").at("compute_s").get<double>();
        pt.tile_s.push_back(tiles > 0 ? compute / static_cast<double>(tiles) : 0.0);
      } catch (const std::exception& e) {
        return report_error(Error(Errc::internal, std::string("unreadable output of tilepipe "
                                                              "run: ") +
                                                      e.what()));
      }
      ++done;
    }
  }
  if (!quiet) draw_bar("sweep", total, total, "done", 44);

  // Results.
  const Point* best = nullptr;
  const Point* chosen = nullptr;
  for (const auto& p : points) {
    if (p.chosen) chosen = &p;
    if (!best || median_of(p.seconds) < median_of(best->seconds)) best = &p;
  }
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  std::string csv =
      "schedule,grouping,tile_height,measured_s,measured_min_s,measured_max_s,predicted_s,"
      "error,tile_work_s,measured_tile_s,steps,chosen,swept\n";
  for (const auto& p : points) {
    const double m = median_of(p.seconds);
    const double pred = p.prediction.total.count();
    nlohmann::ordered_json o;
    o["schedule"] = std::string(plan::to_string(p.scheme.schedule));
    o["grouping"] = std::string(plan::to_string(p.scheme.grouping));
    o["tile_height"] = p.height;
    o["cyclic"] = p.cyclic;
    o["measured_s"] = m;
    o["measured_min_s"] = *std::min_element(p.seconds.begin(), p.seconds.end());
    o["measured_max_s"] = *std::max_element(p.seconds.begin(), p.seconds.end());
    o["predicted_s"] = pred;
    o["error"] = m > 0 ? (pred - m) / m : 0.0;
    o["tile_work_s"] = p.prediction.step.alpha.count();
    o["measured_tile_s"] = median_of(p.tile_s);
    o["steps"] = p.prediction.steps;
    o["repeats"] = p.seconds.size();
    o["chosen"] = p.chosen;
    o["swept"] = p.swept;
    csv += fmt::format("{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.6g},{:.9g},{:.9g},{},{},{}\n",
                       o["schedule"].get<std::string>(), o["grouping"].get<std::string>(), p.height,
                       m, o["measured_min_s"].get<double>(), o["measured_max_s"].get<double>(),
                       pred, o["error"].get<double>(), o["tile_work_s"].get<double>(),
                       o["measured_tile_s"].get<double>(), p.prediction.steps, p.chosen ? 1 : 0,
                       p.swept ? 1 : 0);
    array.push_back(o);
  }
  if (json) {
    nlohmann::ordered_json j = json_preamble("sweep");
    j["kernel"] = problem.kernel;
    j["size"] = problem.size;
    j["nodes"] = base->nodes;
    j["cpus"] = base->cpus;
    j["machine"] = machine.name;
    j["repeat"] = repeat;
    j["results"] = array;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("tilepipe sweep: {} {} on {} node(s) x {} CPU(s), machine {}, {} run(s) per point\n",
               problem.kernel, problem.size, base->nodes, base->cpus, machine.name, repeat);
    fmt::print("  {:<22} {:>8} {:>12} {:>21} {:>12} {:>8}\n", "scheme", "height", "measured s",
               "(min-max)", "predicted s", "error");
    for (const auto& o : array) {
      fmt::print("  {:<22} {:>8} {:>12.6f} ({:.6f}-{:.6f}) {:>12.6f} {:>+7.1f}%{}\n",
                 o["schedule"].get<std::string>() + "+" + o["grouping"].get<std::string>(),
                 o["tile_height"].get<std::int64_t>(), o["measured_s"].get<double>(),
                 o["measured_min_s"].get<double>(), o["measured_max_s"].get<double>(),
                 o["predicted_s"].get<double>(), 100 * o["error"].get<double>(),
                 (auto_cyclic ? "  cyclic " + o["cyclic"].get<std::string>() : std::string()) +
                     (o["chosen"].get<bool>() ? "  <- model's choice" : ""));
    }
    if (chosen && best) {
      const double c = median_of(chosen->seconds);
      const double b = median_of(best->seconds);
      fmt::print(
          "  model's choice: {} at tile height {}: measured {:.6f} s; best measured {} at "
          "{}: {:.6f} s ({:+.1f}%)\n",
          scheme_text(chosen->scheme), chosen->height, c, scheme_text(best->scheme), best->height,
          b, b > 0 ? 100 * (c / b - 1) : 0.0);
      fmt::print("  why: {}\n", choice->reason);
    }
    {
      const auto& c = machine.compute_for(problem.kernel);
      fmt::print(
          "  machine: t_comp1 {:.3g}-{:.3g} ns by tile size, t_start {:.3g} us, t_sync "
          "{:.3g} us, link {:.3g} us + bytes / {:.3g} GB/s, t_sync_in {:.3g} us\n",
          (c.samples.empty() ? c.t_comp1 : c.samples.front().t_comp1).count() * 1e9,
          (c.samples.empty() ? c.t_comp1 : c.samples.back().t_comp1).count() * 1e9,
          machine.t_start.count() * 1e6, machine.t_sync.count() * 1e6,
          machine.link.latency.count() * 1e6, machine.link.bandwidth_bytes_per_s / 1e9,
          machine.t_sync_in.count() * 1e6);
    }
  }
  if (csv_file) {
    if (auto st = csv_file->write(csv); !st) return report_error(st.error());
  }
  if (plot_file) {
    if (auto st = draw_plot(*plot_file, script, csv,
                            fmt::format("{} {}, {} node(s) x {} CPU(s), {}", problem.kernel,
                                        problem.size, base->nodes, base->cpus, machine.name));
        !st) {
      return report_error(st.error());
    }
    if (!quiet) fmt::print(stderr, "sweep: wrote {}\n", plot_path);
  }
  return exit_ok;
}

const CommandRegistration sweep_registration{
    {"sweep", "run every scheme x tile height; measured vs predicted time, CSV/JSON/plot",
     &run_sweep}};

}  // namespace
}  // namespace tp::app
