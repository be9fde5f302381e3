// The kernel registry: kernels of any type behind one table of type-erased entry points (plan
// info, a run through the door, a tile-cost probe), and the loader of kernel plugins (shared
// libraries built with tilepipe/plugin.hpp). Knows no kernel by name; never prints.
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/exec/run_report.hpp>
#include <tilepipe/exec/trace.hpp>
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/runtime/run_options.hpp>
#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tp::runtime {

/// The version of the plugin ABI: the layout of PluginTable, KernelEntry and of every type its
/// entry points take or return (RunOptions, RunReport, model::Workload and what they hold). Raised
/// whenever one of them changes; a plugin built for another version is refused at load
/// (docs/adr/0006).
inline constexpr std::uint32_t plugin_abi_version = 5;

/// A run's report whatever the kernel's result type: RunResult with the result as text.
struct RunReport {
  explicit RunReport(PlannedRun p) : planned(std::move(p)) {}

  int rank = 0;
  bool root = true;
  PlannedRun planned;
  std::string result;     ///< the kernel's result as text (checksums: 16 hex digits)
  bool checksum = false;  ///< the result is a 64-bit checksum (result_type std::uint64_t)
  exec::RunSummary summary;
  std::vector<std::vector<exec::Span>> spans;
  std::optional<bool> verified;
  /// The size the run was asked for (KernelEntry::run's, without a time loop); empty: the
  /// planned space's extents.
  plan::Index size;
  /// A time-loop kernel's loop nest (iterations, size...); empty otherwise.
  plan::Index loop_nest;
  /// The transformation of the loop nest into the executor's space, as
  /// plan::Transformation::to_string ("" when it runs untransformed).
  std::string transformation;
  /// The loop nest's points computed over the whole run (every sweep); 0: the planned space's
  /// points times RunOptions::sweeps.
  std::int64_t points = 0;
};

/// A tile-cost probe (calibration): a function of the tile height that runs one timed pass over
/// a slab and returns seconds per point.
using CostProbe = std::function<double(std::int64_t height)>;

/// One kernel behind type-erased entry points, instantiated where the kernel's type is known
/// (make_entry in kernel_entry.hpp; inside the plugin for a plugin's kernel). The built-in
/// kernels are entries too (ADR 0023).
struct KernelEntry {
  std::string_view name;
  exec::Storage storage = exec::Storage::resident;
  int dims = 0;  ///< of the loop nest (with the time loop, if any)
  /// The loop nest's dependence vectors: make_entry's are K::original_deps where declared, else
  /// K::deps; negative components (sor's) make the plan run in a transformed (skewed) space.
  std::vector<std::vector<std::int64_t>> deps;
  std::span<const exec::ParamSpec> params;  ///< what --param may set (may be empty)
  /// Checks a space of `size` and the parameters as the kernel's make() does (bad input).
  Status (*check)(const plan::Index& size, const exec::ParamValues& params) = nullptr;
  /// Makes the kernel and runs it through the door (runtime::run) over its executor space (the
  /// loop nest 1..size[d], with the time loop first, transformed where deps need it); the
  /// report says what ran (RunReport::size, loop_nest, transformation, points). nullptr: not
  /// runnable through an entry (sw: tilepipe align).
  Expected<RunReport> (*run)(const plan::Index& size, const exec::ParamValues& params,
                             const RunOptions& options) = nullptr;
  /// The tile-cost probe over tiles of cross-section `cross` (the extent along `along` ignored)
  /// at heights 1..max_height: exec::TileCostProbe through a slab of at least slab_points points
  /// (resident kernels), exec::FrontierTileCostProbe along a row of as many points (frontier
  /// kernels). nullptr: the plugin gives none (a plugin built by make_entry always does).
  Expected<CostProbe> (*cost_probe)(const std::vector<std::int64_t>& cross, int along,
                                    std::int64_t max_height, std::int64_t slab_points,
                                    const exec::ParamValues& params) = nullptr;
  /// The first dimension is a time loop whose extent is the parameter "iterations": a size
  /// given to check and run has dims - 1 extents. make_entry's: K::time_loop where declared.
  bool time_loop = false;
  /// What the kernel adds to its plan's pipeline for the cost model (sweeps, face elements):
  /// make_entry's is K::workload where K declares it; nullptr: one sweep, faces of the machine
  /// file's elements.
  model::Workload (*workload)(const plan::Index& size, const exec::ParamValues& params) = nullptr;
  /// The executor's space when it is not the loop nest's (sweep3d paired: I x J x 2K); nullptr:
  /// the loop nest's extents.
  plan::Index (*space)(const plan::Index& size, const exec::ParamValues& params) = nullptr;
};

/// What a plugin exports through its one extern "C" symbol `tilepipe_plugin_table` (a function
/// returning a pointer to it). `abi_version` stays the first member in every version.
struct PluginTable {
  std::uint32_t abi_version = plugin_abi_version;
  const KernelEntry* kernels = nullptr;
  std::size_t count = 0;
};

/// The name of the symbol a plugin exports: `extern "C" const PluginTable*
/// tilepipe_plugin_table()`.
inline constexpr const char* plugin_symbol = "tilepipe_plugin_table";

/// Kernels by name. Entries keep their addresses while the registry lives (a deque, never
/// erased from); not thread-safe.
class KernelRegistry {
 public:
  /// Adds a kernel; `origin` says where it came from (a plugin's path). Error: the name is taken.
  Status add(const KernelEntry& entry, std::string origin = {});
  /// The kernel called `name`; the error lists the names there are (option "kernel").
  [[nodiscard]] Expected<const KernelEntry*> find(std::string_view name) const;
  /// "a|b|c", in the order added.
  [[nodiscard]] std::string names() const;
  /// The entries, in the order added.
  [[nodiscard]] std::vector<const KernelEntry*> entries() const;
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }

 private:
  struct Slot {
    KernelEntry entry;
    std::string origin;
  };
  std::deque<Slot> entries_;
};

/// Loads the plugin at `path` (dlopen, RTLD_NOW | RTLD_LOCAL; never unloaded) and adds its
/// kernels to `registry`. Errors (Errc::invalid_argument, option "plugin"): the library does not
/// load (the path and dlerror), lacks the symbol, was built for another ABI version, registers
/// no kernel, or a kernel name already in the registry.
Status load_plugin(const std::string& path, KernelRegistry& registry);

}  // namespace tp::runtime
