// The planning flags shared by `tilepipe plan` and the commands that execute a plan.
#pragma once

#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <CLI/CLI.hpp>

#include <string>

namespace tp::app {

/// Raw flag values as typed; to_request() validates them.
struct PlanOptions {
  std::string kernel;
  std::string deps;
  std::string size;
  std::string tile;
  std::string tiling_matrix;
  std::string nodes = "1";
  std::string cpus = "1";
  std::string mesh;
  std::string map_dim = "auto";
  std::string schedule = "overlap";
  std::string grouping = "hyperplane";

  /// Adds --kernel --deps --size --tile --tiling-matrix --nodes --cpus --mesh --map-dim
  /// --schedule --grouping to a CLI11 app.
  void add_to(CLI::App& app);
  /// Parses and cross-checks the values; the error names the flag and the value.
  [[nodiscard]] Expected<plan::PlanRequest> to_request() const;
};

}  // namespace tp::app
