// `tilepipe align` as a search: query records against database records, the best hits of each
// query; and the output sink every align output goes through.
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/support/output_file.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "align_formats.hpp"

namespace tp::app {

/// A search as the command line asked for it.
struct SearchRequest {
  const kernels::ScoreMatrix& matrix;  ///< scaled by `scale`
  const std::vector<AlignSequence>& queries;
  const std::vector<AlignSequence>& targets;
  kernels::GapCosts gaps;  ///< scaled
  int scale;
  double gap_open;  ///< as given (the pair display shows them)
  double gap_extend;
  std::int64_t top;  ///< hits kept per query; 0: all
  int cpus;
  int nodes;
  bool nodes_given;
  comm::Config comm;
  kernels::SwOptions sw;
  std::int64_t tiled_cells;
  bool score_only;
  bool json;
  std::string format;  ///< text|pair|sam|blast
};

/// Runs the search (on `nodes` ranks, or the MPI job's, when more than one or under mpirun) and
/// prints the hits on the root; the exit code.
int run_search(const SearchRequest& request, std::optional<OutputFile>& output);

/// Writes `text` to stdout, or to `output` when set (replacing the file whole); the exit code.
int emit(std::string_view text, std::optional<OutputFile>& output);

}  // namespace tp::app
