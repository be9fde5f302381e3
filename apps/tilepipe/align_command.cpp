// `tilepipe align`: Smith-Waterman local alignment (affine gaps) of two FASTA sequences.
#include <tilepipe/exec/local_runner.hpp>
#include <tilepipe/kernels/fasta.hpp>
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/support/parse.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

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
  std::string tile = "2048x8192";
  bool json = false;
};

struct AlignOutput {
  kernels::SwResult best;
  std::int64_t query_length = 0;
  std::int64_t target_length = 0;
  double seconds = 0;
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

Expected<AlignOutput> align(const AlignOptions& o) {
  auto matrix = kernels::ScoreMatrix::by_name_or_file(o.matrix);
  if (!matrix) return Unexpected{matrix.error()};
  auto query = read_one(o.query_path, *matrix);
  if (!query) return Unexpected{query.error()};
  auto target = read_one(o.target_path, *matrix);
  if (!target) return Unexpected{target.error()};
  auto tile = parse_extents(o.tile, "--tile");
  if (!tile) return Unexpected{tile.error()};
  if (tile->size() != 2) {
    return fail(Errc::invalid_argument,
                fmt::format("--tile: '{}' has {} dimensions, expected 2 (QUERYxTARGET)", o.tile,
                            tile->size()));
  }
  auto kernel = kernels::SwKernel::make(*matrix, *query, *target, {o.gap_open, o.gap_extend});
  if (!kernel) return Unexpected{kernel.error()};
  auto tiling = exec::RectTiling<2>::make(kernel->space(), {(*tile)[0], (*tile)[1]});
  if (!tiling) return Unexpected{tiling.error()};
  const auto start = std::chrono::steady_clock::now();
  auto best = exec::run_local(*kernel, *tiling, o.cpus);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (!best) return Unexpected{best.error()};
  return AlignOutput{*best, static_cast<std::int64_t>(query->size()),
                     static_cast<std::int64_t>(target->size()), elapsed.count()};
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
  app.add_option("--cpus", o.cpus, "threads")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--tile", o.tile, "tile extents QUERYxTARGET")->capture_default_str();
  app.add_flag("--json", o.json, "print one JSON object");
  if (const int rc = parse_cli(app, argc, argv); rc >= 0) return rc;

  auto out = align(o);
  if (!out) return report_error(out.error());
  const double cells =
      static_cast<double>(out->query_length) * static_cast<double>(out->target_length);
  const double gcups = out->seconds > 0 ? cells / out->seconds / 1e9 : 0.0;
  if (o.json) {
    const nlohmann::ordered_json j = {{"score", out->best.score},
                                      {"end_query", out->best.end_query},
                                      {"end_target", out->best.end_target},
                                      {"query_length", out->query_length},
                                      {"target_length", out->target_length},
                                      {"seconds", out->seconds},
                                      {"gcups", gcups}};
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("score: {}\nend_query: {}\nend_target: {}\n", out->best.score, out->best.end_query,
               out->best.end_target);
    fmt::print("cells: {} x {}\nseconds: {:.6f}\ngcups: {:.3f}\n", out->query_length,
               out->target_length, out->seconds, gcups);
  }
  return exit_ok;
}

const CommandRegistration registration{
    Command{"align", "Smith-Waterman local alignment score of two FASTA sequences", run_align}};

}  // namespace
}  // namespace tp::app
