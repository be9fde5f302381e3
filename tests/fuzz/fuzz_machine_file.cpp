// libFuzzer target: the machine-file reader (tp::model::parse_machine) and its writer's round trip.
#include "fuzz_check.hpp"

#include <tilepipe/model/machine_file.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = tp::model::parse_machine(text, "fuzz.json");
  if (!m) {
    tp::fuzz::check_user_error(m.error());
    return 0;
  }
  // Every accepted value keeps predictions finite and positive.
  tp::fuzz::check(m->compute.t_comp1.count() > 0 && std::isfinite(m->compute.t_comp1.count()),
                  "t_comp1 not finite and positive");
  tp::fuzz::check(m->link.bandwidth_bytes_per_s > 0 && std::isfinite(m->link.bandwidth_bytes_per_s),
                  "bandwidth not finite and positive");
  tp::fuzz::check(m->compute.element_bytes >= 1, "element_bytes < 1");
  // What the writer makes of an accepted file is accepted again (tilepipe calibrate reads back
  // what it writes).
  const std::string again = tp::model::machine_to_json(*m);
  auto back = tp::model::parse_machine(again, "fuzz-roundtrip.json");
  tp::fuzz::check(back.has_value(), back ? "" : back.error().message);
  tp::fuzz::check(back->name == m->name && back->transport == m->transport &&
                      back->compute.element_bytes == m->compute.element_bytes &&
                      back->compute.samples.size() == m->compute.samples.size() &&
                      back->kernels.size() == m->kernels.size(),
                  "the round trip changed the machine");
  return 0;
}
