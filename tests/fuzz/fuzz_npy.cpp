// libFuzzer target: the .npy header reader (tp::parse_npy_header), which `tilepipe run --input`
// applies to a user's file before any work; the input is a whole file.
#include "fuzz_check.hpp"

#include <tilepipe/support/npy.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto h = tp::parse_npy_header(bytes, size, "fuzz.npy");
  if (!h) {
    tp::fuzz::check_user_error(h.error());
    return 0;
  }
  // An accepted header describes exactly the file's bytes: its shape's elements after the header.
  const std::size_t element_bytes = tp::npy_element_bytes(h->dtype);
  tp::fuzz::check(element_bytes > 0, "an accepted type of no size");
  std::int64_t elements = 1;
  for (const auto n : h->shape) {
    tp::fuzz::check(n >= 0, "a negative extent");
    elements *= n;
  }
  tp::fuzz::check(elements == h->elements, "elements differ from the shape's product");
  tp::fuzz::check(h->data_offset <= size &&
                      size - h->data_offset == static_cast<std::size_t>(elements) * element_bytes,
                  "the data does not fill the file");
  // One byte more or less is refused.
  tp::fuzz::check(!tp::parse_npy_header(bytes, size + 1, "fuzz.npy"), "a longer file accepted");
  return 0;
}
