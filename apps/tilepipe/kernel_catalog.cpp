// The built-in kernels' shapes for the planner, from the kernel types' traits.
#include "kernel_catalog.hpp"

#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/wave.hpp>

#include <array>
#include <vector>

namespace tp::app {
namespace {

template <exec::Kernel K>
KernelInfo describe(std::string_view name) {
  std::vector<plan::Index> vectors;
  for (const auto& dep : K::deps) vectors.emplace_back(dep.begin(), dep.end());
  auto deps = plan::DependenceMatrix::make(K::dims, vectors);
  TP_EXPECTS(deps.has_value());  // a built-in kernel's dependences are valid by construction
  return KernelInfo{name, K::storage, K::dims, *deps};
}

const std::array<KernelInfo, 4>& catalog() {
  static const std::array<KernelInfo, 4> kernels{
      describe<kernels::Wave<2>>("wave2d"), describe<kernels::Wave<3>>("wave3d"),
      describe<kernels::Wave<4>>("wave4d"), describe<kernels::SwKernel>("sw")};
  return kernels;
}

}  // namespace

Expected<KernelInfo> find_kernel(std::string_view name) {
  for (const auto& k : catalog()) {
    if (k.name == name) return k;
  }
  return fail(Errc::invalid_argument, "--kernel: unknown kernel '" + std::string(name) +
                                          "' (choose " + kernel_names() + ")");
}

std::string kernel_names(std::optional<exec::Storage> storage) {
  std::string names;
  for (const auto& k : catalog()) {
    if (!storage || k.storage == *storage)
      names += (names.empty() ? "" : "|") + std::string(k.name);
  }
  return names;
}

}  // namespace tp::app
