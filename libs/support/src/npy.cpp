// .npy writing and reading (npy.hpp). Format: the magic "\x93NUMPY", version, a little-endian
// header length, a Python dict literal padded with spaces and '\n' so that the data starts at a
// multiple of 64 bytes, then the elements in C order.
#include <tilepipe/support/npy.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace tp {
namespace {

constexpr std::array<char, 6> magic{'\x93', 'N', 'U', 'M', 'P', 'Y'};
constexpr std::int64_t max_elements = std::int64_t{1} << 50;

Error io_error(const std::string& what, const std::string& path) {
  return Error(Errc::system, what + " '" + path + "': " + std::strerror(errno));
}

std::string header_text(std::string_view dtype, std::span<const std::int64_t> shape) {
  std::string dims;
  for (const auto n : shape) dims += std::to_string(n) + ", ";
  if (shape.size() > 1) dims.erase(dims.size() - 2);  // (3, 4); a 1-tuple keeps its comma: (3,)
  if (shape.size() == 1) dims.pop_back();
  std::string h =
      "{'descr': '" + std::string(dtype) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = magic.size() + 2 + 2 + h.size() + 1;
  h.append((64 - unpadded % 64) % 64, ' ');
  h += '\n';
  return h;
}

}  // namespace

std::size_t npy_element_bytes(std::string_view dtype) noexcept {
  for (const std::string_view t : {"<f4", "<i4", "<u4"}) {
    if (dtype == t) return 4;
  }
  for (const std::string_view t : {"<f8", "<i8", "<u8"}) {
    if (dtype == t) return 8;
  }
  return 0;
}

Expected<NpyWriter> NpyWriter::create(const std::string& path, std::string_view dtype,
                                      std::span<const std::int64_t> shape) {
  const std::size_t element_bytes = npy_element_bytes(dtype);
  if (element_bytes == 0) {
    return fail(Errc::invalid_argument, "no .npy type '" + std::string(dtype) + "'");
  }
  std::int64_t elements = 1;
  for (const auto n : shape) {
    if (n < 0 || (n > 0 && elements > max_elements / n)) {
      return fail(Errc::out_of_range, "an array of this shape is too large for '" + path + "'");
    }
    elements *= n;
  }
  const std::string h = header_text(dtype, shape);
  if (h.size() > 65535) return fail(Errc::out_of_range, "an .npy header over 64 KiB");
  auto file = OutputFile::make(path);
  if (!file) return Unexpected{file.error()};
  NpyWriter w(std::move(*file));
  w.element_bytes_ = element_bytes;
  w.elements_ = elements;
  auto temp = w.file_.reserve_temp();
  if (!temp) return Unexpected{temp.error()};
  w.fd_ = ::open(temp->c_str(), O_WRONLY | O_CLOEXEC);
  if (w.fd_ < 0) return Unexpected{io_error("cannot open", *temp)};
  std::string head(magic.begin(), magic.end());
  head += '\x01';
  head += '\x00';
  head += static_cast<char>(h.size() & 0xff);
  head += static_cast<char>(h.size() >> 8);
  head += h;
  w.header_ = head.size();
  const auto total =
      static_cast<off_t>(w.header_ + static_cast<std::size_t>(w.elements_) * w.element_bytes_);
  if (::pwrite(w.fd_, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size()) ||
      ::ftruncate(w.fd_, total) != 0) {
    return Unexpected{io_error("cannot write", *temp)};
  }
  return w;
}

NpyWriter::NpyWriter(NpyWriter&& other) noexcept
    : file_(std::move(other.file_)),
      fd_(std::exchange(other.fd_, -1)),
      header_(other.header_),
      element_bytes_(other.element_bytes_),
      elements_(other.elements_) {}

NpyWriter& NpyWriter::operator=(NpyWriter&& other) noexcept {
  if (this != &other) {
    close_fd();
    file_ = std::move(other.file_);
    fd_ = std::exchange(other.fd_, -1);
    header_ = other.header_;
    element_bytes_ = other.element_bytes_;
    elements_ = other.elements_;
  }
  return *this;
}

NpyWriter::~NpyWriter() {
  close_fd();
}  // the OutputFile removes an uncommitted temporary

void NpyWriter::close_fd() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status NpyWriter::write(std::int64_t offset, std::span<const std::byte> bytes) const {
  if (fd_ < 0) return fail(Errc::internal, "the .npy file is not open");
  if (offset < 0 || bytes.size() % element_bytes_ != 0 ||
      offset + static_cast<std::int64_t>(bytes.size() / element_bytes_) > elements_) {
    return fail(Errc::internal, "a write outside the array of '" + path() + "'");
  }
  auto at = static_cast<off_t>(header_ + static_cast<std::size_t>(offset) * element_bytes_);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unexpected{io_error("cannot write", path())};
    done += static_cast<std::size_t>(n);
    at += n;
  }
  return {};
}

Status NpyWriter::commit() {
  if (fd_ < 0) return fail(Errc::internal, "the .npy file is not open");
  if (::fsync(fd_) != 0 || ::close(std::exchange(fd_, -1)) != 0) {
    return Unexpected{io_error("cannot write", path())};
  }
  return file_.commit();
}

std::string npy_type_name(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> names{{
      {"<f4", "float32"},
      {"<f8", "float64"},
      {"<i4", "int32"},
      {"<i8", "int64"},
      {"<u4", "uint32"},
      {"<u8", "uint64"},
  }};
  for (const auto& [d, n] : names) {
    if (d == dtype) return std::string(n);
  }
  return std::string(dtype);
}

std::string npy_shape_text(std::span<const std::int64_t> shape) {
  if (shape.empty()) return "()";
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

Expected<NpyHeader> parse_npy_header(std::string_view head, std::uint64_t file_bytes,
                                     const std::string& name) {
  const auto bad = [&](const std::string& why) {
    return Unexpected{
        Error(Errc::invalid_argument, "'" + name + "' is not a usable .npy file: " + why)};
  };
  if (head.size() < 10 || !std::equal(magic.begin(), magic.end(), head.begin())) {
    return bad("no .npy magic");
  }
  const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(head[i]) & 0xffU; };
  const std::size_t major = byte(6);
  std::size_t len = 0;
  std::size_t at = 0;
  if (major == 1) {
    len = byte(8) | (byte(9) << 8);
    at = 10;
  } else if (major == 2 || major == 3) {
    if (head.size() < 12) return bad("the header is cut short");
    len = byte(8) | (byte(9) << 8) | (byte(10) << 16) | (byte(11) << 24);
    at = 12;
  } else {
    return bad("version " + std::to_string(major));
  }
  if (len > npy_max_header_bytes) return bad("a header of " + std::to_string(len) + " bytes");
  if (head.size() - at < len || file_bytes < at + len) return bad("the header is cut short");
  const std::string_view h = head.substr(at, len);
  const auto value_of = [&](std::string_view key) -> std::string_view {
    const std::string quoted = "'" + std::string(key) + "':";
    const auto k = h.find(quoted);
    if (k == std::string_view::npos) return {};
    const auto v = h.find_first_not_of(' ', k + quoted.size());
    if (v == std::string_view::npos) return {};
    if (h[v] == '\'') {
      const auto e = h.find('\'', v + 1);
      return e == std::string_view::npos ? std::string_view{} : h.substr(v + 1, e - v - 1);
    }
    if (h[v] == '(') {
      const auto e = h.find(')', v);
      return e == std::string_view::npos ? std::string_view{} : h.substr(v, e - v + 1);
    }
    const auto e = h.find_first_of(",}", v);
    return e == std::string_view::npos ? std::string_view{} : h.substr(v, e - v);
  };
  NpyHeader out;
  out.dtype = std::string(value_of("descr"));
  const std::size_t eb = npy_element_bytes(out.dtype);
  if (eb == 0) return bad("element type '" + out.dtype + "'");
  if (value_of("fortran_order") != "False") return bad("not in C order");
  const std::string_view shape = value_of("shape");
  if (shape.size() < 2) return bad("no shape");
  std::int64_t elements = 1;
  // "(9, 10)", "(7,)", "()": numbers between the parentheses, each followed by a comma but the
  // last of two or more.
  for (std::size_t p = 1; p + 1 < shape.size();) {
    while (p + 1 < shape.size() && shape[p] == ' ') ++p;
    if (p + 1 >= shape.size()) break;
    std::int64_t n = 0;
    const std::size_t first = p;
    while (p + 1 < shape.size() && shape[p] >= '0' && shape[p] <= '9') {
      const std::int64_t digit = shape[p] - '0';
      if (n > (max_elements - digit) / 10) return bad("shape " + std::string(shape));
      n = n * 10 + digit;
      ++p;
    }
    if (p == first) return bad("shape " + std::string(shape));
    if (n > 0 && elements > max_elements / n) return bad("shape " + std::string(shape));
    out.shape.push_back(n);
    elements *= n;
    while (p + 1 < shape.size() && shape[p] == ' ') ++p;
    if (p + 1 < shape.size()) {
      if (shape[p] != ',') return bad("shape " + std::string(shape));
      ++p;
    }
  }
  out.elements = elements;
  out.data_offset = at + len;
  const std::uint64_t data = file_bytes - out.data_offset;
  const std::uint64_t needs = static_cast<std::uint64_t>(elements) * eb;
  if (data != needs) {
    return bad("it holds " + std::to_string(data) + " data bytes, its shape " + std::string(shape) +
               " needs " + std::to_string(needs));
  }
  return out;
}

Expected<NpyReader> NpyReader::open(const std::string& path) {
  NpyReader r;
  r.path_ = path;
  r.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const auto cannot = [&](const char* why) {
    return Unexpected{Error(Errc::invalid_argument, "cannot read '" + path + "': " + why)};
  };
  if (r.fd_ < 0) return cannot(std::strerror(errno));
  struct stat st {};
  if (::fstat(r.fd_, &st) != 0) return cannot(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return cannot("not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // The fixed part first (magic, version, length), then the header it announces.
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(size, 12)), '\0');
  const auto fill = [&](std::size_t from) -> bool {
    std::size_t done = from;
    while (done < head.size()) {
      const ssize_t n =
          ::pread(r.fd_, head.data() + done, head.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  };
  if (!fill(0)) return cannot(std::strerror(errno));
  if (head.size() >= 10 && std::equal(magic.begin(), magic.end(), head.begin())) {
    const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(head[i]) & 0xffU; };
    std::size_t len = byte(8) | (byte(9) << 8);
    std::size_t at = 10;
    if (byte(6) != 1 && head.size() >= 12) {
      len |= (byte(10) << 16) | (byte(11) << 24);
      at = 12;
    }
    const auto want = static_cast<std::size_t>(
        std::min<std::uint64_t>(size, at + std::min(len, npy_max_header_bytes)));
    const std::size_t had = head.size();
    if (want > had) {
      head.resize(want);
      if (!fill(had)) return cannot(std::strerror(errno));
    }
  }
  auto header = parse_npy_header(head, size, path);
  if (!header) return Unexpected{header.error()};
  r.header_ = std::move(*header);
  return r;
}

NpyReader::NpyReader(NpyReader&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      header_(std::move(other.header_)) {}

NpyReader& NpyReader::operator=(NpyReader&& other) noexcept {
  if (this != &other) {
    close_fd();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    header_ = std::move(other.header_);
  }
  return *this;
}

NpyReader::~NpyReader() {
  close_fd();
}

void NpyReader::close_fd() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status NpyReader::read(std::int64_t offset, std::span<std::byte> bytes) const {
  if (fd_ < 0) return fail(Errc::internal, "the .npy file is not open");
  const std::size_t eb = npy_element_bytes(header_.dtype);
  if (offset < 0 || bytes.size() % eb != 0 ||
      offset + static_cast<std::int64_t>(bytes.size() / eb) > header_.elements) {
    return fail(Errc::internal, "a read outside the array of '" + path_ + "'");
  }
  auto at = static_cast<off_t>(header_.data_offset + static_cast<std::size_t>(offset) * eb);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd_, bytes.data() + done, bytes.size() - done, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unexpected{io_error("cannot read", path_)};
    if (n == 0) {
      return fail(Errc::system, "cannot read '" + path_ + "': it was cut short while in use");
    }
    done += static_cast<std::size_t>(n);
    at += n;
  }
  return {};
}

Expected<NpyArray> read_npy(const std::string& path) {
  auto reader = NpyReader::open(path);
  if (!reader) return Unexpected{reader.error()};
  const NpyHeader& h = reader->header();
  NpyArray out{h.dtype, h.shape, {}};
  out.data.resize(static_cast<std::size_t>(h.elements) * npy_element_bytes(h.dtype));
  TP_TRY(reader->read(0, out.data));
  return out;
}

}  // namespace tp
