// Parsing "name=value" kernel parameters against a kernel's declared ones.
#include <tilepipe/exec/kernel_params.hpp>
#include <tilepipe/support/assert.hpp>
#include <tilepipe/support/parse.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace tp::exec {
namespace {

const char* type_name(ParamType t) {
  return t == ParamType::integer ? "an integer" : "a number";
}

Expected<double> parse_real(const std::string& text, std::string_view name) {
  const std::string t(trim(text));
  char* end = nullptr;
  errno = 0;
  const double v = t.empty() ? 0.0 : std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(v)) {
    return fail(Errc::invalid_argument, "--param " + std::string(name) + "=" + text +
                                            ": the value must be a finite number");
  }
  return v;
}

}  // namespace

Expected<ParamValues> ParamValues::parse(std::span<const ParamSpec> specs,
                                         const std::vector<std::string>& assignments) {
  ParamValues out;
  std::vector<bool> given(specs.size(), false);
  std::vector<std::string> texts(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) texts[i] = std::string(specs[i].default_text);
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      return fail(Errc::invalid_argument, "--param '" + a + "': expected name=value");
    }
    const std::string name = a.substr(0, eq);
    std::size_t i = 0;
    while (i < specs.size() && specs[i].name != name) ++i;
    if (i == specs.size()) {
      std::string known;
      for (const auto& s : specs) known += (known.empty() ? "" : ", ") + std::string(s.name);
      return fail(Errc::invalid_argument,
                  "--param " + name + ": unknown parameter (" +
                      (known.empty() ? std::string("the kernel takes none") : "choose " + known) +
                      ")");
    }
    if (given[i]) {
      return fail(Errc::invalid_argument, "--param " + name + ": given twice");
    }
    given[i] = true;
    texts[i] = a.substr(eq + 1);
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    Value v{std::string(specs[i].name), specs[i].type, texts[i]};
    if (v.type == ParamType::integer) {
      auto n = parse_int(trim(texts[i]), "--param " + v.name);
      if (!n) {
        return fail(Errc::invalid_argument,
                    "--param " + v.name + "=" + texts[i] + ": the value must be an integer");
      }
      v.integer = *n;
    } else {
      auto r = parse_real(texts[i], v.name);
      if (!r) return Unexpected{r.error()};
      v.real = *r;
    }
    out.values_.push_back(std::move(v));
  }
  return out;
}

const ParamValues::Value& ParamValues::find(std::string_view name, ParamType type) const {
  for (const auto& v : values_) {
    if (v.name == name) {
      TP_EXPECTS(v.type == type);
      return v;
    }
  }
  TP_ASSERT(false && "parameter not declared");
  return values_.front();
}

std::int64_t ParamValues::integer(std::string_view name) const {
  return find(name, ParamType::integer).integer;
}

double ParamValues::real(std::string_view name) const {
  return find(name, ParamType::real).real;
}

ParamValues ParamValues::with_integer(std::string_view name, std::int64_t value) const {
  (void)find(name, ParamType::integer);  // the precondition
  ParamValues out = *this;
  for (auto& v : out.values_) {
    if (v.name == name) {
      v.integer = value;
      v.text = std::to_string(value);
    }
  }
  return out;
}

std::string ParamValues::to_string() const {
  std::string s;
  for (const auto& v : values_) s += (s.empty() ? "" : ", ") + v.name + "=" + v.text;
  return s;
}

std::string describe_params(std::span<const ParamSpec> specs) {
  std::string s;
  for (const auto& p : specs) {
    s += std::string(p.name) + " (" + type_name(p.type) + ", default " +
         std::string(p.default_text) + "): " + std::string(p.help) + "\n";
  }
  return s;
}

}  // namespace tp::exec
