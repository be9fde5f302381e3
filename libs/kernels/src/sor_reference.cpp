// The plain loops of sor2d/sor3d (issue 13's definition): T in-place sweeps over the whole array.
#include <tilepipe/kernels/sor.hpp>
#include <tilepipe/support/assert.hpp>

namespace tp::kernels {

namespace {
std::size_t sz(Index v) {
  return static_cast<std::size_t>(v);
}
}  // namespace

std::vector<double> sor2d_reference(Index n1, Index n2, std::int64_t iterations, double omega) {
  TP_EXPECTS(n1 >= 1 && n2 >= 1 && iterations >= 1);
  const Index s = n2 + 2;
  std::vector<double> u(sz((n1 + 2) * s));
  for (Index i = 0; i <= n1 + 1; ++i) {
    for (Index j = 0; j <= n2 + 1; ++j) u[sz(i * s + j)] = sor_initial_value<2>({i, j}, {n1, n2});
  }
  const double c0 = 1.0 - omega;
  const double c1 = omega / 4.0;
  for (std::int64_t t = 1; t <= iterations; ++t) {
    for (Index i = 1; i <= n1; ++i) {
      for (Index j = 1; j <= n2; ++j) {
        double* p = &u[sz(i * s + j)];
        const double sum = ((p[-s] + p[-1]) + p[s]) + p[1];
        *p = c0 * *p + c1 * sum;
      }
    }
  }
  return u;
}

std::vector<double> sor3d_reference(Index n1, Index n2, Index n3, std::int64_t iterations,
                                    double omega) {
  TP_EXPECTS(n1 >= 1 && n2 >= 1 && n3 >= 1 && iterations >= 1);
  const Index s2 = n3 + 2;
  const Index s1 = (n2 + 2) * s2;
  std::vector<double> u(sz((n1 + 2) * s1));
  for (Index i = 0; i <= n1 + 1; ++i) {
    for (Index j = 0; j <= n2 + 1; ++j) {
      for (Index k = 0; k <= n3 + 1; ++k) {
        u[sz(i * s1 + j * s2 + k)] = sor_initial_value<3>({i, j, k}, {n1, n2, n3});
      }
    }
  }
  const double c0 = 1.0 - omega;
  const double c1 = omega / 6.0;
  for (std::int64_t t = 1; t <= iterations; ++t) {
    for (Index i = 1; i <= n1; ++i) {
      for (Index j = 1; j <= n2; ++j) {
        for (Index k = 1; k <= n3; ++k) {
          double* p = &u[sz(i * s1 + j * s2 + k)];
          const double sum = ((((p[-s1] + p[-s2]) + p[-1]) + p[s1]) + p[s2]) + p[1];
          *p = c0 * *p + c1 * sum;
        }
      }
    }
  }
  return u;
}

std::uint64_t sor_reference_checksum(const std::vector<double>& a, const std::vector<Index>& n) {
  TP_EXPECTS(n.size() == 2 || n.size() == 3);
  std::uint64_t sum = 0;
  if (n.size() == 2) {
    const Index s = n[1] + 2;
    for (Index i = 1; i <= n[0]; ++i) {
      for (Index j = 1; j <= n[1]; ++j) {
        const auto lin = static_cast<std::uint64_t>(i * s + j);
        sum += sor_point_hash(lin, a[sz(i * s + j)]);
      }
    }
    return sum;
  }
  const Index s2 = n[2] + 2;
  const Index s1 = (n[1] + 2) * s2;
  for (Index i = 1; i <= n[0]; ++i) {
    for (Index j = 1; j <= n[1]; ++j) {
      for (Index k = 1; k <= n[2]; ++k) {
        const auto lin = static_cast<std::uint64_t>(i * s1 + j * s2 + k);
        sum += sor_point_hash(lin, a[sz(lin)]);
      }
    }
  }
  return sum;
}

}  // namespace tp::kernels
