// `tilepipe align`: Smith-Waterman local alignment (affine gaps) of two FASTA sequences.
#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/kernels/fasta.hpp>
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/runtime/run.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

#include "comm_options.hpp"
#include "command.hpp"

namespace tp::app {
namespace {

struct AlignOptions {
  std::string query_path;
  std::string target_path;
  std::string matrix = "blosum62";
  int gap_open = 10;
  int gap_extend = 1;
  int cpus = 1;
  std::string tile;
  int nodes = 1;
  std::string schedule = "overlap";
  std::string grouping = "hyperplane";
  std::string subtiles = "auto";
  CommFlags comm;
  bool nodes_given = false;
  std::string simd = "auto";
  int simd_bits = 8;
  bool json = false;
};

struct AlignOutput {
  kernels::SwResult best;
  std::int64_t query_length = 0;
  std::int64_t target_length = 0;
  double seconds = 0;
  std::string grouping;  ///< set by the pipelined executor (with `subtiles`)
  int subtiles = 0;
  std::string simd;             ///< the tile function's ISA
  std::int64_t idle_nodes = 0;  ///< pipelined executor: ranks and CPUs without a row of tiles
  std::int64_t idle_cpus = 0;
};

Expected<std::vector<std::uint8_t>> read_one(const std::string& path,
                                             const kernels::ScoreMatrix& matrix) {
  auto records = kernels::read_fasta(path);
  if (!records) return Unexpected{records.error()};
  if (records->size() != 1) {
    return fail(Errc::invalid_argument,
                fmt::format("{}: {} sequences; tilepipe align takes one sequence per file", path,
                            records->size()));
  }
  const auto& r = records->front();
  return matrix.encode(r.residues, fmt::format("{} sequence '{}'", path, r.name));
}

struct Inputs {
  kernels::ScoreMatrix matrix;
  std::vector<std::uint8_t> query;
  std::vector<std::uint8_t> target;
  kernels::SwOptions sw;
};

Expected<kernels::SwKernel> make_kernel(const AlignOptions& o, const Inputs& in) {
  return kernels::SwKernel::make(in.matrix, in.query, in.target, {o.gap_open, o.gap_extend}, in.sw);
}

Expected<Inputs> load_inputs(const AlignOptions& o) {
  auto matrix = kernels::ScoreMatrix::by_name_or_file(o.matrix);
  if (!matrix) return Unexpected{matrix.error()};
  auto query = read_one(o.query_path, *matrix);
  if (!query) return Unexpected{query.error()};
  auto target = read_one(o.target_path, *matrix);
  if (!target) return Unexpected{target.error()};
  kernels::SwOptions sw;
  if (o.simd != "auto") {
    auto isa = kernels::parse_sw_isa(o.simd);
    if (!isa) return Unexpected{Error(Errc::invalid_argument, "--simd: " + isa.error().message)};
    sw.isa = *isa;
  }
  sw.min_bits = o.simd_bits;
  return Inputs{std::move(*matrix), std::move(*query), std::move(*target), sw};
}

Expected<AlignOutput> align(const AlignOptions& o, const Inputs& in) {
  const auto* query = &in.query;
  const auto* target = &in.target;
  // Default: one row of tiles per thread (each thread keeps its query rows), tiles narrow enough
  // along the target that the wavefront's start and end leave few threads idle.
  const std::string default_tile = fmt::format(
      "{}x{}",
      (query->size() + static_cast<std::size_t>(o.cpus) - 1) / static_cast<std::size_t>(o.cpus),
      o.cpus == 1 ? 8192 : 2048);
  auto tile = parse_extents(o.tile.empty() ? default_tile : o.tile, "--tile");
  if (!tile) return Unexpected{tile.error()};
  if (tile->size() != 2) {
    return fail(Errc::invalid_argument,
                fmt::format("--tile: '{}' has {} dimensions, expected 2 (QUERYxTARGET)", o.tile,
                            tile->size()));
  }
  auto kernel = make_kernel(o, in);
  if (!kernel) return Unexpected{kernel.error()};
  auto tiling = exec::RectTiling<2>::make(kernel->space(), {(*tile)[0], (*tile)[1]});
  if (!tiling) return Unexpected{tiling.error()};
  const auto start = std::chrono::steady_clock::now();
  auto best = exec::run_local(*kernel, *tiling, o.cpus);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (!best) return Unexpected{best.error()};
  return AlignOutput{*best,
                     static_cast<std::int64_t>(query->size()),
                     static_cast<std::int64_t>(target->size()),
                     elapsed.count(),
                     "",
                     0,
                     std::string(kernels::to_string(kernel->isa()))};
}

void print_result(const AlignOptions& o, const AlignOutput& out) {
  const double cells =
      static_cast<double>(out.query_length) * static_cast<double>(out.target_length);
  const double gcups = out.seconds > 0 ? cells / out.seconds / 1e9 : 0.0;
  if (o.json) {
    nlohmann::ordered_json j = json_preamble("align");
    j.update(nlohmann::ordered_json{{"score", out.best.score},
                                    {"end_query", out.best.end_query},
                                    {"end_target", out.best.end_target},
                                    {"query_length", out.query_length},
                                    {"target_length", out.target_length},
                                    {"nodes", o.nodes},
                                    {"cpus", o.cpus},
                                    {"seconds", out.seconds},
                                    {"gcups", gcups},
                                    {"simd", out.simd}});
    if (!out.grouping.empty()) {
      j["grouping"] = out.grouping;
      j["subtiles"] = out.subtiles;
      j["idle_nodes"] = out.idle_nodes;
      j["idle_cpus"] = out.idle_cpus;
    }
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("score: {}\nend_query: {}\nend_target: {}\n", out.best.score, out.best.end_query,
               out.best.end_target);
    fmt::print("cells: {} x {}\nseconds: {:.6f}\ngcups: {:.3f}\nsimd: {}\n", out.query_length,
               out.target_length, out.seconds, gcups, out.simd);
    if (!out.grouping.empty()) {
      fmt::print("grouping: {}{}\n", out.grouping,
                 out.grouping == "vertical" ? fmt::format(" ({} subtiles)", out.subtiles) : "");
    }
    if (out.idle_cpus > 0) {
      fmt::print("idle: {} nodes and {} CPUs have no row of tiles and run none\n", out.idle_nodes,
                 out.idle_cpus);
    }
  }
}

// Ranks x threads through the frontier pipeline: at most one row of tiles per CPU along the query
// (a short query leaves CPUs and ranks idle), tiles `--tile` high along the target (or QxT with at
// most nodes x cpus rows).
int align_on_ranks(const AlignOptions& o, const Inputs& in) {
  auto kernel = make_kernel(o, in);
  if (!kernel) return report_error(kernel.error());
  runtime::RunOptions run;
  run.nodes = o.nodes_given || !comm::World::launched_by_mpi() ? o.nodes : 0;
  run.cpus = o.cpus;
  run.map_dim = 2;
  const std::string tile = o.tile.empty() ? std::string("2048") : o.tile;
  if (tile.find('x') == std::string::npos) {
    auto h = parse_int(tile, "--tile", 1);
    if (!h) return report_error(h.error());
    run.tile_height = *h;
  } else {
    auto w = parse_extents(tile, "--tile");
    if (!w) return report_error(w.error());
    run.tile_extents = *w;
  }
  if (o.schedule == "blocking" || o.schedule == "overlap") {
    run.schedule =
        o.schedule == "blocking" ? plan::ScheduleKind::blocking : plan::ScheduleKind::overlap;
  } else {
    return report_error(
        Error(Errc::invalid_argument,
              "--schedule: unknown schedule '" + o.schedule + "' (choose blocking|overlap)"));
  }
  run.grouping =
      o.grouping == "vertical" ? plan::GroupingKind::vertical : plan::GroupingKind::hyperplane;
  if (o.subtiles != "auto") run.subtiles = static_cast<int>(*parse_int(o.subtiles, "", 1));
  auto config = apply_comm_flags(o.comm);
  if (!config) return report_error(config.error());
  run.comm = *config;
  const plan::Index size{static_cast<std::int64_t>(in.query.size()),
                         static_cast<std::int64_t>(in.target.size())};
  std::fflush(stdout);  // forked ranks must not repeat buffered output
  auto total = runtime::run(*kernel, size, run);
  if (!total) return report_error(total.error());
  if (!total->root) return exit_ok;
  AlignOptions shown = o;  // what ran: under MPI the job's ranks
  shown.nodes = static_cast<int>(total->planned.plan.nodes());
  const plan::Plan& planned = total->planned.plan;
  print_result(shown,
               AlignOutput{total->result, size[0], size[1], total->summary.wall_s(),
                           std::string(plan::to_string(planned.schedule().grouping().kind())),
                           total->summary.ranks.front().subtiles,
                           std::string(kernels::to_string(kernel->isa())), planned.idle_nodes(),
                           planned.idle_cpus()});
  return exit_ok;
}

int run_align(int argc, char** argv) {
  CLI::App app{"Smith-Waterman local alignment with affine gaps (score and end positions)",
               "tilepipe align"};
  AlignOptions o;
  app.add_option("QUERY", o.query_path, "query FASTA file (one sequence)")->required();
  app.add_option("TARGET", o.target_path, "target FASTA file (one sequence)")->required();
  app.add_option("--matrix", o.matrix, "blosum62, ednafull or an EMBOSS matrix file")
      ->capture_default_str();
  app.add_option("--gap-open", o.gap_open, "cost of a gap's first position")
      ->check(CLI::Range(0, kernels::ScoreMatrix::max_entry))
      ->capture_default_str();
  app.add_option("--gap-extend", o.gap_extend, "cost of each further gap position")
      ->check(CLI::Range(0, kernels::ScoreMatrix::max_entry))
      ->capture_default_str();
  app.add_option("--cpus", o.cpus, "threads per rank")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--tile", o.tile,
                 "tile extents QUERYxTARGET (one process: default ceil(query/cpus)x8192 on "
                 "1 CPU, x2048 on more), or with --nodes the tile height along the target "
                 "(default 2048)");
  app.add_option("--nodes", o.nodes,
                 "ranks: more than 1 runs the pipelined executor (docs/executor.md)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--schedule", o.schedule, "with --nodes: blocking|overlap")->capture_default_str();
  app.add_option("--grouping", o.grouping, "with --nodes: hyperplane|vertical")
      ->capture_default_str();
  app.add_option("--subtiles", o.subtiles,
                 "with --nodes and vertical grouping: subtiles per tile N, or auto")
      ->capture_default_str();
  add_comm_options(app, o.comm, "with --nodes: ", false);
  app.add_option("--simd", o.simd,
                 "tile function: auto (the best the CPU runs), avx2, sse41 or scalar")
      ->capture_default_str();
  app.add_option("--simd-bits", o.simd_bits,
                 "narrowest SIMD lanes tried first: 8, 16 or 32 bits (a band that overflows "
                 "is redone in wider lanes)")
      ->check(CLI::IsMember({8, 16, 32}))
      ->capture_default_str();
  app.add_flag("--json", o.json, "print one JSON object");
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;
  o.nodes_given = app.count("--nodes") > 0;

  if (o.grouping != "hyperplane" && o.grouping != "vertical") {
    return report_error(
        Error(Errc::invalid_argument,
              "--grouping: unknown grouping '" + o.grouping + "' (choose hyperplane|vertical)"));
  }
  if (o.subtiles != "auto") {
    if (auto s = parse_int(o.subtiles, "--subtiles", 1, 1 << 20); !s)
      return report_error(s.error());
  }
  // The communication flags are checked on every path, one process too (the same rules and
  // messages as run and pingpong).
  if (auto c = apply_comm_flags(o.comm); !c) return report_error(c.error());
  auto in = load_inputs(o);
  if (!in) return report_error(in.error());
  // Vertical grouping is the pipelined executor's, on one rank too.
  if (o.nodes > 1 || o.grouping == "vertical" || comm::World::launched_by_mpi()) {
    return align_on_ranks(o, *in);
  }
  auto out = align(o, *in);
  if (!out) return report_error(out.error());
  print_result(o, *out);
  return exit_ok;
}

const CommandRegistration registration{
    Command{"align", "Smith-Waterman local alignment score of two FASTA sequences", run_align}};

}  // namespace
}  // namespace tp::app
