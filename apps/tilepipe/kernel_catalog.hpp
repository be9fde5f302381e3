// The kernels as the planner sees them: the built-in ones, registered as runtime::KernelEntry
// like a plugin's (ADR 0023), and the planner's view of any entry (KernelInfo).
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/runtime/kernel_registry.hpp>
#include <tilepipe/support/expected.hpp>

#include <span>
#include <string>
#include <string_view>

namespace tp::app {

/// The planner's view of a kernel entry, a built-in kernel's or a plugin's (info_of).
struct KernelInfo {
  std::string_view name;
  exec::Storage storage;
  int dims;                     ///< of the loop nest (with the time loop, if any)
  plan::DependenceMatrix deps;  ///< of the loop nest: components may be negative (sor)
  std::span<const exec::ParamSpec> params{};  ///< what --param may set
  /// The first dimension is the time loop, its extent the parameter "iterations": --size
  /// gives the other dims - 1 extents.
  bool time_loop = false;
  /// Checks the size (without the time loop) and parameters as the kernel's make() does.
  Status (*check)(const plan::Index& size, const exec::ParamValues& params) = nullptr;
  /// What the kernel adds to its plan's pipeline for the cost model (sweeps, face elements);
  /// nullptr: one sweep, faces of the machine file's elements.
  model::Workload (*workload)(const plan::Index& size, const exec::ParamValues& params) = nullptr;
  /// The executor's space when it is not the loop nest's (sweep3d paired: I x J x 2K); nullptr:
  /// loop_extents.
  plan::Index (*space)(const plan::Index& size, const exec::ParamValues& params) = nullptr;
};

/// The planner's view of `entry`. Error: its dependences do not form a matrix of its dims.
Expected<KernelInfo> info_of(const runtime::KernelEntry& entry);

/// The built-in kernels: wave2d, wave3d, wave4d, sw, sor2d, sor3d, sweep3d (in this order).
const runtime::KernelRegistry& builtin_kernels();

/// The space the executor runs: (iterations, size...) for a time-loop kernel, the kernel's own
/// where it says (KernelInfo::space), else size.
plan::Index loop_extents(const KernelInfo& k, const plan::Index& size,
                         const exec::ParamValues& params);

/// The built-in kernel `name`; an error names the choices.
Expected<const runtime::KernelEntry*> find_kernel(std::string_view name);

/// The built-in kernels, "wave2d|wave3d|...".
std::string kernel_names();

/// Whether `tilepipe run` executes the kernel: it has a run entry point (every kernel but sw).
bool runs(const runtime::KernelEntry& k);

/// The built-in kernels `tilepipe run` executes (runs), "a|b".
std::string run_kernel_names();

}  // namespace tp::app
