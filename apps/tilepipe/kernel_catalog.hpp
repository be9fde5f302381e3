// The built-in kernels as the planner sees them: name, number of dimensions, dependences.
#pragma once

#include <tilepipe/plan/iteration_space.hpp>
#include <tilepipe/support/expected.hpp>

#include <string>
#include <string_view>

namespace tp::app {

struct KernelInfo {
  std::string_view name;
  int dims;
  plan::DependenceMatrix deps;
};

/// wave2d/wave3d/wave4d (unit vectors) and sw ((1,0), (0,1), (1,1)); an error names the choices.
Expected<KernelInfo> find_kernel(std::string_view name);

/// "wave2d|wave3d|wave4d|sw".
std::string kernel_names();

}  // namespace tp::app
