// The built-in kernels' shapes for the planner, from the kernel types' traits.
#include "kernel_catalog.hpp"

#include <tilepipe/kernels/sor.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/sweep3d.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/support/checked_math.hpp>

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

// sor: the loop nest (t, x_1..x_S) with its original dependences, negative components included.
template <int S>
KernelInfo describe_sor(std::string_view name) {
  using K = kernels::Sor<S>;
  std::vector<plan::Index> vectors;
  for (const auto& dep : K::original_deps) vectors.emplace_back(dep.begin(), dep.end());
  auto deps = plan::DependenceMatrix::make(K::dims, vectors);
  TP_EXPECTS(deps.has_value());
  const auto check = [](const plan::Index& size, const exec::ParamValues& p) -> Status {
    exec::Point<S> n{};
    for (int s = 0; s < S; ++s) n[s] = size[static_cast<std::size_t>(s)];
    auto k = K::make(n, p.integer("iterations"), p.real("omega"));
    if (!k) return Unexpected{k.error()};
    return {};
  };
  // The faces are doubles and carry the low halo of the other dimensions (the diagonal
  // dependences of the skewed space).
  const auto workload = [](const plan::Index&, const exec::ParamValues&) {
    model::Workload w;
    w.element_bytes = sizeof(typename K::face_type);
    w.face_halo = true;
    return w;
  };
  return KernelInfo{name, K::storage, K::dims, *deps, kernels::sor_params, true, check, workload};
}

// sweep3d: each octant's sweep runs in the reflected grid, dependences e_1, e_2, e_3; paired
// (the default), octants o and o | 4 run as one sweep over I x J x 2K (ADR 0021).
KernelInfo describe_sweep3d() {
  KernelInfo k = describe<kernels::Sweep3d>("sweep3d");
  k.params = kernels::sweep3d_params;
  k.check = [](const plan::Index& size, const exec::ParamValues& p) -> Status {
    auto made = kernels::Sweep3d::make({size[0], size[1], size[2]}, kernels::sweep3d_params_of(p));
    if (!made) return Unexpected{made.error()};
    return {};
  };
  k.space = [](const plan::Index& size, const exec::ParamValues& p) {
    return plan::Index{size[0], size[1],
                       kernels::sweep3d_params_of(p).paired != 0 ? 2 * size[2] : size[2]};
  };
  // 8 T + 1 executor sweeps (paired: 4 T + 1 over the doubled space), the last one copying phi;
  // faces of whole cells; between two sweeps at most every point's p_o (and from the second
  // iteration on its source) changes rank.
  k.workload = [](const plan::Index& size, const exec::ParamValues& p) {
    const kernels::Sweep3dParams params = kernels::sweep3d_params_of(p);
    model::Workload w;
    if (params.iterations < 1 || params.iterations > kernels::sweep3d_max_iterations) return w;
    const std::int64_t halves = params.paired != 0 ? 2 : 1;
    w.sweeps = 8 / halves * params.iterations + 1;
    w.copy_sweeps = 1;
    w.element_bytes = sizeof(kernels::Sweep3dCell);
    const auto points = checked_mul(checked_mul(size[0], size[1]).value_or(0), size[2] * halves);
    const std::int64_t values = params.iterations > 1 ? 2 : 1;
    w.between_sweep_bytes =
        checked_mul(points.value_or(0), values * std::int64_t{sizeof(double)}).value_or(0);
    return w;
  };
  return k;
}

const std::array<KernelInfo, 7>& catalog() {
  static const std::array<KernelInfo, 7> kernels{describe<kernels::Wave<2>>("wave2d"),
                                                 describe<kernels::Wave<3>>("wave3d"),
                                                 describe<kernels::Wave<4>>("wave4d"),
                                                 describe<kernels::SwKernel>("sw"),
                                                 describe_sor<2>("sor2d"),
                                                 describe_sor<3>("sor3d"),
                                                 describe_sweep3d()};
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

plan::Index loop_extents(const KernelInfo& k, const plan::Index& size,
                         const exec::ParamValues& params) {
  if (k.space != nullptr) return k.space(size, params);
  if (!k.time_loop) return size;
  plan::Index e{params.integer("iterations")};
  e.insert(e.end(), size.begin(), size.end());
  return e;
}

std::string kernel_names(std::optional<exec::Storage> storage) {
  std::string names;
  for (const auto& k : catalog()) {
    if (!storage || k.storage == *storage)
      names += (names.empty() ? "" : "|") + std::string(k.name);
  }
  return names;
}

std::string run_kernel_names() {
  std::string names;
  for (const auto& k : catalog()) {
    if (k.storage == exec::Storage::resident || k.time_loop)
      names += (names.empty() ? "" : "|") + std::string(k.name);
  }
  return names;
}

}  // namespace tp::app
