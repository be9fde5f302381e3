// The built-in kernels' shapes for the planner.
#include "kernel_catalog.hpp"

namespace tp::app {

Expected<KernelInfo> find_kernel(std::string_view name) {
  if (name == "wave2d") return KernelInfo{"wave2d", 2, plan::DependenceMatrix::unit(2)};
  if (name == "wave3d") return KernelInfo{"wave3d", 3, plan::DependenceMatrix::unit(3)};
  if (name == "wave4d") return KernelInfo{"wave4d", 4, plan::DependenceMatrix::unit(4)};
  if (name == "sw") return KernelInfo{"sw", 2, *plan::DependenceMatrix::parse("1,0;0,1;1,1")};
  return fail(Errc::invalid_argument, "--kernel: unknown kernel '" + std::string(name) +
                                          "' (choose " + kernel_names() + ")");
}

std::string kernel_names() {
  return "wave2d|wave3d|wave4d|sw";
}

}  // namespace tp::app
