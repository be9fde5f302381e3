// sweep3d's plain loop against values computed by hand from issue 13's formulas, its symmetries,
// and the parameter checks of Sweep3d::make (exact messages).
#include <tilepipe/exec/slab.hpp>
#include <tilepipe/kernels/sweep3d.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using tp::kernels::Sweep3d;
using tp::kernels::Sweep3dParams;

// One cell, S2, vacuum inflow in every octant: psi = (((Q + c*0) + c*0) + c*0) / (((S + c) + c)
// + c) with c = 2 / sqrt(3), p_o = 0.0 + psi / 8 in every octant, phi = eight such p summed
// from 0.0; the next iteration's source is Q + C * phi.
double one_cell_s2(double sigma_t, double q, double scatter, int iterations) {
  const double mu = 1.0 / std::sqrt(3.0);
  const double c = 2.0 * mu;
  double phi = 0.0;
  for (int t = 0; t < iterations; ++t) {
    const double src = q + scatter * phi;
    const double psi = (((src + c * 0.0) + c * 0.0) + c * 0.0) / (((sigma_t + c) + c) + c);
    const double p = 0.0 + (1.0 / 8.0) * psi;
    phi = 0.0;
    for (int o = 0; o < 8; ++o) phi = phi + p;
  }
  return phi;
}

TEST(Sweep3d, one_cell_s2_is_the_hand_computed_value) {
  for (int t = 1; t <= 3; ++t) {
    Sweep3dParams p;
    p.sigma_t = 1.5;
    p.source = 2.0;
    p.iterations = t;
    p.c = 0.5;
    const auto phi = tp::kernels::sweep3d_reference({1, 1, 1}, p);
    ASSERT_EQ(phi.size(), 1U);
    EXPECT_EQ(phi[0], one_cell_s2(1.5, 2.0, 0.5, t)) << t;
  }
  // sigma_t = Q = 1: phi = 1 / (1 + 6 / sqrt(3)) up to rounding.
  const auto phi = tp::kernels::sweep3d_reference({1, 1, 1}, {});
  EXPECT_NEAR(phi[0], 1.0 / (1.0 + 6.0 / std::sqrt(3.0)), 1e-15);
}

// Two cells along i, S2, one octant sweeping towards +i: the downstream cell's inflow along x is
// the upstream cell's out_x = 2 psi_0 - 0.
TEST(Sweep3d, two_cells_pass_the_outgoing_flux_downstream) {
  const double mu = 1.0 / std::sqrt(3.0);
  const double c = 2.0 * mu;
  const double den = ((1.0 + c) + c) + c;
  const double psi0 = (((1.0 + c * 0.0) + c * 0.0) + c * 0.0) / den;  // the upstream cell
  const double in_x = 2.0 * psi0 - 0.0;
  const double psi1 = (((1.0 + c * in_x) + c * 0.0) + c * 0.0) / den;  // the downstream cell
  // Octants 0, 2, 4, 6 sweep towards +i (cell 0 upstream), 1, 3, 5, 7 towards -i.
  double phi0 = 0.0, phi1 = 0.0;
  for (int o = 0; o < 8; ++o) {
    const bool down = (o & 1) == 0;
    phi0 = phi0 + (0.0 + (1.0 / 8.0) * (down ? psi0 : psi1));
    phi1 = phi1 + (0.0 + (1.0 / 8.0) * (down ? psi1 : psi0));
  }
  const auto phi = tp::kernels::sweep3d_reference({2, 1, 1}, {});
  ASSERT_EQ(phi.size(), 2U);
  EXPECT_EQ(phi[0], phi0);
  EXPECT_EQ(phi[1], phi1);
}

// A cube is symmetric under reflections (S2, S4) and, for S4, under exchanging i and j; the
// octant sums add in another order, so equal up to rounding.
TEST(Sweep3d, the_plain_loop_is_symmetric_on_a_cube) {
  for (const std::int64_t angles : {1, 3}) {
    Sweep3dParams p;
    p.angles = angles;
    p.iterations = 2;
    p.c = 0.5;
    const tp::exec::Index n = 5;
    const auto phi = tp::kernels::sweep3d_reference({n, n, n}, p);
    const auto at = [&](tp::exec::Index i, tp::exec::Index j, tp::exec::Index k) {
      return phi[static_cast<std::size_t>((i * n + j) * n + k)];
    };
    for (tp::exec::Index i = 0; i < n; ++i) {
      for (tp::exec::Index j = 0; j < n; ++j) {
        for (tp::exec::Index k = 0; k < n; ++k) {
          const double v = at(i, j, k);
          EXPECT_GT(v, 0.0);
          EXPECT_NEAR(at(n - 1 - i, j, k), v, 1e-14);
          EXPECT_NEAR(at(i, n - 1 - j, n - 1 - k), v, 1e-14);
          EXPECT_NEAR(at(j, i, k), v, 1e-14);
        }
      }
    }
    // The centre sees more of the source than a corner.
    EXPECT_GT(at(2, 2, 2), at(0, 0, 0));
  }
}

TEST(Sweep3d, s4_directions_are_the_issues) {
  const auto q = tp::kernels::sweep3d_quadrature(3);
  EXPECT_EQ(q.count, 3);
  EXPECT_EQ(q.weight, 1.0 / 24.0);
  EXPECT_EQ(q.mu[0], (std::array<double, 3>{0.3500212, 0.3500212, 0.8688903}));
  EXPECT_EQ(q.mu[1], (std::array<double, 3>{0.3500212, 0.8688903, 0.3500212}));
  EXPECT_EQ(q.mu[2], (std::array<double, 3>{0.8688903, 0.3500212, 0.3500212}));
  const auto s2 = tp::kernels::sweep3d_quadrature(1);
  EXPECT_EQ(s2.count, 1);
  EXPECT_EQ(s2.weight, 1.0 / 8.0);
  EXPECT_EQ(s2.mu[0][2], 1.0 / std::sqrt(3.0));
}

std::string error_of(const tp::exec::Point<3>& n, const Sweep3dParams& p) {
  auto k = Sweep3d::make(n, p);
  return k ? "" : k.error().message;
}

TEST(Sweep3d, make_refuses_bad_parameters) {
  Sweep3dParams p;
  EXPECT_EQ(error_of({3, 0, 2}, p), "size 0 in dimension 2: must be >= 1");
  EXPECT_EQ(error_of({10000000, 10000000, 10000000}, p), "the grid does not fit in 64-bit offsets");
  EXPECT_EQ(error_of({1000000, 1000000, 100000}, p),
            "the grid's arrays do not fit in 64-bit byte offsets");
  p.angles = 2;
  EXPECT_EQ(error_of({2, 2, 2}, p), "angles 2: must be 1 (S2) or 3 (S4)");
  p = {};
  p.iterations = 0;
  EXPECT_EQ(error_of({2, 2, 2}, p), "iterations 0: must be between 1 and 268435455");
  p.iterations = tp::kernels::sweep3d_max_iterations + 1;
  EXPECT_EQ(error_of({2, 2, 2}, p), "iterations 268435456: must be between 1 and 268435455");
  p = {};
  p.sigma_t = 0.0;
  EXPECT_EQ(error_of({2, 2, 2}, p), "sigma_t 0: must be a finite number > 0");
  p.sigma_t = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of({2, 2, 2}, p), "sigma_t inf: must be a finite number > 0");
  p = {};
  p.source = -0.5;
  EXPECT_EQ(error_of({2, 2, 2}, p), "source -0.5: must be a finite number >= 0");
  p.source = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_of({2, 2, 2}, p), "source nan: must be a finite number >= 0");
  p = {};
  p.c = -1.0;
  EXPECT_EQ(error_of({2, 2, 2}, p), "c -1: must be a finite number >= 0");
  p = {};
  p.paired = 2;
  EXPECT_EQ(error_of({2, 2, 2}, p),
            "paired 2: must be 1 (octants o and o | 4 in one sweep) or 0 (one after another)");
  p = {};
  p.paired = 0;
  auto k = Sweep3d::make({2, 3, 4}, p);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->sweeps(), 9);
}

// Paired (the default, ADR 0021): octants o and o | 4 in one sweep over I x J x 2K, 4 sweeps per
// iteration and the final one; the output is the grid, I x J x K. One octant per sweep: the grid.
TEST(Sweep3d, paired_octants_sweep_a_space_twice_as_long_along_k) {
  Sweep3dParams p;
  p.iterations = 3;
  auto paired = Sweep3d::make({2, 3, 4}, p);
  ASSERT_TRUE(paired.has_value());
  EXPECT_EQ(paired->space(), (tp::exec::Point<3>{2, 3, 8}));
  EXPECT_EQ(paired->sweeps(), 13);
  EXPECT_EQ(paired->sweeps_per_iteration(), 4);
  EXPECT_EQ(paired->output_extents(), (std::vector<tp::exec::Index>{2, 3, 4}));
  EXPECT_EQ(paired->state_bytes(), 2 * 3 * 4 * 10 * 8.0);
  p.paired = 0;
  auto serial = Sweep3d::make({2, 3, 4}, p);
  ASSERT_TRUE(serial.has_value());
  EXPECT_EQ(serial->space(), (tp::exec::Point<3>{2, 3, 4}));
  EXPECT_EQ(serial->sweeps(), 25);
  EXPECT_EQ(serial->state_bytes(), 2 * 3 * 4 * 4 * 8.0);
}

}  // namespace

namespace {

// The tile-cost probe's kernel in sweep 4 (ADR 0034: the probe times octants 0 and 4): on one
// rank, octant 4 in its reflected frame computes the cells octant 0 computes (the same
// directions, a uniform source, vacuum on every upstream face), so the whole space as one tile
// gives the same phi checksum; sweeps outside the run's are refused.
std::uint64_t alone_checksum(int sweep) {
  Sweep3dParams p;
  p.paired = 0;
  p.angles = 3;
  auto k = Sweep3d::make({3, 4, 5}, p);
  EXPECT_TRUE(k.has_value());
  const tp::exec::Box<3> space{{1, 1, 1}, {4, 5, 6}};
  const tp::exec::Box<3> bounds{{0, 0, 0}, {4, 5, 6}};
  std::vector<tp::kernels::Sweep3dCell> storage(static_cast<std::size_t>(bounds.volume()));
  const tp::exec::SlabView<tp::kernels::Sweep3dCell, 3> view(storage.data(), bounds);
  tp::exec::fill_halo(*k, view, space);
  k->sweep_alone(space, sweep);
  k->compute_tile(space, view);
  return k->tile_result(
      space, tp::exec::SlabView<const tp::kernels::Sweep3dCell, 3>(storage.data(), bounds));
}

TEST(Sweep3d, alone_in_sweep_4_computes_octant_0s_cells_in_its_reflected_frame) {
  const std::uint64_t forward = alone_checksum(0);
  EXPECT_NE(forward, 0u);
  EXPECT_EQ(alone_checksum(4), forward);
  EXPECT_DEATH(alone_checksum(8), "sweep");
}

}  // namespace
