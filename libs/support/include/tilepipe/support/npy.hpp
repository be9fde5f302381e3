// NumPy .npy files (C order, little-endian): a writer that fills a file of known shape at any
// offset and makes it visible under its name only when complete (format version 1.0), and a reader
// that checks a file's header and size once and then reads any elements at any offset (versions
// 1.0 to 3.0).
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

/// What the header of an .npy file says, checked against the file's size.
struct NpyHeader {
  std::string dtype;                ///< e.g. "<f4"
  std::vector<std::int64_t> shape;  ///< C order
  std::int64_t elements = 0;        ///< the product of the shape
  std::size_t data_offset = 0;      ///< bytes before the first element
};

/// The longest header this reader accepts (NumPy's own are a few hundred bytes).
inline constexpr std::size_t npy_max_header_bytes = std::size_t{1} << 20;

/// Parses `head`, the first bytes of an .npy file of `file_bytes` bytes in all (at least the
/// magic, version, length and header; more is ignored). Errors (Errc::invalid_argument, naming
/// `name`): no magic, a version other than 1-3, a header cut short or over npy_max_header_bytes,
/// a type other than npy_element_bytes knows, Fortran order, a malformed shape, a file whose size
/// is not the header's plus the shape's elements. Pure: no I/O.
Expected<NpyHeader> parse_npy_header(std::string_view head, std::uint64_t file_bytes,
                                     const std::string& name);

/// "float32" for "<f4" (NumPy's name of a type npy_element_bytes knows), else the string itself.
std::string npy_type_name(std::string_view dtype);

/// The shape as "9x10" (a scalar: "()").
std::string npy_shape_text(std::span<const std::int64_t> shape);

/// An .npy file open for reading: open() reads and checks its header and size once (so that a
/// run refuses a bad file before any work); read() fetches elements at any offset (pread: from
/// several threads, and from processes forked after open()).
class NpyReader {
 public:
  /// Errors name the path: one that cannot be opened or is not a regular file
  /// (Errc::invalid_argument), and parse_npy_header's.
  static Expected<NpyReader> open(const std::string& path);
  NpyReader(NpyReader&& other) noexcept;
  NpyReader& operator=(NpyReader&& other) noexcept;
  NpyReader(const NpyReader&) = delete;
  NpyReader& operator=(const NpyReader&) = delete;
  ~NpyReader();

  [[nodiscard]] const NpyHeader& header() const noexcept { return header_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Reads `bytes` (whole elements) from element `offset` of the C-order array.
  Status read(std::int64_t offset, std::span<std::byte> bytes) const;

 private:
  NpyReader() = default;
  void close_fd() noexcept;
  std::string path_;
  int fd_ = -1;
  NpyHeader header_;
};

/// An .npy file read whole.
struct NpyArray {
  std::string dtype;                ///< e.g. "<f4"
  std::vector<std::int64_t> shape;  ///< C order
  std::vector<std::byte> data;      ///< elements x element bytes
};

/// Reads a whole .npy file (NpyReader: its errors).
Expected<NpyArray> read_npy(const std::string& path);

}  // namespace tp
