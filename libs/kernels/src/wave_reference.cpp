// The sequential references of the wave kernels: straight loop nests over the whole array.
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/support/assert.hpp>

#include <fmt/format.h>

namespace tp::kernels {

std::string format_checksum(std::uint64_t checksum) {
  return fmt::format("{:016x}", checksum);
}

namespace {
std::size_t sz(Index v) {
  return static_cast<std::size_t>(v);
}
}  // namespace

// Each reference: a loop nest over the whole array; a row whose outer indices are all >= 1
// starts with its boundary point, then runs the interior recurrence straight along the row
// (the left neighbour carried in a register, as the tile kernel does).

std::vector<float> wave2d_reference(Index n1, Index n2) {
  TP_EXPECTS(n1 >= 1 && n2 >= 1);
  constexpr auto w = wave_weights<2>();
  const Index s1 = n2 + 1;
  std::vector<float> a(sz((n1 + 1) * s1));
  for (Index i = 0; i <= n1; ++i) {
    if (i == 0) {
      for (Index j = 0; j <= n2; ++j) a[sz(j)] = wave_boundary_value<2>({0, j});
      continue;
    }
    float* row = &a[sz(i * s1)];
    const float* up = row - s1;
    float left = row[0] = wave_boundary_value<2>({i, 0});
    for (Index j = 1; j <= n2; ++j) row[j] = left = w[0] * up[j] + w[1] * left;
  }
  return a;
}

std::vector<float> wave3d_reference(Index n1, Index n2, Index n3) {
  TP_EXPECTS(n1 >= 1 && n2 >= 1 && n3 >= 1);
  constexpr auto w = wave_weights<3>();
  const Index s2 = n3 + 1;
  const Index s1 = (n2 + 1) * s2;
  std::vector<float> a(sz((n1 + 1) * s1));
  for (Index i = 0; i <= n1; ++i) {
    for (Index j = 0; j <= n2; ++j) {
      float* row = &a[sz(i * s1 + j * s2)];
      if (i == 0 || j == 0) {
        for (Index k = 0; k <= n3; ++k) row[k] = wave_boundary_value<3>({i, j, k});
        continue;
      }
      const float* up1 = row - s1;
      const float* up2 = row - s2;
      float left = row[0] = wave_boundary_value<3>({i, j, 0});
      for (Index k = 1; k <= n3; ++k) row[k] = left = w[0] * up1[k] + w[1] * up2[k] + w[2] * left;
    }
  }
  return a;
}

std::vector<float> wave4d_reference(Index n1, Index n2, Index n3, Index n4) {
  TP_EXPECTS(n1 >= 1 && n2 >= 1 && n3 >= 1 && n4 >= 1);
  constexpr auto w = wave_weights<4>();
  const Index s3 = n4 + 1;
  const Index s2 = (n3 + 1) * s3;
  const Index s1 = (n2 + 1) * s2;
  std::vector<float> a(sz((n1 + 1) * s1));
  for (Index i = 0; i <= n1; ++i) {
    for (Index j = 0; j <= n2; ++j) {
      for (Index k = 0; k <= n3; ++k) {
        float* row = &a[sz(i * s1 + j * s2 + k * s3)];
        if (i == 0 || j == 0 || k == 0) {
          for (Index l = 0; l <= n4; ++l) row[l] = wave_boundary_value<4>({i, j, k, l});
          continue;
        }
        const float* up1 = row - s1;
        const float* up2 = row - s2;
        const float* up3 = row - s3;
        float left = row[0] = wave_boundary_value<4>({i, j, k, 0});
        for (Index l = 1; l <= n4; ++l) {
          row[l] = left = w[0] * up1[l] + w[1] * up2[l] + w[2] * up3[l] + w[3] * left;
        }
      }
    }
  }
  return a;
}

std::vector<float> wave_reference(const std::vector<Index>& n) {
  TP_EXPECTS(n.size() >= 2 && n.size() <= 4);
  if (n.size() == 2) return wave2d_reference(n[0], n[1]);
  if (n.size() == 3) return wave3d_reference(n[0], n[1], n[2]);
  return wave4d_reference(n[0], n[1], n[2], n[3]);
}

std::uint64_t wave_reference_checksum(const std::vector<float>& a, const std::vector<Index>& n) {
  const std::size_t dims = n.size();
  std::vector<Index> idx(dims, 0);
  std::uint64_t sum = 0;
  for (std::size_t lin = 0; lin < a.size(); ++lin) {
    bool interior = true;
    for (std::size_t d = 0; d < dims; ++d) interior = interior && idx[d] >= 1;
    if (interior) sum += wave_point_hash(lin, a[lin]);
    for (std::size_t d = dims; d-- > 0;) {
      if (++idx[d] <= n[d]) break;
      idx[d] = 0;
    }
  }
  TP_ASSERT(idx == std::vector<Index>(dims, 0));
  return sum;
}

}  // namespace tp::kernels
