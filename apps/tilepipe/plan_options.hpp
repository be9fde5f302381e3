// The planning flags shared by `tilepipe plan` and the commands that execute a plan.
#pragma once

#include "kernel_catalog.hpp"

#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/model/choose.hpp>
#include <tilepipe/model/machine.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/plan/transform.hpp>
#include <tilepipe/runtime/kernel_registry.hpp>
#include <tilepipe/support/expected.hpp>

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  std::string cyclic = "1";
  std::string map_dim = "auto";
  std::string schedule = "overlap";
  std::string grouping = "hyperplane";
  std::vector<std::string> params;   ///< --param name=value, repeatable
  std::vector<std::string> plugins;  ///< --plugin FILE.so, repeatable

  /// Adds --kernel --deps --param --size --tile --tiling-matrix --nodes --cpus --mesh --cyclic
  /// --map-dim
  /// --schedule --grouping to a CLI11 app. `executes`: for a command that runs a built-in
  /// kernel with rectangular tiles (no --deps, no --tiling-matrix; --kernel offers the kernels
  /// tilepipe run executes only).
  void add_to(CLI::App& app, bool executes = false);
  /// Loads the --plugin libraries (none: nothing); --kernel then names one of their kernels.
  [[nodiscard]] Status load_plugins();
  /// For `--help` with --plugin: loads the plugins named in argv (before parsing) and adds the
  /// --kernel's parameters (or the plugins' kernels) to the help text. Returns -1 to go on, or
  /// the exit code of a plugin that does not load (its error printed).
  int add_plugin_help(CLI::App& app, int argc, char** argv);
  /// The --kernel's entry when --plugin was given (after load_plugins), else nullptr.
  [[nodiscard]] const runtime::KernelEntry* plugin_entry() const { return plugin_entry_; }
  /// The --kernel's entry: the --plugin's (after load_plugins), else the built-in one (an error
  /// names the built-in kernels). One path for both from here on (ADR 0023).
  [[nodiscard]] Expected<const runtime::KernelEntry*> kernel_entry() const;
  /// The --plugin libraries' kernels, "a|b" (after load_plugins).
  [[nodiscard]] std::string plugin_kernel_names() const;
  /// The kernel's parameters from --param (its defaults for the rest); needs --kernel.
  [[nodiscard]] Expected<exec::ParamValues> param_values() const;
  /// The unimodular transformation the plan runs in when a dependence has a negative component
  /// and the tiles are rectangular (nullopt: none needed, or a --tiling-matrix, which must
  /// satisfy HD >= 0 itself); the request's size and deps are then the transformed ones.
  [[nodiscard]] Expected<std::optional<plan::TransformedSpace>> transformed() const;
  /// Parses and cross-checks the values; the error names the flag and the value. "auto" in
  /// --tile, --schedule or --grouping is refused: it needs a machine file (to_choice_request).
  [[nodiscard]] Expected<plan::PlanRequest> to_request() const;
  /// Like to_request, but --tile, --schedule and --grouping may be "auto": left to the model.
  [[nodiscard]] Expected<model::ChoiceRequest> to_choice_request() const;
  /// The kernel's workload for the cost model (sweeps, face elements; sweep3d: 8 T + 1
  /// sweeps); the default one sweep for --deps, wave and plugins.
  [[nodiscard]] Expected<model::Workload> workload() const;

 private:
  Expected<plan::PlanRequest> parse(model::ChoiceRequest* autos) const;
  /// The planner's view of kernel_entry().
  Expected<KernelInfo> kernel_info() const;
  std::shared_ptr<runtime::KernelRegistry> registry_;  ///< the --plugin kernels
  const runtime::KernelEntry* plugin_entry_ = nullptr;
  /// The loop nest's extents and dependences (before any transformation).
  Expected<std::pair<plan::Index, plan::DependenceMatrix>> loop_nest() const;
};

/// The cost-model flags: --machine, --transport, --comm-thread, --subtiles.
/// --formula's value: seeds|executed (model::Formula), or an error naming the flag.
Expected<model::Formula> parse_formula(const std::string& text);

/// Adds --formula to a CLI11 app.
void add_formula_option(CLI::App& app, std::string& formula);

struct ModelFlags {
  std::string machine;
  std::string transport;
  bool comm_thread = false;
  std::string subtiles;
  std::string link;  ///< --link: the machine file must have been measured through this link
  std::string formula = "executed";  ///< --formula: the closed form that predicts
  std::string sweeps;                ///< --sweeps T: the run's repeated sweeps, predicted together

  /// Adds the flags to a CLI11 app.
  void add_to(CLI::App& app);
  /// True when --machine was given.
  [[nodiscard]] bool given() const { return !machine.empty(); }
  /// Fails when a model flag is given without --machine.
  [[nodiscard]] Status check_without_machine() const;
  /// Loads the machine file, checked against this host and --transport when given.
  [[nodiscard]] Expected<model::Machine> load() const;
  /// The model options for a kernel (empty for --deps); checks --transport and --subtiles.
  [[nodiscard]] Expected<model::ModelOptions> options(const std::string& kernel) const;
  /// Applies --sweeps to the kernel's workload (as `tilepipe run --sweeps T` sweeps it): T
  /// sweeps of a kernel of one sweep; refused for a kernel that sets its own (sweep3d).
  [[nodiscard]] Status apply_sweeps(model::Workload& workload, const std::string& kernel) const;
};

}  // namespace tp::app
