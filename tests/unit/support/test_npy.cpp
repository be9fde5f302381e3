// .npy files: what the writer makes is what NumPy expects (header layout, 64-byte alignment) and
// what the reader returns; an uncommitted writer leaves no file; bad paths and files are refused.
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

}  // namespace
}  // namespace tp
