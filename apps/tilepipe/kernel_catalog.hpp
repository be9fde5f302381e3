// The built-in kernels as the planner sees them: name, storage, number of dimensions and
// dependences, each read from the kernel type's own traits (dims, storage, deps).
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/support/expected.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tp::app {

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

/// The space the executor runs: (iterations, size...) for a time-loop kernel, the kernel's own
/// where it says (KernelInfo::space), else size.
plan::Index loop_extents(const KernelInfo& k, const plan::Index& size,
                         const exec::ParamValues& params);

/// wave2d/wave3d/wave4d, sw, sor2d/sor3d; an error names the choices.
Expected<KernelInfo> find_kernel(std::string_view name);

/// "wave2d|wave3d|wave4d|sw"; with a storage, only the kernels of that storage.
std::string kernel_names(std::optional<exec::Storage> storage = std::nullopt);

/// The kernels `tilepipe run` executes: the resident ones and those with a time loop (sor).
std::string run_kernel_names();

}  // namespace tp::app
