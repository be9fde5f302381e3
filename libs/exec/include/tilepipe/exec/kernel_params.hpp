// Kernel parameters: a kernel declares names, types, defaults and help; callers pass "name=value"
// strings (`--param`), parsed and checked here once, before any rank starts.
#pragma once

#include <tilepipe/support/expected.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tp::exec {

/// The type of a parameter's value.
enum class ParamType {
  integer,  ///< a whole decimal number (64-bit)
  real,     ///< a finite decimal number (read as double)
};

/// One parameter a kernel declares: its name, type, default (as text) and one line of help.
struct ParamSpec {
  std::string_view name;
  ParamType type;
  std::string_view default_text;
  std::string_view help;
};

/// A kernel's parameter values: every declared parameter, given or by default.
class ParamValues {
 public:
  /// Parses "name=value" assignments against `specs`: an unknown name, a name given twice, a
  /// missing '=' or a value of the wrong type is an Errc::invalid_argument naming it (and, for an
  /// unknown name, the declared ones). Defaults fill the rest.
  static Expected<ParamValues> parse(std::span<const ParamSpec> specs,
                                     const std::vector<std::string>& assignments);

  /// The value of a declared integer parameter (precondition: declared, integer).
  [[nodiscard]] std::int64_t integer(std::string_view name) const;
  /// The value of a declared real parameter (precondition: declared, real).
  [[nodiscard]] double real(std::string_view name) const;
  /// A copy with the declared integer parameter `name` set to `value` (precondition: declared,
  /// integer); a calibration probe runs a time-loop kernel with its own iteration count.
  [[nodiscard]] ParamValues with_integer(std::string_view name, std::int64_t value) const;
  /// "iterations=1, omega=1.0": every parameter as it was given or defaulted.
  [[nodiscard]] std::string to_string() const;

 private:
  struct Value {
    std::string name;
    ParamType type;
    std::string text;
    std::int64_t integer = 0;
    double real = 0;
  };
  [[nodiscard]] const Value& find(std::string_view name, ParamType type) const;
  std::vector<Value> values_;
};

/// "iterations (integer, default 1): sweeps ..." one line per parameter, for help texts.
std::string describe_params(std::span<const ParamSpec> specs);

}  // namespace tp::exec
