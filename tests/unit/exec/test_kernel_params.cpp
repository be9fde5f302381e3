// Kernel parameters: "name=value" strings against declared specs, defaults, one-line errors.
#include <tilepipe/exec/kernel_params.hpp>

#include <gtest/gtest.h>

#include <array>

namespace tp::exec {
namespace {

constexpr std::array<ParamSpec, 2> specs{{
    {"iterations", ParamType::integer, "1", "sweeps"},
    {"omega", ParamType::real, "1.0", "relaxation"},
}};

TEST(KernelParams, defaults_fill_what_is_not_given) {
  auto v = ParamValues::parse(specs, {"omega=1.25"});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->integer("iterations"), 1);
  EXPECT_EQ(v->real("omega"), 1.25);
  EXPECT_EQ(v->to_string(), "iterations=1, omega=1.25");
  auto w = ParamValues::parse(specs, {"iterations=-7", "omega= 0.5 "});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->integer("iterations"), -7);  // ranges are the kernel's to check
  EXPECT_EQ(w->real("omega"), 0.5);
}

TEST(KernelParams, bad_assignments_name_the_problem) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"iterations"}, "--param 'iterations': expected name=value"},
      {{"=3"}, "--param '=3': expected name=value"},
      {{"sweeps=3"}, "--param sweeps: unknown parameter (choose iterations, omega)"},
      {{"iterations=2", "iterations=3"}, "--param iterations: given twice"},
      {{"iterations=2.5"}, "--param iterations=2.5: the value must be an integer"},
      {{"iterations="}, "--param iterations=: the value must be an integer"},
      {{"omega=nan"}, "--param omega=nan: the value must be a finite number"},
      {{"omega=1e999"}, "--param omega=1e999: the value must be a finite number"},
      {{"omega=1.5x"}, "--param omega=1.5x: the value must be a finite number"},
  };
  for (const auto& [args, message] : cases) {
    auto v = ParamValues::parse(specs, args);
    ASSERT_FALSE(v.has_value()) << message;
    EXPECT_EQ(v.error().message, message);
    EXPECT_EQ(v.error().code, Errc::invalid_argument);
  }
  auto none = ParamValues::parse({}, {"x=1"});
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().message, "--param x: unknown parameter (the kernel takes none)");
}

TEST(KernelParams, describe_lists_every_parameter) {
  EXPECT_EQ(describe_params(specs),
            "iterations (an integer, default 1): sweeps\n"
            "omega (a number, default 1.0): relaxation\n");
}

}  // namespace
}  // namespace tp::exec
