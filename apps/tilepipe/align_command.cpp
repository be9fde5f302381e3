// `tilepipe align`: Smith-Waterman local alignment (affine gaps) of two FASTA sequences.
#include <tilepipe/comm/world.hpp>
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/kernels/fasta.hpp>
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/sw_align.hpp>
#include <tilepipe/kernels/sw_search.hpp>
#include <tilepipe/model/machine_file.hpp>
#include <tilepipe/runtime/ranks.hpp>
#include <tilepipe/runtime/run.hpp>
#include <tilepipe/support/output_file.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>

#include <unistd.h>

#include "align_formats.hpp"
#include "align_search.hpp"
#include "comm_options.hpp"
#include "command.hpp"
#include "parse_cli.hpp"
#include "progress_line.hpp"

namespace tp::app {
namespace {

struct AlignOptions {
  std::string query_path;
  std::string target_path;
  std::string matrix = "blosum62";
  double gap_open = 10;
  double gap_extend = 1;
  int cpus = 1;
  std::string tile;
  int nodes = 1;
  std::string schedule = "overlap";
  std::string grouping = "hyperplane";
  std::string subtiles = "auto";
  std::string cyclic = "1";  ///< --cyclic K: rows of tiles per CPU (block-cyclic, ADR 0018)
  CommFlags comm;
  bool nodes_given = false;
  std::string simd = "auto";
  int simd_bits = 8;
  bool json = false;
  bool score_only = false;
  bool progress = false;
  std::string format = "text";
  std::string top;  ///< empty: not given
  std::string output;
  std::string machine;  ///< --machine FILE: --tile auto's cost model
  std::int64_t tiled_cells = kernels::SwSearchOptions::default_tiled_cells;
};

struct AlignOutput {
  kernels::SwResult best;
  std::int64_t query_length = 0;
  std::int64_t target_length = 0;
  double seconds = 0;
  std::string grouping;  ///< set by the pipelined executor (with `subtiles`)
  int subtiles = 0;
  std::string simd;                               ///< the tile function's ISA
  std::optional<kernels::SwAlignment> alignment;  ///< unset with --score-only
  double traceback_seconds = 0;
  std::int64_t idle_nodes = 0;  ///< pipelined executor: ranks and CPUs without a row of tiles
  std::int64_t idle_cpus = 0;
  std::vector<std::int64_t> tile{};     ///< pipelined executor: the tile's extents
  std::optional<double> predicted_s{};  ///< --tile auto: the cost model's time of the run
  std::vector<std::int64_t> cyclic{};   ///< pipelined executor: the plan's cyclic factors
};

// Every record of a FASTA file, encoded; a letter outside the matrix names the file, the record
// and the position. A record without a name is named as EMBOSS names it: EMBOSS_001, EMBOSS_002,
// ... in reading order over both files (`unnamed` counts them).
Expected<std::vector<AlignSequence>> read_all(const std::string& path,
                                              const kernels::ScoreMatrix& matrix, int& unnamed) {
  auto records = kernels::read_fasta(path);
  if (!records) return Unexpected{records.error()};
  std::vector<AlignSequence> out;
  out.reserve(records->size());
  for (auto& r : *records) {
    if (r.name.empty()) r.name = fmt::format("EMBOSS_{:03}", ++unnamed);
    auto codes = matrix.encode(r.residues, fmt::format("{} sequence '{}'", path, r.name));
    if (!codes) return Unexpected{codes.error()};
    out.push_back(AlignSequence{std::move(r.name), std::move(r.letters), std::move(*codes)});
  }
  return out;
}

struct Inputs {
  kernels::ScoreMatrix matrix;  ///< scaled by `scale`
  std::vector<AlignSequence> queries;
  std::vector<AlignSequence> targets;
  AlignSequence query;   ///< one pair: the only query (moved from queries)
  AlignSequence target;  ///< one pair: the only target
  kernels::SwOptions sw;
  int scale = 1;           ///< scores in units of 1 / scale (fractional gap penalties)
  kernels::GapCosts gaps;  ///< scaled
};

// progress: where the kernel counts its cells (nullptr: nowhere).
Expected<kernels::SwKernel> make_kernel(const Inputs& in,
                                        std::atomic<std::int64_t>* progress = nullptr) {
  kernels::SwOptions sw = in.sw;
  sw.progress = progress;
  return kernels::SwKernel::make(in.matrix, in.query.codes, in.target.codes, in.gaps, sw);
}

Expected<Inputs> load_inputs(const AlignOptions& o) {
  auto scale = kernels::gap_scale(o.gap_open, o.gap_extend);
  if (!scale) return Unexpected{scale.error()};
  auto matrix = kernels::ScoreMatrix::by_name_or_file(o.matrix);
  if (!matrix) return Unexpected{matrix.error()};
  if (*scale > 1) {
    if (std::max(o.gap_open, o.gap_extend) * *scale > kernels::ScoreMatrix::max_entry) {
      return fail(Errc::invalid_argument,
                  fmt::format("gap penalties {} and {} are scored in steps of 1/{}: above {} "
                              "there (use coarser fractions)",
                              o.gap_open, o.gap_extend, *scale, kernels::ScoreMatrix::max_entry));
    }
    matrix = matrix->scaled(*scale);
    if (!matrix) return Unexpected{matrix.error()};
  }
  int unnamed = 0;
  auto query = read_all(o.query_path, *matrix, unnamed);
  if (!query) return Unexpected{query.error()};
  auto target = read_all(o.target_path, *matrix, unnamed);
  if (!target) return Unexpected{target.error()};
  kernels::SwOptions sw;
  if (o.simd != "auto") {
    auto isa = kernels::parse_sw_isa(o.simd);
    if (!isa) return Unexpected{Error(Errc::invalid_argument, "--simd: " + isa.error().message)};
    if (!kernels::sw_isa_supported(*isa)) {  // checked here too: an empty pair makes no kernel
      return fail(Errc::invalid_argument,
                  fmt::format("--simd: this build or CPU cannot run the {} tile function", o.simd));
    }
    sw.isa = *isa;
  }
  sw.min_bits = o.simd_bits;
  const kernels::GapCosts gaps{static_cast<int>(std::lround(o.gap_open * *scale)),
                               static_cast<int>(std::lround(o.gap_extend * *scale))};
  return Inputs{
      std::move(*matrix), std::move(*query), std::move(*target), {}, {}, sw, *scale, gaps};
}

// The traceback after the score pass (not with --score-only): one optimal alignment ending at the
// reported end, on this process's --cpus threads.
// Its progress: the reverse pass over [1, end] and Myers-Miller's half passes, at most twice the
// box [start, end] (estimated as [1, end]).
Status add_alignment(const AlignOptions& o, const Inputs& in, AlignOutput& out,
                     ProgressLine& progress) {
  if (o.score_only) return {};
  const auto start = std::chrono::steady_clock::now();
  kernels::SwOptions sw = in.sw;
  sw.progress = progress.counter();
  progress.start("traceback", 3 * out.best.end_query * out.best.end_target);
  auto a = kernels::sw_traceback(in.matrix, in.query.codes, in.target.codes, in.gaps, out.best,
                                 {o.cpus, sw});
  if (a) progress.finish();
  if (!a) return Unexpected{a.error()};
  out.traceback_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.alignment = std::move(*a);
  return {};
}

// The result of a pair with an empty sequence: nothing ran, so every node and CPU was idle.
AlignOutput empty_pair(const AlignOptions& o, const Inputs& in) {
  AlignOutput out;
  out.query_length = static_cast<std::int64_t>(in.query.codes.size());
  out.target_length = static_cast<std::int64_t>(in.target.codes.size());
  out.simd = std::string(kernels::to_string(in.sw.isa.value_or(kernels::best_sw_isa())));
  if (!o.score_only) out.alignment = kernels::SwAlignment{};
  out.idle_nodes = o.nodes;
  out.idle_cpus = std::int64_t{o.nodes} * o.cpus;
  return out;
}

Expected<AlignOutput> align(const AlignOptions& o, const Inputs& in, ProgressLine& progress) {
  const auto* query = &in.query.codes;
  const auto* target = &in.target.codes;
  // Default: kernels::sw_default_tile (one row of tiles per thread, pipelined: exec::run_local
  // takes them in order, a tile waits only for the one above).
  const auto qlen = static_cast<std::int64_t>(query->size());
  const auto tlen = static_cast<std::int64_t>(target->size());
  // (Of a space of at least one cell: an empty one only checks the flags, below.)
  const auto extents = kernels::sw_default_tile(std::max<std::int64_t>(qlen, 1),
                                                std::max<std::int64_t>(tlen, 1), o.cpus);
  const std::string default_tile = fmt::format("{}x{}", extents[0], extents[1]);
  auto tile = parse_extents(o.tile.empty() ? default_tile : o.tile, "--tile");
  if (!tile) return Unexpected{tile.error()};
  if (tile->size() != 2) {
    return fail(Errc::invalid_argument,
                fmt::format("--tile: '{}' has {} dimensions, expected 2 (QUERYxTARGET)", o.tile,
                            tile->size()));
  }
  // A sequence of length 0 has no cell to compute: score 0 and an empty alignment at once.
  if (qlen == 0 || tlen == 0) return empty_pair(o, in);
  auto kernel = make_kernel(in, progress.counter());
  if (!kernel) return Unexpected{kernel.error()};
  auto tiling = exec::RectTiling<2>::make(kernel->space(), {(*tile)[0], (*tile)[1]});
  if (!tiling) return Unexpected{tiling.error()};
  progress.start("score pass", qlen * tlen);
  const auto start = std::chrono::steady_clock::now();
  auto best = exec::run_local(*kernel, *tiling, o.cpus);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (!best) return Unexpected{best.error()};
  progress.finish();
  AlignOutput out{*best,
                  static_cast<std::int64_t>(query->size()),
                  static_cast<std::int64_t>(target->size()),
                  elapsed.count(),
                  "",
                  0,
                  std::string(kernels::to_string(kernel->isa())),
                  std::nullopt,
                  0};
  if (auto a = add_alignment(o, in, out, progress); !a) return Unexpected{a.error()};
  return out;
}

std::string result_text(const AlignOptions& o, const Inputs& in, const AlignOutput& out) {
  std::optional<AlignShown> shown;
  if (out.alignment) {
    shown.emplace(AlignShown{
        in.query, in.target, in.matrix, o.gap_open, o.gap_extend, in.scale, *out.alignment,
        kernels::alignment_stats(in.matrix, in.query.codes, in.target.codes, *out.alignment)});
  }
  if (o.format == "pair") return format_pair(*shown);
  if (o.format == "sam") return format_sam(*shown);
  if (o.format == "blast") return format_blast(*shown);
  const double cells =
      static_cast<double>(out.query_length) * static_cast<double>(out.target_length);
  const double gcups = out.seconds > 0 ? cells / out.seconds / 1e9 : 0.0;
  std::string text;
  if (o.json) {
    nlohmann::ordered_json j = json_preamble("align");
    const nlohmann::ordered_json score =
        in.scale == 1 ? nlohmann::ordered_json(out.best.score)
                      : nlohmann::ordered_json(static_cast<double>(out.best.score) / in.scale);
    j.update(nlohmann::ordered_json{{"score", score},
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
      j["tile"] = out.tile;
      j["cyclic"] = out.cyclic;
      j["chosen_by"] = out.predicted_s ? "model" : "default";
      if (out.predicted_s) j["predicted_s"] = *out.predicted_s;
    }
    j["query_name"] = in.query.name;
    j["target_name"] = in.target.name;
    if (shown) {
      j.update(alignment_json(shown->alignment, shown->stats));
      j["traceback_seconds"] = out.traceback_seconds;
    }
    text = j.dump() + "\n";
  } else {
    text +=
        fmt::format("score: {}\nend_query: {}\nend_target: {}\n",
                    score_text(out.best.score, in.scale), out.best.end_query, out.best.end_target);
    text += fmt::format("cells: {} x {}\nseconds: {:.6f}\ngcups: {:.3f}\nsimd: {}\n",
                        out.query_length, out.target_length, out.seconds, gcups, out.simd);
    if (!out.grouping.empty()) {
      text += fmt::format(
          "grouping: {}{}\n", out.grouping,
          out.grouping == "vertical" ? fmt::format(" ({} subtiles)", out.subtiles) : "");
      text += fmt::format("tile: {}\n", fmt::join(out.tile, "x"));
      if (std::any_of(out.cyclic.begin(), out.cyclic.end(), [](auto c) { return c > 1; })) {
        text += fmt::format("cyclic: {} (rows of tiles per CPU, block-cyclic)\n",
                            fmt::join(out.cyclic, "x"));
      }
      if (out.predicted_s) text += fmt::format("predicted: {:.6f} s\n", *out.predicted_s);
    }
    if (shown) {
      const auto& a = shown->alignment;
      const auto& s = shown->stats;
      text += fmt::format("query: {} {}-{}\ntarget: {} {}-{}\ncigar: {}\n", in.query.name,
                          a.query_start, a.query_end, in.target.name, a.target_start, a.target_end,
                          kernels::cigar(a));
      text += fmt::format("length: {}\nidentity: {}\nsimilarity: {}\ngaps: {}\n", s.length,
                          s.identity, s.similarity, s.gaps);
      text += fmt::format("traceback_seconds: {:.6f}\n", out.traceback_seconds);
    }
    if (out.idle_cpus > 0) {
      text += fmt::format("idle: {} nodes and {} CPUs have no row of tiles and run none\n",
                          out.idle_nodes, out.idle_cpus);
    }
  }
  return text;
}

// Ranks x threads through the frontier pipeline: at most one row of tiles per CPU along the query
// (a short query leaves CPUs and ranks idle), tiles `--tile` high along the target (or QxT with at
// most nodes x cpus rows).
int align_on_ranks(const AlignOptions& o, const Inputs& in, std::optional<OutputFile>& output) {
  // Forked ranks raise the display's shared counter; its thread starts once they all run (none
  // may exist when they fork). Under MPI each rank counts only its own cells: no score pass shown.
  ProgressLine progress("aligning", o.progress || ::isatty(STDERR_FILENO) == 1);
  runtime::RunOptions run;
  run.last_words = &print_last_words;
  run.nodes = o.nodes_given || !comm::World::launched_by_mpi() ? o.nodes : 0;
  run.cpus = o.cpus;
  run.map_dim = 2;
  // Default: tiles as wide along the target as kernels::sw_default_tile makes them for all the
  // run's CPUs (2048 under mpirun without --nodes, where the job's size is not known here).
  const std::int64_t workers = run.nodes > 0 ? std::int64_t{run.nodes} * o.cpus : 0;
  const std::string tile =
      !o.tile.empty() ? o.tile
      : workers > 0
          ? std::to_string(kernels::sw_default_tile(
                std::max<std::int64_t>(static_cast<std::int64_t>(in.query.codes.size()), 1),
                std::max<std::int64_t>(static_cast<std::int64_t>(in.target.codes.size()), 1),
                static_cast<int>(workers))[1])
          : std::string("2048");
  // "auto": neither is set, the cost model chooses the height (the machine is loaded below).
  const bool auto_tile = tile == "auto";
  if (tile.find('x') != std::string::npos) {  // QxT
    auto w = parse_extents(tile, "--tile");
    if (!w) return report_error(w.error());
    run.tile_extents = *w;
  } else if (!auto_tile) {  // the height
    auto h = parse_int(tile, "--tile", 1);
    if (!h) return report_error(h.error());
    run.tile_height = *h;
  }
  run.schedule =  // checked in run_align
      o.schedule == "blocking" ? plan::ScheduleKind::blocking : plan::ScheduleKind::overlap;
  run.grouping =
      o.grouping == "vertical" ? plan::GroupingKind::vertical : plan::GroupingKind::hyperplane;
  if (o.subtiles != "auto") run.subtiles = static_cast<int>(*parse_int(o.subtiles, "", 1));
  // "auto": the cost model chooses the factor (with the machine loaded below).
  const bool auto_cyclic = o.cyclic == "auto";
  if (auto_cyclic) {
    run.auto_cyclic = true;
  } else {
    auto cyclic = parse_extents(o.cyclic, "--cyclic");
    if (!cyclic) return report_error(cyclic.error());
    run.cyclic = *cyclic;
  }
  auto config = apply_comm_flags(o.comm);
  if (!config) return report_error(config.error());
  run.comm = *config;
  if (auto_tile || auto_cyclic) {
    // The machine file's sw cost (tilepipe calibrate --kernel sw), measured on this host over
    // this transport and link; the schedule and grouping stay as given.
    model::MachineCheck check{model::this_host(),
                              config->transport == comm::TransportKind::mpi ? "mpi" : "shm",
                              comm::to_string(config->link)};
    auto m = model::load_machine(o.machine, check);
    if (!m) return report_error(m.error());
    run.machine = *m;
    run.kernel_name = "sw";
  }
  // A sequence of length 0 has no cell to compute on any number of ranks: score 0 and an empty
  // alignment at once, every CPU idle (under mpirun, rank 0 reports).
  if (in.query.codes.empty() || in.target.codes.empty()) {
    const bool mpi = comm::World::launched_by_mpi();
    if (mpi && runtime::mpi_job_rank() > 0) return exit_ok;
    AlignOptions shown = o;
    if (mpi && !o.nodes_given) shown.nodes = static_cast<int>(runtime::mpi_job_size());
    return emit(result_text(shown, in, empty_pair(shown, in)), output);
  }
  auto kernel = make_kernel(in, progress.counter());
  if (!kernel) return report_error(kernel.error());
  const plan::Index size{static_cast<std::int64_t>(in.query.codes.size()),
                         static_cast<std::int64_t>(in.target.codes.size())};
  run.ranks_started = [&progress, &size] { progress.start("score pass", size[0] * size[1]); };
  std::fflush(stdout);  // forked ranks must not repeat buffered output
  auto total = runtime::run(*kernel, size, run);
  if (!total) return report_error(total.error());
  progress.finish();
  if (!total->root) return exit_ok;
  AlignOptions shown = o;  // what ran: under MPI the job's ranks
  shown.nodes = static_cast<int>(total->planned.plan.nodes());
  AlignOutput out{total->result,
                  size[0],
                  size[1],
                  total->summary.wall_s(),
                  std::string(plan::to_string(total->planned.plan.schedule().grouping().kind())),
                  total->summary.ranks.front().subtiles,
                  std::string(kernels::to_string(kernel->isa())),
                  std::nullopt,
                  0,
                  total->planned.plan.idle_nodes(),
                  total->planned.plan.idle_cpus(),
                  total->planned.plan.tiling().tile_extents(),
                  std::nullopt};
  if (total->planned.choice) out.predicted_s = total->planned.choice->prediction.total.count();
  out.cyclic = total->planned.plan.cyclic();
  // The traceback runs here, on the root's threads.
  if (auto a = add_alignment(o, in, out, progress); !a) return report_error(a.error());
  return emit(result_text(shown, in, out), output);
}

// A gap penalty: a number in [0, max_entry], named as CLI11's integer ranges name theirs.
const CLI::Validator penalty_range(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (!text.empty() && end == text.c_str() + text.size() && v >= 0 &&
          v <= kernels::ScoreMatrix::max_entry) {
        return "";
      }
      return fmt::format("Value {} not in range 0 to {}", text, kernels::ScoreMatrix::max_entry);
    },
    "[0 - 10000]");

int run_align(int argc, char** argv) {
  CLI::App app{"Smith-Waterman local alignment with affine gaps (score, positions, alignment)",
               "tilepipe align"};
  AlignOptions o;
  app.add_option("QUERY", o.query_path,
                 "query FASTA file (one record, or several with --top; - for standard input; gzip "
                 "read as such)")
      ->required();
  app.add_option("TARGET", o.target_path,
                 "target FASTA file: one record, or a database of several (- as for QUERY)")
      ->required();
  app.add_option("--matrix", o.matrix,
                 "blosum62, ednafull, an EMBOSS matrix by name (EBLOSUM50, EPAM250: from "
                 "$EMBOSS_DATA or /usr/share/EMBOSS/data) or an EMBOSS-format matrix file")
      ->capture_default_str();
  app.add_option("--gap-open", o.gap_open,
                 "cost of a gap's first position (fractions as water takes them: 10.5)")
      ->check(penalty_range)
      ->capture_default_str();
  app.add_option("--gap-extend", o.gap_extend,
                 "cost of each further gap position (water's DNA default is 0.5)")
      ->check(penalty_range)
      ->capture_default_str();
  app.add_option("--cpus", o.cpus, "threads per rank")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option(
      "--tile", o.tile,
      "tile extents QUERYxTARGET (one process: default queryx8192 on 1 CPU; on more, "
      "one row of tiles per CPU, target / (16 CPUs) wide within 256-2048), or with --nodes "
      "the tile height along the target (default target / (16 nodes x CPUs) within "
      "256-2048)");
  app.add_option("--machine", o.machine,
                 "with --tile auto or --cyclic auto: the machine file (tilepipe calibrate --kernel "
                 "sw ...) whose cost model chooses the tile height or the cyclic factor of the "
                 "pipelined executor");
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
  app.add_option("--cyclic", o.cyclic,
                 "block-cyclic factor K: K rows of tiles per CPU along the query, cycle after "
                 "cycle (the pipelined executor, docs/adr/0018-block-cyclic-rows.md), or auto "
                 "(with --machine: the cost model's factor)")
      ->capture_default_str();
  add_comm_options(app, o.comm, "with --nodes: ", false);
  app.add_option("--simd", o.simd,
                 "tile function: auto (the best the CPU runs), avx512, avx2, sse41 or scalar")
      ->capture_default_str();
  app.add_option("--simd-bits", o.simd_bits,
                 "narrowest SIMD lanes tried first: 8, 16 or 32 bits (a band that overflows "
                 "is redone in wider lanes)")
      ->check(CLI::IsMember({8, 16, 32}))
      ->capture_default_str();
  app.add_flag("--json", o.json, "print one JSON object");
  app.add_option("--format", o.format,
                 "text, or the alignment as pair (EMBOSS water's display), sam (one SAM record) "
                 "or blast (BLAST's -outfmt 6 line)")
      ->capture_default_str();
  app.add_flag("--score-only", o.score_only,
               "score and end only: no traceback (the score pass alone)");
  app.add_flag("--progress", o.progress,
               "one pair: the score pass's and the traceback's progress on stderr (default: only "
               "when stderr is a terminal; under mpirun, the traceback's only)");
  app.add_option("--top", o.top,
                 "search: every query record against every target record, the N best hits of "
                 "each query (without --top, files of several records report every hit)");
  app.add_option("--tiled-cells", o.tiled_cells,
                 "search: pairs of at least this many cells (query x target length) are tiled "
                 "on all --cpus threads, smaller ones run one per thread")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 62))
      ->capture_default_str();
  app.add_option("-o,--output", o.output, "write the output to this file instead of stdout");
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;
  o.nodes_given = app.count("--nodes") > 0;

  if (o.schedule != "blocking" && o.schedule != "overlap") {
    return report_error(
        Error(Errc::invalid_argument,
              "--schedule: unknown schedule '" + o.schedule + "' (choose blocking|overlap)"));
  }
  if (o.grouping != "hyperplane" && o.grouping != "vertical") {
    return report_error(
        Error(Errc::invalid_argument,
              "--grouping: unknown grouping '" + o.grouping + "' (choose hyperplane|vertical)"));
  }
  if (o.subtiles != "auto") {
    if (auto s = parse_int(o.subtiles, "--subtiles", 1, 1 << 20); !s)
      return report_error(s.error());
  }
  if (o.query_path == "-" && o.target_path == "-") {
    return report_error(
        Error(Errc::invalid_argument, "QUERY and TARGET cannot both be standard input ('-')"));
  }
  if (o.format != "text" && o.format != "pair" && o.format != "sam" && o.format != "blast") {
    return report_error(Error(Errc::invalid_argument, "--format: unknown format '" + o.format +
                                                          "' (choose text|pair|sam|blast)"));
  }
  if (o.format != "text" && o.json) {
    return report_error(Error(Errc::invalid_argument, "--json and --format " + o.format +
                                                          " print different things: "
                                                          "choose one"));
  }
  if (o.format != "text" && o.score_only) {
    return report_error(Error(Errc::invalid_argument,
                              "--format " + o.format + " shows the alignment: drop --score-only"));
  }
  if ((o.tile == "auto" || o.cyclic == "auto") != !o.machine.empty()) {
    const char* why =
        !o.machine.empty()
            ? "--machine is for --tile auto or --cyclic auto (the model's choice): give one"
        : o.tile == "auto"
            ? "--tile auto needs --machine FILE: the cost model chooses the tile from it "
              "(tilepipe calibrate --kernel sw --size QxT ...)"
            : "--cyclic auto needs --machine FILE: the cost model chooses the factor from it "
              "(tilepipe calibrate --kernel sw --size QxT ...)";
    return report_error(Error(Errc::invalid_argument, why));
  }
  std::optional<std::int64_t> top;
  if (app.count("--top") > 0) {
    auto n = parse_int(o.top, "--top", 1);
    if (!n) return report_error(n.error());
    top = *n;
  }
  // The communication flags are checked on every path, one process too (the same rules and
  // messages as run and pingpong).
  if (auto c = apply_comm_flags(o.comm); !c) return report_error(c.error());
  std::optional<OutputFile> output;
  if (app.count("--output") > 0) {
    auto file = OutputFile::make(o.output);
    if (!file) return report_error(Error(file.error().code, "--output: " + file.error().message));
    output.emplace(std::move(*file));
  }
  // Ranks after the inputs are read: none (the forked ranks' threads start in them), or one
  // process's team for the score pass or the search: its threads start now, while the inputs are
  // read.
  const bool on_ranks = o.nodes > 1 || o.grouping == "vertical" || o.tile == "auto" ||
                        o.cyclic != "1" || comm::World::launched_by_mpi();
  if (!on_ranks) {
    try {
      exec::warm_team(o.cpus);
    } catch (const std::system_error&) {  // the score pass tries again and reports it
    }
  }
  auto in = load_inputs(o);
  if (!in) return report_error(in.error());
  if (top || in->queries.size() > 1 || in->targets.size() > 1) {
    for (const char* flag : {"--tile", "--schedule", "--grouping", "--subtiles", "--cyclic"}) {
      if (app.count(flag) > 0) {
        return report_error(Error(Errc::invalid_argument,
                                  std::string(flag) +
                                      " shapes one pair's run: a search (--top, or files of "
                                      "several records) chooses its own"));
      }
    }
    SearchRequest request{in->matrix, in->queries,   in->targets,   in->gaps,
                          in->scale,  o.gap_open,    o.gap_extend,  top.value_or(0),
                          o.cpus,     o.nodes,       o.nodes_given, *apply_comm_flags(o.comm),
                          in->sw,     o.tiled_cells, o.score_only,  o.json,
                          o.format};
    return run_search(request, output);
  }
  in->query = std::move(in->queries.front());
  in->target = std::move(in->targets.front());
  // Vertical grouping and the model's tile are the pipelined executor's, on one rank too.
  if (on_ranks) return align_on_ranks(o, *in, output);
  auto out = [&] {
    ProgressLine progress("aligning", o.progress || ::isatty(STDERR_FILENO) == 1);
    return align(o, *in, progress);
  }();
  if (!out) return report_error(out.error());
  return emit(result_text(o, *in, *out), output);
}

const CommandRegistration align_registration{
    Command{"align", "Smith-Waterman local alignment of two FASTA sequences", run_align}};

}  // namespace
}  // namespace tp::app
