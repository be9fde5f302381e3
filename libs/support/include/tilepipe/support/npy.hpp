// NumPy .npy files (format version 1.0, C order, little-endian): a writer that fills a file of
// known shape at any offset and makes it visible under its name only when complete, and a reader.
#pragma once

#include <tilepipe/support/expected.hpp>
#include <tilepipe/support/output_file.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tp {

/// The .npy type string of T ("<f4", "<f8", "<i4", "<i8", "<u8", ...).
template <class T>
constexpr std::string_view npy_dtype() noexcept {
  if constexpr (std::is_same_v<T, float>) {
    return "<f4";
  } else if constexpr (std::is_same_v<T, double>) {
    return "<f8";
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return "<i4";
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return "<i8";
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return "<u8";
  } else {
    static_assert(sizeof(T) == 0, "no .npy type for this element type");
    return "";
  }
}

/// The bytes per element of a .npy type string ("<f4" -> 4), or 0 for one this reader refuses.
std::size_t npy_element_bytes(std::string_view dtype) noexcept;

/// An .npy file being written, through an OutputFile (output_file.hpp: the path checked first, a
/// temporary beside it renamed when complete). create() makes the temporary with the header and
/// room for every element; write() puts elements at any offset (pwrite: several writers may share
/// the file, processes forked after create() too); commit() makes it the file at `path`.
/// Destroyed uncommitted, by the process that created it, the temporary is removed: a failed run
/// leaves neither a partial file nor a temporary one.
class NpyWriter {
 public:
  static Expected<NpyWriter> create(const std::string& path, std::string_view dtype,
                                    std::span<const std::int64_t> shape);
  NpyWriter(NpyWriter&& other) noexcept;
  NpyWriter& operator=(NpyWriter&& other) noexcept;
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;
  ~NpyWriter();

  /// Writes `bytes` (whole elements) at element `offset` of the C-order array.
  Status write(std::int64_t offset, std::span<const std::byte> bytes) const;
  /// Flushes and renames the file to its name; afterwards the writer holds nothing.
  Status commit();
  [[nodiscard]] const std::string& path() const noexcept { return file_.path(); }
  [[nodiscard]] std::int64_t elements() const noexcept { return elements_; }

 private:
  explicit NpyWriter(OutputFile file) : file_(std::move(file)) {}
  void close_fd() noexcept;
  OutputFile file_;
  int fd_ = -1;
  std::size_t header_ = 0;
  std::size_t element_bytes_ = 0;
  std::int64_t elements_ = 0;
};

/// An .npy file read whole.
struct NpyArray {
  std::string dtype;                ///< e.g. "<f4"
  std::vector<std::int64_t> shape;  ///< C order
  std::vector<std::byte> data;      ///< elements x element bytes
};

/// Reads a C-order, little-endian .npy file of version 1.0 to 3.0. Errors (naming the file): not
/// readable, not .npy, Fortran order, a type this reader does not know, a size that does not match.
Expected<NpyArray> read_npy(const std::string& path);

}  // namespace tp
