// .npy writing and reading (npy.hpp). Format: the magic "\x93NUMPY", version, a little-endian
// header length, a Python dict literal padded with spaces and '\n' so that the data starts at a
// multiple of 64 bytes, then the elements in C order.
#include <tilepipe/support/npy.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
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

Expected<NpyArray> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Unexpected{io_error("cannot read", path)};
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto bad = [&](const std::string& why) {
    return Unexpected{
        Error(Errc::invalid_argument, "'" + path + "' is not a usable .npy file: " + why)};
  };
  if (bytes.size() < 10 || !std::equal(magic.begin(), magic.end(), bytes.begin())) {
    return bad("no .npy magic");
  }
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t len = 0;
  std::size_t at = 0;
  if (major == 1) {
    len = static_cast<unsigned char>(bytes[8]) |
          (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    at = 10;
  } else if ((major == 2 || major == 3) && bytes.size() >= 12) {
    for (int i = 3; i >= 0; --i)
      len = (len << 8) | static_cast<unsigned char>(bytes[8 + static_cast<std::size_t>(i)]);
    at = 12;
  } else {
    return bad("version " + std::to_string(major));
  }
  if (bytes.size() - at < len) return bad("the header is cut short");
  const std::string h = bytes.substr(at, len);
  at += len;
  const auto value_of = [&](const std::string& key) -> std::string {
    const auto k = h.find("'" + key + "':");
    if (k == std::string::npos) return "";
    auto v = h.find_first_not_of(' ', k + key.size() + 3);
    if (v == std::string::npos) return "";
    if (h[v] == '\'') {
      const auto e = h.find('\'', v + 1);
      return e == std::string::npos ? "" : h.substr(v + 1, e - v - 1);
    }
    if (h[v] == '(') {
      const auto e = h.find(')', v);
      return e == std::string::npos ? "" : h.substr(v, e - v + 1);
    }
    const auto e = h.find_first_of(",}", v);
    return e == std::string::npos ? "" : h.substr(v, e - v);
  };
  NpyArray out;
  out.dtype = value_of("descr");
  const std::size_t eb = npy_element_bytes(out.dtype);
  if (eb == 0) return bad("element type '" + out.dtype + "'");
  if (value_of("fortran_order") != "False") return bad("not in C order");
  const std::string shape = value_of("shape");
  if (shape.size() < 2) return bad("no shape");
  std::int64_t elements = 1;
  for (std::size_t p = 1; p + 1 < shape.size();) {
    while (p + 1 < shape.size() && (shape[p] == ' ' || shape[p] == ',')) ++p;
    if (p + 1 >= shape.size()) break;
    std::size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(shape.substr(p), &used);
    } catch (const std::exception&) {
      return bad("shape " + shape);
    }
    if (n < 0 || (n > 0 && elements > max_elements / n)) return bad("shape " + shape);
    out.shape.push_back(n);
    elements *= n;
    p += used;
  }
  if (bytes.size() - at != static_cast<std::size_t>(elements) * eb) {
    return bad("it holds " + std::to_string(bytes.size() - at) + " data bytes, its shape " + shape +
               " needs " + std::to_string(static_cast<std::size_t>(elements) * eb));
  }
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data() + at);
  out.data.assign(data, data + (bytes.size() - at));
  return out;
}

}  // namespace tp
