// make_entry<K>: a kernel type's type-erased entry points (KernelEntry), instantiated where the
// type is known: inside a plugin (tilepipe/plugin.hpp) or a program that registers its kernels.
//
// What a kernel type may declare besides the Kernel API (docs/kernels.md, "Your kernel as a
// plugin"):
//   static constexpr std::array<tp::exec::ParamSpec, N> params{...};   // --param, with help
//   static tp::Expected<K> make(const tp::plan::Index& size, const tp::exec::ParamValues& p);
//   static std::string format_result(const result_type& r);           // the result as text
//   static tp::model::Workload workload(const tp::plan::Index& size,  // sweeps and faces for
//                                       const tp::exec::ParamValues& p);  // the cost model
//   static constexpr bool time_loop = true;  // dimension 1 is a time loop of "iterations" steps
//   static constexpr std::array<tp::exec::Dependence<dims>, M> original_deps{...};  // the loop
//       // nest's, components may be negative; `deps` are then the planner's T D (docs/adr/0005)
// Without make() the kernel is default-constructed and takes any size. A time-loop kernel's
// make() gets the size without the time loop and the parameters (with "iterations").
#pragma once

#include <tilepipe/exec/calibration.hpp>
#include <tilepipe/plan/transform.hpp>
#include <tilepipe/runtime/kernel_registry.hpp>
#include <tilepipe/runtime/run.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>

namespace tp::runtime {
namespace detail {

template <class K>
concept HasParams = requires {
  std::span<const exec::ParamSpec>(K::params);
};

template <class K>
concept HasMake = requires(const plan::Index& size, const exec::ParamValues& p) {
  { K::make(size, p) } -> std::convertible_to<Expected<K>>;
};

template <class K>
concept HasFormatResult = requires(const typename K::result_type& r) {
  { K::format_result(r) } -> std::convertible_to<std::string>;
};

template <class K>
concept HasWorkload = requires(const plan::Index& size, const exec::ParamValues& p) {
  { K::workload(size, p) } -> std::convertible_to<model::Workload>;
};

template <class K>
concept HasTimeLoop = requires {
  { K::time_loop } -> std::convertible_to<bool>;
};

template <class K>
concept HasOriginalDeps = requires {
  { K::original_deps.size() } -> std::convertible_to<std::size_t>;
};

/// Whether dimension 1 of K is a time loop (K::time_loop), its extent the parameter "iterations".
template <class K>
constexpr bool time_loop_of() {
  if constexpr (HasTimeLoop<K>) {
    return static_cast<bool>(K::time_loop);
  } else {
    return false;
  }
}

/// The loop nest's dependences: K::original_deps where declared, else K::deps.
template <class K>
std::vector<plan::Index> loop_deps_of() {
  std::vector<plan::Index> out;
  if constexpr (HasOriginalDeps<K>) {
    for (const auto& dep : K::original_deps) out.emplace_back(dep.begin(), dep.end());
  } else {
    for (const auto& dep : K::deps) out.emplace_back(dep.begin(), dep.end());
  }
  return out;
}

/// The space the executor runs a kernel of the loop nest `nest` in: the nest itself, or where
/// its dependences have a negative component the planner's transformed box, whose dependences
/// must be K::deps (the kernel computes in that transformation: a kernel bug otherwise).
struct ExecutorSpace {
  plan::Index extents;
  std::string transformation;  ///< "" for the nest itself
};

template <class K>
Expected<ExecutorSpace> executor_space(const plan::Index& nest) {
  auto loop = plan::DependenceMatrix::make(K::dims, loop_deps_of<K>());
  if (!loop) return Unexpected{loop.error()};
  std::vector<plan::Index> declared;
  for (const auto& dep : K::deps) declared.emplace_back(dep.begin(), dep.end());
  if (!plan::has_negative_component(*loop)) {
    if (loop->vectors() == declared) return ExecutorSpace{nest, {}};
    return fail(Errc::internal,
                "the kernel's deps differ from its original_deps, which need no "
                "transformation");
  }
  auto t = plan::transform_space(nest, *loop);
  if (!t) return Unexpected{t.error()};
  if (t->deps.vectors() != declared) {
    return fail(Errc::internal, "the kernel's deps are not the planner's transformation " +
                                    t->transform.to_string() + " of its original_deps");
  }
  return ExecutorSpace{t->box.extents, t->transform.to_string()};
}

/// Whether K declares the integer parameter "iterations" (a time loop's extent).
template <class K>
constexpr bool declares_iterations() {
  if constexpr (HasParams<K>) {
    for (const auto& spec : K::params) {
      if (spec.name == "iterations" && spec.type == exec::ParamType::integer) return true;
    }
  }
  return false;
}

/// The loop nest of a run over `size`: (iterations, size...) for a time-loop kernel.
template <class K>
plan::Index loop_nest_of(const plan::Index& size, const exec::ParamValues& p) {
  if constexpr (time_loop_of<K>()) {
    plan::Index nest{p.integer("iterations")};
    nest.insert(nest.end(), size.begin(), size.end());
    return nest;
  } else {
    (void)p;
    return size;
  }
}

template <class K>
model::Workload workload_entry(const plan::Index& size, const exec::ParamValues& p) {
  return K::workload(size, p);
}

template <class K>
std::span<const exec::ParamSpec> params_of() {
  if constexpr (HasParams<K>) {
    return std::span<const exec::ParamSpec>(K::params);
  } else {
    return {};
  }
}

/// The kernel for a space of `size` with parameters `p`: K::make, else a default-constructed K.
template <class K>
Expected<K> make_kernel(const plan::Index& size, const exec::ParamValues& p) {
  constexpr int given = K::dims - (time_loop_of<K>() ? 1 : 0);
  if (static_cast<int>(size.size()) != given) {
    return fail(Errc::invalid_argument, "the space has " + std::to_string(size.size()) +
                                            " dimensions, the kernel " + std::to_string(given));
  }
  try {
    if constexpr (HasMake<K>) {
      return Expected<K>(K::make(size, p));
    } else {
      return K{};
    }
  } catch (const std::exception& e) {
    return fail(Errc::internal, std::string("the kernel's make() threw: ") + e.what());
  } catch (...) {
    return fail(Errc::internal, "the kernel's make() threw");
  }
}

/// The result as text: K::format_result, a 64-bit checksum as 16 hex digits, a number in
/// decimal, anything else as its bytes in hex.
template <class K>
std::string format_result(const typename K::result_type& r) {
  using R = typename K::result_type;
  char buf[64];
  if constexpr (HasFormatResult<K>) {
    return K::format_result(r);
  } else if constexpr (std::is_same_v<R, std::uint64_t>) {
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(r));
    return buf;
  } else if constexpr (std::is_integral_v<R>) {
    return std::to_string(r);
  } else if constexpr (std::is_floating_point_v<R>) {
    std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(r));
    return buf;
  } else {
    std::string text;
    const auto* bytes = reinterpret_cast<const unsigned char*>(&r);
    for (std::size_t i = 0; i < sizeof(R); ++i) {
      std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
      text += buf;
    }
    return text;
  }
}

}  // namespace detail

/// A RunResult as a RunReport, the result as text (detail::format_result).
template <exec::Kernel K>
RunReport to_report(RunResult<typename K::result_type>&& r) {
  RunReport out(std::move(r.planned));
  out.rank = r.rank;
  out.root = r.root;
  if (r.root) out.result = detail::format_result<K>(r.result);
  out.checksum =
      std::is_same_v<typename K::result_type, std::uint64_t> && !detail::HasFormatResult<K>;
  out.summary = std::move(r.summary);
  out.spans = std::move(r.spans);
  out.verified = r.verified;
  return out;
}

namespace detail {

template <class K>
Status check_entry(const plan::Index& size, const exec::ParamValues& p) {
  auto k = make_kernel<K>(size, p);
  if (!k) return Unexpected{k.error()};
  return {};
}

template <class K>
Expected<RunReport> run_entry(const plan::Index& size, const exec::ParamValues& p,
                              const RunOptions& options) {
  auto k = make_kernel<K>(size, p);
  if (!k) return Unexpected{k.error()};
  const plan::Index nest = loop_nest_of<K>(size, p);
  auto space = executor_space<K>(nest);
  if (!space) return Unexpected{space.error()};
  try {
    auto r = runtime::run(*k, space->extents, options);
    if (!r) return Unexpected{r.error()};
    RunReport out = runtime::to_report<K>(std::move(*r));
    out.size = size;
    if constexpr (time_loop_of<K>()) out.loop_nest = nest;
    out.transformation = std::move(space->transformation);
    out.points = options.sweeps;
    for (const auto e : nest) out.points *= e;
    return out;
  } catch (const std::exception& e) {
    return fail(Errc::internal, std::string("the kernel threw: ") + e.what());
  } catch (...) {
    return fail(Errc::internal, "the kernel threw");
  }
}

/// The smallest loop nest (coordinate by coordinate, in order) whose executor space covers the
/// box `space` of that space: a time-loop kernel's probe computes tiles of the transformed space,
/// and its kernel is made for a loop nest (the iterations first). The transformed extents grow
/// with each extent of the nest (sum_k |T_dk| (n_k - 1) + 1), and a nest as wide as the widest
/// extent of `space` in every dimension covers it.
template <class K>
Expected<plan::Index> nest_covering(const plan::Index& space) {
  const auto widest = *std::max_element(space.begin(), space.end());
  plan::Index nest(space.size(), widest);
  const auto covers = [&](const plan::Index& n) -> Expected<bool> {
    auto s = executor_space<K>(n);
    if (!s) return Unexpected{s.error()};
    for (std::size_t d = 0; d < space.size(); ++d) {
      if (s->extents[d] < space[d]) return false;
    }
    return true;
  };
  auto all = covers(nest);
  if (!all) return Unexpected{all.error()};
  if (!*all) return fail(Errc::internal, "no loop nest covers the probe's space");
  for (std::size_t k = 0; k < nest.size(); ++k) {
    std::int64_t lo = 1, hi = nest[k];  // hi covers; find the smallest that does
    while (lo < hi) {
      const auto mid = lo + (hi - lo) / 2;
      auto trial = nest;
      trial[k] = mid;
      auto ok = covers(trial);
      if (!ok) return Unexpected{ok.error()};
      if (*ok) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    nest[k] = hi;
  }
  return nest;
}

/// Where a time-loop kernel's probe puts its row of tiles (`row`: extents in the executor's
/// space): inside its loop nest, as a run's interior tiles lie, not at the space's low corner
/// (where a skew leaves part of each tile outside the nest: sor's probe measured 0.15 ns per
/// point there against its runs' 0.95). With A = T^-1, the row's corners map to A (lo + o - 1 +
/// delta), delta in {0, row - 1}^D, so nest extents n_k = 1 + sum_d |A_kd| (row_d - 1) hold the
/// row, with w_k = 1 + sum_d max(0, -A_kd) (row_d - 1) for its image's low corner: the row starts
/// at o = T w - lo + 1 (lo the low corner of T J^n). Without a transformation: the row itself,
/// from 1.
struct RowInNest {
  plan::Index nest;    ///< the loop nest (iterations first for a time loop)
  plan::Index origin;  ///< the row's low corner in the executor's space (1-based)
};

template <class K>
Expected<RowInNest> row_inside_nest(const plan::Index& row) {
  auto loop = plan::DependenceMatrix::make(K::dims, loop_deps_of<K>());
  if (!loop) return Unexpected{loop.error()};
  auto t = plan::Transformation::find(*loop);
  if (!t) return Unexpected{t.error()};
  const auto dims = row.size();
  plan::Index nest(dims, 1), w(dims, 1);
  for (std::size_t d = 0; d < dims; ++d) {
    plan::Index unit(dims, 0);
    unit[d] = 1;
    const plan::Index column = t->unapply(unit);  // column d of A
    for (std::size_t k = 0; k < dims; ++k) {
      nest[k] += (column[k] < 0 ? -column[k] : column[k]) * (row[d] - 1);
      if (column[k] < 0) w[k] += -column[k] * (row[d] - 1);
    }
  }
  auto box = t->image(nest);
  if (!box) return Unexpected{box.error()};
  const plan::Index y = t->apply(w);
  plan::Index origin(dims);
  for (std::size_t d = 0; d < dims; ++d) origin[d] = y[d] - box->lo[d] + 1;
  return RowInNest{std::move(nest), std::move(origin)};
}

template <class K>
Expected<CostProbe> probe_entry(const std::vector<std::int64_t>& cross, int along,
                                std::int64_t max_height, std::int64_t slab_points,
                                const exec::ParamValues& p) {
  constexpr int D = K::dims;
  if (static_cast<int>(cross.size()) != D || along < 0 || along >= D || max_height < 1) {
    return fail(Errc::invalid_argument, "a probe of a " + std::to_string(D) +
                                            "-dimensional kernel needs a cross-section of " +
                                            std::to_string(D) + " extents");
  }
  exec::Point<D> c{};
  for (int d = 0; d < D; ++d) {
    c[d] = d == along ? 1 : cross[static_cast<std::size_t>(d)];
    if (c[d] < 1) return fail(Errc::invalid_argument, "a probe's extents must be >= 1");
  }
  using P = exec::CostProbeOf<K>;
  const auto n = P::row_size(c, along, max_height, slab_points);
  const plan::Index space(n.begin(), n.end());
  constexpr bool placed = requires(const K& kernel, const exec::Point<D>& o, int a) {
    P(kernel, o, a, o);
  };
  exec::Point<D> origin{};
  origin.fill(1);
  Expected<K> k = [&]() -> Expected<K> {
    if constexpr (time_loop_of<K>()) {
      // The row is a box of the transformed space: the kernel of a loop nest whose space holds
      // it, its iterations the nest's first extent. A frontier kernel's probe starts its row
      // inside the nest (row_inside_nest); a resident kernel's probe computes from its array's
      // low corner, so it takes the smallest nest covering the row.
      if constexpr (placed) {
        auto in = row_inside_nest<K>(space);
        if (!in) return Unexpected{in.error()};
        for (int d = 0; d < D; ++d) origin[d] = in->origin[static_cast<std::size_t>(d)];
        return make_kernel<K>(plan::Index(in->nest.begin() + 1, in->nest.end()),
                              p.with_integer("iterations", in->nest.front()));
      } else {
        auto nest = nest_covering<K>(space);
        if (!nest) return Unexpected{nest.error()};
        return make_kernel<K>(plan::Index(nest->begin() + 1, nest->end()),
                              p.with_integer("iterations", nest->front()));
      }
    } else {
      return make_kernel<K>(space, p);
    }
  }();
  if (!k) return Unexpected{k.error()};
  if constexpr (placed) {
    auto probe = std::make_shared<P>(*k, n, along, origin);
    return CostProbe([probe](std::int64_t z) { return probe->pass(z); });
  } else {
    auto probe = std::make_shared<P>(*k, n, along);
    return CostProbe([probe](std::int64_t z) { return probe->pass(z); });
  }
}

}  // namespace detail

/// What kernel type K says of itself under `name` (static storage: a string literal): storage,
/// dims, the loop nest's dependences and time loop, declared parameters and workload, without
/// check, run and probe (make_entry adds them; the built-in kernels add their own).
template <exec::Kernel K>
KernelEntry describe_entry(std::string_view name) {
  static_assert(!detail::time_loop_of<K>() || detail::declares_iterations<K>(),
                "a time-loop kernel declares the integer parameter \"iterations\" (its extent)");
  KernelEntry e;
  e.name = name;
  e.storage = K::storage;
  e.dims = K::dims;
  e.deps = detail::loop_deps_of<K>();
  e.params = detail::params_of<K>();
  e.time_loop = detail::time_loop_of<K>();
  if constexpr (detail::HasWorkload<K>) e.workload = &detail::workload_entry<K>;
  return e;
}

/// The entry points of kernel type K under `name` (static storage: a string literal).
template <exec::Kernel K>
KernelEntry make_entry(std::string_view name) {
  KernelEntry e = describe_entry<K>(name);
  e.check = &detail::check_entry<K>;
  e.run = &detail::run_entry<K>;
  e.cost_probe = &detail::probe_entry<K>;
  return e;
}

}  // namespace tp::runtime
