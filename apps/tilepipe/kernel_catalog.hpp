// The built-in kernels as the planner sees them: name, storage, number of dimensions and
// dependences, each read from the kernel type's own traits (dims, storage, deps).
#pragma once

#include <tilepipe/exec/kernel.hpp>
#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/support/expected.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace tp::app {

struct KernelInfo {
  std::string_view name;
  exec::Storage storage;
  int dims;
  plan::DependenceMatrix deps;
};

/// wave2d/wave3d/wave4d and sw; an error names the choices.
Expected<KernelInfo> find_kernel(std::string_view name);

/// "wave2d|wave3d|wave4d|sw"; with a storage, only the kernels of that storage.
std::string kernel_names(std::optional<exec::Storage> storage = std::nullopt);

}  // namespace tp::app
