// The runtime's door starts a resident kernel from an input array (RunOptions::input): every rank
// reads its points, the verification starts from the same array, and the result equals the plain
// loop started from it, bit for bit, on ranks x threads; files that do not fit are refused before
// any work, leaving no output file behind.
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/run.hpp>
#include <tilepipe/support/npy.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

namespace fs = std::filesystem;
using tp::exec::Box;
using tp::exec::Index;
using tp::exec::Point;
using tp::exec::SlabView;
using tp::runtime::RunOptions;

/// A relaxation that reads each point's own value before the sweep:
/// A[i][j] = A[i][j] / 2 + A[i-1][j] / 4 + A[i][j-1] / 4, A = i - 2j on the border.
struct Relax {
  static constexpr int dims = 2;
  static constexpr tp::exec::Storage storage = tp::exec::Storage::resident;
  using value_type = double;
  using result_type = std::uint64_t;
  static constexpr std::array<tp::exec::Dependence<2>, 2> deps{{{1, 0}, {0, 1}}};

  static result_type combine(result_type a, result_type b) { return a + b; }
  static double boundary(Index i, Index j) { return static_cast<double>(i - 2 * j); }
  value_type boundary_value(const Point<2>& p) const { return boundary(p[0], p[1]); }
  static double update(double own, double up, double left) {
    return 0.5 * own + 0.25 * up + 0.25 * left;
  }
  void compute_tile(const Box<2>& box, const SlabView<double, 2>& slab) const {
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      double* row = slab.at(first);
      const double* up = row - slab.stride(0);
      for (Index j = 0; j < box.extent(1); ++j) row[j] = update(row[j], up[j], row[j - 1]);
    });
  }
  result_type tile_result(const Box<2>& box, const SlabView<const double, 2>& slab) const {
    result_type sum = 0;
    tp::exec::for_each_row(box, [&](const Point<2>& first) {
      for (Index j = 0; j < box.extent(1); ++j)
        sum += std::bit_cast<std::uint64_t>(slab.at(first)[j]);
    });
    return sum;
  }
};

/// The plain loop: `sweeps` sweeps over the interior `start` (n1 x n2, C order).
std::vector<double> plain_loop(std::vector<double> a, Index n1, Index n2, int sweeps) {
  const auto at = [&](Index i, Index j) -> double {
    if (i == 0 || j == 0) return Relax::boundary(i, j);
    return a[static_cast<std::size_t>((i - 1) * n2 + (j - 1))];
  };
  for (int s = 0; s < sweeps; ++s) {
    for (Index i = 1; i <= n1; ++i) {
      for (Index j = 1; j <= n2; ++j) {
        a[static_cast<std::size_t>((i - 1) * n2 + (j - 1))] =
            Relax::update(at(i, j), at(i - 1, j), at(i, j - 1));
      }
    }
  }
  return a;
}

class RunInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tp_in_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  template <class T>
  void write(const std::string& path, const std::vector<std::int64_t>& shape,
             const std::vector<T>& values) const {
    auto w = tp::NpyWriter::create(path, tp::npy_dtype<T>(), shape);
    ASSERT_TRUE(w.has_value()) << w.error().message;
    ASSERT_TRUE(w->write(0, std::as_bytes(std::span(values))));
    ASSERT_TRUE(w->commit());
  }
  fs::path dir_;
};

TEST_F(RunInput, the_run_starts_from_the_input_on_ranks_x_threads) {
  const Index n1 = 29, n2 = 37;
  std::vector<double> start(static_cast<std::size_t>(n1 * n2));
  for (std::size_t x = 0; x < start.size(); ++x) start[x] = static_cast<double>(x % 97) / 7.0 - 3;
  write(file("in.npy"), {n1, n2}, start);
  struct Case {
    int nodes, cpus, sweeps;
    tp::exec::FaceMode faces;
    bool comm_thread;
  };
  using tp::exec::FaceMode;
  for (const Case& c :
       {Case{1, 1, 1, FaceMode::automatic, false}, Case{2, 1, 1, FaceMode::copy, false},
        Case{1, 2, 2, FaceMode::automatic, false}, Case{3, 1, 1, FaceMode::direct, false},
        Case{2, 2, 2, FaceMode::copy, true}}) {
    SCOPED_TRACE(std::to_string(c.nodes) + " x " + std::to_string(c.cpus) + ", " +
                 std::to_string(c.sweeps) + " sweep(s)");
    RunOptions o;
    o.nodes = c.nodes;
    o.cpus = c.cpus;
    o.tile_height = 5;
    o.faces = c.faces;
    o.comm_thread = c.comm_thread;
    o.sweeps = c.sweeps;
    o.comm.sync = tp::comm::SyncMode::block;
    o.verify = true;
    o.input = file("in.npy");
    o.output = file("out.npy");
    auto r = tp::runtime::run(Relax{}, {n1, n2}, o);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->verified, true);  // the reference started from the same array
    const auto want = plain_loop(start, n1, n2, c.sweeps);
    auto got = tp::read_npy(o.output);
    ASSERT_TRUE(got.has_value()) << got.error().message;
    ASSERT_EQ(got->data.size(), want.size() * sizeof(double));
    EXPECT_EQ(std::memcmp(got->data.data(), want.data(), got->data.size()), 0);
    std::uint64_t sum = 0;
    for (const double v : want) sum += std::bit_cast<std::uint64_t>(v);
    EXPECT_EQ(r->result, sum);
    fs::remove(o.output);
  }
  // Without an input the run starts from zeros, which this input is not: the results differ.
  RunOptions o;
  o.nodes = 2;
  o.comm.sync = tp::comm::SyncMode::block;
  auto zeros = tp::runtime::run(Relax{}, {n1, n2}, o);
  ASSERT_TRUE(zeros.has_value()) << zeros.error().message;
  std::uint64_t sum = 0;
  for (const double v : plain_loop(std::vector<double>(start.size()), n1, n2, 1)) {
    sum += std::bit_cast<std::uint64_t>(v);
  }
  EXPECT_EQ(zeros->result, sum);
}

TEST_F(RunInput, inputs_that_do_not_fit_are_refused_before_any_work) {
  write(file("f8.npy"), {6, 5}, std::vector<double>(30));
  write(file("f4.npy"), {5, 6}, std::vector<float>(30));
  std::ofstream(file("junk.npy")) << "junk";
  RunOptions o;
  o.nodes = 2;
  o.comm.sync = tp::comm::SyncMode::block;
  o.output = file("out.npy");
  const auto refusal = [&](const std::string& input, const tp::plan::Index& size) {
    o.input = input;
    auto r = tp::runtime::run(Relax{}, size, o);
    EXPECT_FALSE(r.has_value()) << input;
    if (r) return std::string();
    EXPECT_EQ(r.error().option, "input");
    EXPECT_EQ(r.error().rank, -1);
    EXPECT_TRUE(r.error().is_user_error()) << r.error().message;
    EXPECT_EQ(entries(), 3u);  // no output file, not even a temporary
    return r.error().message;
  };
  EXPECT_EQ(refusal(file("f8.npy"), {5, 6}),
            "'" + file("f8.npy") + "' holds 6x5 float64 values, the kernel's array is 5x6 float64");
  EXPECT_EQ(refusal(file("f4.npy"), {5, 6}),
            "'" + file("f4.npy") + "' holds 5x6 float32 values, the kernel's array is 5x6 float64");
  EXPECT_EQ(refusal(file("junk.npy"), {5, 6}),
            "'" + file("junk.npy") + "' is not a usable .npy file: no .npy magic");
  EXPECT_EQ(refusal(file("none.npy"), {5, 6}),
            "cannot read '" + file("none.npy") + "': No such file or directory");
  // A frontier kernel passes only faces: it has no array to start from.
  const auto& m = tp::kernels::ScoreMatrix::blosum62();
  const std::vector<std::uint8_t> q(20, 1);
  auto sw = tp::kernels::SwKernel::make(m, q, q, {10, 1});
  ASSERT_TRUE(sw.has_value());
  o.input = file("f8.npy");
  o.output.clear();
  auto f = tp::runtime::run(*sw, {20, 20}, o);
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().option, "input");
  EXPECT_EQ(f.error().message,
            "needs a kernel that keeps its array (this one passes only faces between its tiles)");
}

}  // namespace
