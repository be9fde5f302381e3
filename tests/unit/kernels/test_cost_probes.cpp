// The built-in kernels' compute probes (calibration): every kernel measures, bad requests fail.
#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/kernels/cost_probes.hpp>
#include <tilepipe/kernels/sweep3d.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace tp::kernels {
namespace cost_probe_test {

struct Shape {
  std::string kernel;
  std::vector<std::int64_t> cross;
  int along;
};

TEST(BuiltinCostProbe, every_builtin_kernel_measures_a_positive_cost_per_point) {
  const std::vector<Shape> shapes{
      {"wave2d", {16, 1}, 1},    {"wave3d", {4, 4, 1}, 2}, {"wave4d", {3, 3, 3, 1}, 3},
      {"sweep3d", {4, 4, 1}, 2}, {"sor2d", {4, 8, 1}, 2},  {"sor3d", {3, 4, 4, 1}, 3},
      {"sw", {64, 1}, 1},        {"sor2d", {1, 8, 8}, 0},
  };
  for (const auto& s : shapes) {
    SCOPED_TRACE(s.kernel);
    auto probe = builtin_cost_probe(s.kernel, s.cross, s.along, 32, 4096);
    ASSERT_TRUE(probe.has_value()) << probe.error().message;
    for (std::int64_t z : {1, 8, 32}) {
      const double t = (*probe)(z);
      EXPECT_TRUE(std::isfinite(t) && t > 0) << "height " << z << ": " << t;
    }
  }
}

TEST(BuiltinCostProbe, sweep3d_takes_its_parameters) {
  auto values = exec::ParamValues::parse(sweep3d_params, {"angles=3"});
  ASSERT_TRUE(values.has_value());
  auto probe = builtin_cost_probe("sweep3d", {4, 4, 1}, 2, 16, 1024, &*values);
  ASSERT_TRUE(probe.has_value()) << probe.error().message;
  EXPECT_GT((*probe)(16), 0);
  auto bad = exec::ParamValues::parse(sweep3d_params, {"angles=2"});
  ASSERT_TRUE(bad.has_value());
  auto refused = builtin_cost_probe("sweep3d", {4, 4, 1}, 2, 16, 1024, &*bad);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("angles"), std::string::npos) << refused.error().message;
}

TEST(BuiltinCostProbe, unknown_kernels_and_wrong_shapes_are_refused) {
  const std::string all = "(wave2d, wave3d, wave4d, sweep3d, sor2d, sor3d and sw have one)";
  for (const auto& s : std::vector<Shape>{{"lcs", {8, 1}, 1},
                                          {"sw", {8, 8, 1}, 2},
                                          {"sor2d", {8, 1}, 1},
                                          {"wave3d", {4, 0, 1}, 2},
                                          {"wave2d", {8, 1}, 2}}) {
    auto probe = builtin_cost_probe(s.kernel, s.cross, s.along, 8, 64);
    ASSERT_FALSE(probe.has_value()) << s.kernel;
    EXPECT_EQ(probe.error().message, "no compute probe for " + s.kernel + " tiles of " +
                                         std::to_string(s.cross.size()) + " dimensions " + all);
  }
}

}  // namespace cost_probe_test
}  // namespace tp::kernels
