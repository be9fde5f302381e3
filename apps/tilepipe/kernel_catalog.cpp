// The built-in kernels as registry entries (ADR 0023, 0025): each type's traits and entry points
// through runtime::make_entry (describe_entry for sw and sweep3d), as a plugin's, and what the
// type does not say: the tile-cost probes, sor's workload, sweep3d's run.
#include "kernel_catalog.hpp"

#include <tilepipe/kernels/cost_probes.hpp>
#include <tilepipe/kernels/sor.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/sweep3d.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/runtime/kernel_entry.hpp>
#include <tilepipe/support/checked_math.hpp>

#include <vector>

namespace tp::app {
namespace {

constexpr char wave2d_name[] = "wave2d";
constexpr char wave3d_name[] = "wave3d";
constexpr char wave4d_name[] = "wave4d";
constexpr char sw_name[] = "sw";
constexpr char sor2d_name[] = "sor2d";
constexpr char sor3d_name[] = "sor3d";
constexpr char sweep3d_name[] = "sweep3d";

// The tile-cost probe of the built-in kernel `Name` (calibrate, sweep).
template <const char* Name>
Expected<runtime::CostProbe> builtin_probe(const std::vector<std::int64_t>& cross, int along,
                                           std::int64_t max_height, std::int64_t slab_points,
                                           const exec::ParamValues& params) {
  return kernels::builtin_cost_probe(Name, cross, along, max_height, slab_points, &params);
}

template <exec::Kernel K, const char* Name>
runtime::KernelEntry describe_builtin() {
  runtime::KernelEntry k = runtime::describe_entry<K>(Name);
  k.cost_probe = &builtin_probe<Name>;
  return k;
}

// A built-in kernel whose type says all a run needs (wave, sor): make_entry's entry points, as a
// plugin's, with the built-in tile-cost probe.
template <exec::Kernel K, const char* Name>
runtime::KernelEntry make_builtin() {
  runtime::KernelEntry k = runtime::make_entry<K>(Name);
  k.cost_probe = &builtin_probe<Name>;
  return k;
}

// wave: the planner's view keeps no size check (plan reports an overflowing space in its own
// words); run refuses such a size through the kernel's make() ("--size 9x1: the array ...").
template <int D, const char* Name>
runtime::KernelEntry describe_wave() {
  runtime::KernelEntry k = make_builtin<kernels::Wave<D>, Name>();
  k.check = nullptr;
  return k;
}

// sor: the loop nest (t, x_1..x_S) with its original dependences, negative components included
// (Sor's time_loop and original_deps); the faces are doubles and carry the low halo of the other
// dimensions (the diagonal dependences of the skewed space).
template <int S, const char* Name>
runtime::KernelEntry describe_sor() {
  using K = kernels::Sor<S>;
  runtime::KernelEntry k = make_builtin<K, Name>();
  k.workload = [](const plan::Index&, const exec::ParamValues&) {
    model::Workload w;
    w.element_bytes = sizeof(typename K::face_type);
    w.face_halo = true;
    return w;
  };
  return k;
}

// sweep3d's run: 8 executor sweeps per source iteration (one per octant; paired: 4 over
// I x J x 2K, ADR 0021) and a final one; the memory check counts the ranks' sums and sources and
// the reference on top of the slabs; verification compares the checksum of phi with the plain
// loop's (the door cannot: the kernel's after_sweep runs on ranks).
Expected<runtime::RunReport> run_sweep3d(const plan::Index& size, const exec::ParamValues& values,
                                         const runtime::RunOptions& given) {
  if (given.sweeps != 1) {
    return fail(Errc::invalid_argument,
                "--sweeps: sweep3d sets its own sweeps (8 per source iteration, 4 paired); use "
                "--param iterations=T");
  }
  const exec::Point<3> n{size[0], size[1], size[2]};
  const kernels::Sweep3dParams params = kernels::sweep3d_params_of(values);
  auto kernel = kernels::Sweep3d::make(n, params);
  if (!kernel) return Unexpected{kernel.error()};
  const exec::Point<3> space = kernel->space();
  if (!runtime::joins_mpi(given.launch)) {
    const double cells =
        static_cast<double>(n[0]) * static_cast<double>(n[1]) * static_cast<double>(n[2]);
    const double slab = static_cast<double>(space[0] + 1) * static_cast<double>(space[1] + 1) *
                        static_cast<double>(space[2] + 1) * sizeof(kernels::Sweep3dCell);
    const double reference = given.verify ? cells * 13 * sizeof(double) : 0;
    TP_TRY(runtime::detail::check_memory(slab * (given.output.empty() ? 1 : 2) +
                                         kernel->state_bytes() + reference));
  }
  runtime::RunOptions options = given;
  options.verify = false;
  options.sweeps = kernel->sweeps();
  auto result = runtime::run(*kernel, {space[0], space[1], space[2]}, options);
  if (!result) return Unexpected{result.error()};
  if (result->root && given.verify) {
    const auto phi = kernels::sweep3d_reference(n, params);
    result->verified = kernels::sweep3d_checksum(phi) == result->result;
  }
  runtime::RunReport out = runtime::to_report<kernels::Sweep3d>(std::move(*result));
  out.size = size;
  out.points = 8 * params.iterations * n[0] * n[1] * n[2];
  return out;
}

// sweep3d: each octant's sweep runs in the reflected grid, dependences e_1, e_2, e_3; paired
// (the default), octants o and o | 4 run as one sweep over I x J x 2K (ADR 0021).
runtime::KernelEntry describe_sweep3d() {
  runtime::KernelEntry k = describe_builtin<kernels::Sweep3d, sweep3d_name>();
  k.params = kernels::sweep3d_params;
  k.run = &run_sweep3d;
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
  // faces of whole cells; between two sweeps each point's p_o (and from the second iteration
  // on its source) changes rank only where the mirrored rows miss it (ADR 0024: none on
  // mirror-symmetric rows; the model charges the bytes times mirror_miss of the plan).
  k.workload = [](const plan::Index& size, const exec::ParamValues& p) {
    const kernels::Sweep3dParams params = kernels::sweep3d_params_of(p);
    model::Workload w;
    if (params.iterations < 1 || params.iterations > kernels::sweep3d_max_iterations) return w;
    const std::int64_t halves = params.paired != 0 ? 2 : 1;
    w.sweeps = 8 / halves * params.iterations + 1;
    w.copy_sweeps = 1;
    // The final sweep writes phi into every cell of the first half: the cell and phi.
    w.copy_bytes_per_point =
        static_cast<std::int64_t>(sizeof(kernels::Sweep3dCell) + sizeof(double)) / halves;
    w.element_bytes = sizeof(kernels::Sweep3dCell);
    const auto points = checked_mul(checked_mul(size[0], size[1]).value_or(0), size[2] * halves);
    const std::int64_t values = params.iterations > 1 ? 2 : 1;
    w.between_sweep_bytes =
        checked_mul(points.value_or(0), values * std::int64_t{sizeof(double)}).value_or(0);
    w.mirrored = params.mirrored();
    return w;
  };
  return k;
}

}  // namespace

const runtime::KernelRegistry& builtin_kernels() {
  static const runtime::KernelRegistry registry = [] {
    runtime::KernelRegistry r;
    for (const auto& entry :
         {describe_wave<2, wave2d_name>(), describe_wave<3, wave3d_name>(),
          describe_wave<4, wave4d_name>(), describe_builtin<kernels::SwKernel, sw_name>(),
          describe_sor<2, sor2d_name>(), describe_sor<3, sor3d_name>(), describe_sweep3d()}) {
      const Status added = r.add(entry);
      TP_ASSERT(added.has_value());  // the names differ by construction
    }
    return r;
  }();
  return registry;
}

Expected<KernelInfo> info_of(const runtime::KernelEntry& e) {
  auto deps = plan::DependenceMatrix::make(e.dims, e.deps);
  if (!deps) return Unexpected{deps.error()};
  return KernelInfo{e.name,      e.storage, e.dims,     *deps,  e.params,
                    e.time_loop, e.check,   e.workload, e.space};
}

Expected<const runtime::KernelEntry*> find_kernel(std::string_view name) {
  if (auto e = builtin_kernels().find(name)) return *e;
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

std::string kernel_names() {
  return builtin_kernels().names();
}

bool runs(const runtime::KernelEntry& k) {
  return k.run != nullptr;
}

std::string run_kernel_names() {
  std::string names;
  for (const runtime::KernelEntry* k : builtin_kernels().entries()) {
    if (runs(*k)) names += (names.empty() ? "" : "|") + std::string(k->name);
  }
  return names;
}

}  // namespace tp::app
