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
// Without make() the kernel is default-constructed and takes any size.
#pragma once

#include <tilepipe/exec/calibration.hpp>
#include <tilepipe/runtime/kernel_registry.hpp>
#include <tilepipe/runtime/run.hpp>

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
  if (static_cast<int>(size.size()) != K::dims) {
    return fail(Errc::invalid_argument, "the space has " + std::to_string(size.size()) +
                                            " dimensions, the kernel " + std::to_string(K::dims));
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
  try {
    auto r = runtime::run(*k, size, options);
    if (!r) return Unexpected{r.error()};
    return runtime::to_report<K>(std::move(*r));
  } catch (const std::exception& e) {
    return fail(Errc::internal, std::string("the kernel threw: ") + e.what());
  } catch (...) {
    return fail(Errc::internal, "the kernel threw");
  }
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
  auto k = make_kernel<K>(plan::Index(n.begin(), n.end()), p);
  if (!k) return Unexpected{k.error()};
  auto probe = std::make_shared<P>(*k, n, along);
  return CostProbe([probe](std::int64_t z) { return probe->pass(z); });
}

}  // namespace detail

/// What kernel type K says of itself under `name` (static storage: a string literal): storage,
/// dims, dependences, declared parameters and workload, without check, run and probe (make_entry
/// adds them; the built-in kernels add their own).
template <exec::Kernel K>
KernelEntry describe_entry(std::string_view name) {
  KernelEntry e;
  e.name = name;
  e.storage = K::storage;
  e.dims = K::dims;
  for (const auto& dep : K::deps) e.deps.emplace_back(dep.begin(), dep.end());
  e.params = detail::params_of<K>();
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
