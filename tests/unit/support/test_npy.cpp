// .npy files: what the writer makes is what NumPy expects (header layout, 64-byte alignment) and
// what the reader returns; an uncommitted writer leaves no file; bad paths and files are refused;
// the reader takes NumPy's versions 1.0 and 2.0 and reads any elements at any offset.
#include <tilepipe/support/npy.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tp {
namespace {

namespace fs = std::filesystem;

class Npy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tp_npy_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  fs::path dir_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(Npy, written_in_pieces_at_any_offset_it_reads_back_whole) {
  const std::vector<std::int64_t> shape{3, 5};
  auto w = NpyWriter::create(file("a.npy"), npy_dtype<float>(), shape);
  ASSERT_TRUE(w) << w.error().message;
  std::vector<float> v(15);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f;
  // Rows out of order, as ranks deliver them.
  for (const std::int64_t row : {2, 0, 1}) {
    ASSERT_TRUE(w->write(
        row * 5, std::as_bytes(std::span(v).subspan(static_cast<std::size_t>(row) * 5, 5))));
  }
  EXPECT_FALSE(fs::exists(file("a.npy")));  // not visible before commit
  ASSERT_TRUE(w->commit());
  auto a = read_npy(file("a.npy"));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->dtype, "<f4");
  EXPECT_EQ(a->shape, shape);
  ASSERT_EQ(a->data.size(), v.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(a->data.data(), v.data(), a->data.size()), 0);
  EXPECT_EQ(entries(), 1u);  // no temporary left
}

TEST_F(Npy, the_header_is_numpys_version_one_aligned_to_64_bytes) {
  const std::vector<std::int64_t> shape{7};
  auto w = NpyWriter::create(file("b.npy"), npy_dtype<double>(), shape);
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->commit());
  const std::string bytes = slurp(file("b.npy"));
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t len = static_cast<unsigned char>(bytes[8]) |
                          (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  EXPECT_EQ((10 + len) % 64, 0u);
  EXPECT_EQ(bytes.size(), 10 + len + 7 * 8);
  const std::string h = bytes.substr(10, len);
  EXPECT_EQ(h.rfind("{'descr': '<f8', 'fortran_order': False, 'shape': (7,), }", 0), 0u) << h;
  EXPECT_EQ(h.back(), '\n');
}

TEST_F(Npy, an_uncommitted_writer_leaves_nothing_behind) {
  {
    const std::vector<std::int64_t> shape{4, 4};
    auto w = NpyWriter::create(file("c.npy"), "<i4", shape);
    ASSERT_TRUE(w);
    EXPECT_EQ(entries(), 1u);  // the temporary
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(Npy, bad_paths_and_writes_are_refused) {
  const std::vector<std::int64_t> shape{2};
  EXPECT_FALSE(NpyWriter::create("", "<f4", shape));
  EXPECT_FALSE(NpyWriter::create(dir_.string(), "<f4", shape));  // a directory
  auto missing = NpyWriter::create(file("no/such/dir/x.npy"), "<f4", shape);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("does not exist"), std::string::npos);
  EXPECT_FALSE(NpyWriter::create(file("x.npy"), "<c16", shape));
  const std::vector<std::int64_t> huge{std::int64_t{1} << 40, std::int64_t{1} << 40};
  EXPECT_FALSE(NpyWriter::create(file("x.npy"), "<f4", huge));
  auto w = NpyWriter::create(file("x.npy"), "<f4", shape);
  ASSERT_TRUE(w);
  const std::vector<float> three(3);
  EXPECT_FALSE(w->write(0, std::as_bytes(std::span(three))));  // past the end
  EXPECT_FALSE(w->write(-1, std::as_bytes(std::span(three).subspan(0, 1))));
}

TEST_F(Npy, files_that_are_not_usable_arrays_are_refused_naming_them) {
  std::ofstream(file("junk.npy")) << "not an array";
  auto junk = read_npy(file("junk.npy"));
  ASSERT_FALSE(junk);
  EXPECT_NE(junk.error().message.find("junk.npy"), std::string::npos);
  // A valid header whose data is cut short.
  const std::vector<std::int64_t> shape{4};
  auto w = NpyWriter::create(file("short.npy"), "<f4", shape);
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->commit());
  fs::resize_file(file("short.npy"), fs::file_size(file("short.npy")) - 4);
  auto cut = read_npy(file("short.npy"));
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("needs 16"), std::string::npos) << cut.error().message;
  EXPECT_FALSE(read_npy(file("missing.npy")));
}

/// An .npy file as NumPy writes it: `major` 1 (2-byte header length) or 2 (4 bytes), `header`
/// padded with spaces and '\n' to a multiple of 64 bytes, then `data`.
std::string npy_bytes(int major, std::string header, const std::string& data) {
  const std::size_t fixed = major == 1 ? 10 : 12;
  header.append((64 - (fixed + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t b = 0; b < fixed - 8; ++b)
    out += static_cast<char>((header.size() >> (8 * b)) & 0xff);
  return out + header + data;
}

TEST_F(Npy, the_reader_takes_versions_one_and_two_and_reads_at_any_offset) {
  std::vector<double> v(12);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.5 * static_cast<double>(i) - 4;
  const std::string data(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  for (const int major : {1, 2}) {
    const std::string path = file("v" + std::to_string(major) + ".npy");
    std::ofstream(path, std::ios::binary)
        << npy_bytes(major, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", data);
    auto r = NpyReader::open(path);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->header().dtype, "<f8");
    EXPECT_EQ(r->header().shape, (std::vector<std::int64_t>{3, 4}));
    EXPECT_EQ(r->header().elements, 12);
    EXPECT_EQ(r->header().data_offset, 128u);  // padded to 64 bytes
    std::vector<double> row(3);
    ASSERT_TRUE(r->read(5, std::as_writable_bytes(std::span(row))));
    EXPECT_EQ(row, (std::vector<double>{v[5], v[6], v[7]}));
    EXPECT_FALSE(r->read(10, std::as_writable_bytes(std::span(row))));  // past the end
    auto whole = read_npy(path);
    ASSERT_TRUE(whole) << whole.error().message;
    EXPECT_EQ(std::memcmp(whole->data.data(), v.data(), data.size()), 0);
  }
}

TEST_F(Npy, headers_the_reader_cannot_use_are_refused_saying_why) {
  const std::string f4(16, '\0');
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  EXPECT_TRUE(parse_npy_header(npy_bytes(1, ok, f4), 128 + 16, "x.npy"));
  const auto why = [&](const std::string& bytes, std::uint64_t size) {
    auto h = parse_npy_header(bytes, size, "x.npy");
    EXPECT_FALSE(h) << bytes;
    if (h) return std::string();
    EXPECT_EQ(h.error().code, Errc::invalid_argument);
    const std::string prefix = "'x.npy' is not a usable .npy file: ";
    EXPECT_EQ(h.error().message.rfind(prefix, 0), 0u) << h.error().message;
    return h.error().message.substr(prefix.size());
  };
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string h = ok;
    h.replace(h.find(from), from.size(), to);
    return npy_bytes(1, h, f4);
  };
  EXPECT_EQ(why("PK\x03\x04 a zip file", 20), "no .npy magic");
  EXPECT_EQ(why(with("<f4", ">f4"), 144), "element type '>f4'");
  EXPECT_EQ(why(with("<f4", "|b1"), 144), "element type '|b1'");
  EXPECT_EQ(why(with("False", "True"), 144), "not in C order");
  EXPECT_EQ(why(with("(2, 2)", "(2, x)"), 144), "shape (2, x)");
  EXPECT_EQ(why(with("(2, 2)", "(2 2)"), 144), "shape (2 2)");
  EXPECT_EQ(why(with("(2, 2)", "(-2, 2)"), 144), "shape (-2, 2)");
  EXPECT_EQ(why(with("(2, 2)", "(99999999999999999999,)"), 144), "shape (99999999999999999999,)");
  EXPECT_EQ(why(with("'shape': (2, 2)", "'shap': (2, 2)"), 144), "no shape");
  std::string v4 = npy_bytes(1, ok, f4);
  v4[6] = 4;
  EXPECT_EQ(why(v4, 144), "version 4");
  EXPECT_EQ(why(npy_bytes(1, ok, f4).substr(0, 40), 40), "the header is cut short");
  EXPECT_EQ(why(npy_bytes(1, ok, f4), 140), "it holds 12 data bytes, its shape (2, 2) needs 16");
  EXPECT_EQ(why(npy_bytes(1, ok, f4), 148), "it holds 20 data bytes, its shape (2, 2) needs 16");
  std::string huge = npy_bytes(2, ok, f4);
  huge[11] = 0x7f;  // a 2 GiB header
  EXPECT_EQ(why(huge, 144).rfind("a header of ", 0), 0u);
  // A scalar and a 1-tuple.
  auto scalar = parse_npy_header(with("(2, 2)", "()"), 128 + 4, "x.npy");
  ASSERT_TRUE(scalar) << scalar.error().message;
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->elements, 1);
  auto one = parse_npy_header(with("(2, 2)", "(3,)"), 128 + 12, "x.npy");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->shape, std::vector<std::int64_t>{3});
}

TEST_F(Npy, files_the_reader_cannot_open_are_refused_naming_them) {
  auto missing = NpyReader::open(file("missing.npy"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, Errc::invalid_argument);
  EXPECT_EQ(missing.error().message,
            "cannot read '" + file("missing.npy") + "': No such file or directory");
  auto dir = NpyReader::open(dir_.string());
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message, "cannot read '" + dir_.string() + "': not a regular file");
  std::ofstream(file("empty.npy")).flush();
  auto empty = NpyReader::open(file("empty.npy"));
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("no .npy magic"), std::string::npos);
  EXPECT_EQ(npy_type_name("<f4"), "float32");
  EXPECT_EQ(npy_type_name(">f4"), ">f4");
  EXPECT_EQ(npy_shape_text(std::vector<std::int64_t>{9, 10}), "9x10");
}

}  // namespace
}  // namespace tp
