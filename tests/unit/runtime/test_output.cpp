// The runtime's door writes the computed array: the .npy file equals the plain loop's interior
// bit for bit on ranks x threads, schedules, face modes and the communication thread; a run that
// fails or cannot run leaves no file behind, not even a temporary one.
#include <tilepipe/kernels/score_matrix.hpp>
#include <tilepipe/kernels/sw.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/run.hpp>
#include <tilepipe/support/npy.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>

namespace {

namespace fs = std::filesystem;
using tp::exec::Index;
using tp::runtime::RunOptions;

class RunOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tp_out_" + std::to_string(::getpid()) + "_" +
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

/// The interior of the plain loop's array (indices 1..n in every dimension), C order.
std::vector<float> interior(const std::vector<Index>& n) {
  const auto whole = tp::kernels::wave_reference(n);
  std::vector<float> out;
  if (n.size() == 2) {
    for (Index i = 1; i <= n[0]; ++i) {
      for (Index j = 1; j <= n[1]; ++j)
        out.push_back(whole[static_cast<std::size_t>(i * (n[1] + 1) + j)]);
    }
  } else {
    for (Index i = 1; i <= n[0]; ++i) {
      for (Index j = 1; j <= n[1]; ++j) {
        for (Index k = 1; k <= n[2]; ++k) {
          out.push_back(whole[static_cast<std::size_t>((i * (n[1] + 1) + j) * (n[2] + 1) + k)]);
        }
      }
    }
  }
  return out;
}

void expect_array(const std::string& path, const std::vector<Index>& n) {
  auto a = tp::read_npy(path);
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->dtype, "<f4");
  EXPECT_EQ(a->shape, std::vector<std::int64_t>(n.begin(), n.end()));
  const auto want = interior(n);
  ASSERT_EQ(a->data.size(), want.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(a->data.data(), want.data(), a->data.size()), 0);
}

TEST_F(RunOutput, the_array_is_the_plain_loops_on_ranks_x_threads) {
  struct Case {
    int nodes, cpus;
    tp::plan::ScheduleKind schedule;
    tp::exec::FaceMode faces;
    bool comm_thread;
  };
  using tp::exec::FaceMode;
  using tp::plan::ScheduleKind;
  for (const Case& c : {Case{1, 1, ScheduleKind::overlap, FaceMode::automatic, false},
                        Case{2, 1, ScheduleKind::blocking, FaceMode::copy, false},
                        Case{3, 1, ScheduleKind::overlap, FaceMode::direct, false},
                        Case{2, 2, ScheduleKind::overlap, FaceMode::copy, false},
                        Case{2, 2, ScheduleKind::overlap, FaceMode::copy, true},
                        Case{1, 2, ScheduleKind::blocking, FaceMode::automatic, false}}) {
    const std::vector<Index> n{23, 9, 71};
    RunOptions o;
    o.nodes = c.nodes;
    o.cpus = c.cpus;
    o.tile_height = 10;  // does not divide 71
    o.schedule = c.schedule;
    o.faces = c.faces;
    o.comm_thread = c.comm_thread;
    o.comm.sync = tp::comm::SyncMode::block;
    o.output = file("u.npy");
    auto r = tp::runtime::run(*tp::kernels::Wave<3>::make({23, 9, 71}), n, o);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    SCOPED_TRACE(std::to_string(c.nodes) + " x " + std::to_string(c.cpus));
    expect_array(o.output, n);
    EXPECT_EQ(entries(), 1u);
    fs::remove(o.output);
  }
  // Two dimensions, tiny extents.
  RunOptions o;
  o.nodes = 2;
  o.cpus = 1;
  o.tile_height = 2;
  o.comm.sync = tp::comm::SyncMode::block;
  o.output = file("v.npy");
  auto r = tp::runtime::run(*tp::kernels::Wave<2>::make({5, 3}), {5, 3}, o);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  expect_array(o.output, {5, 3});
}

TEST_F(RunOutput, a_failed_run_leaves_no_file) {
  RunOptions o;
  o.nodes = 2;
  o.cpus = 1;
  o.tile_height = 8;
  o.comm.sync = tp::comm::SyncMode::block;
  o.output = file("u.npy");
  ::setenv("TILEPIPE_FAULT_KILL_RANK", "1", 1);
  auto r = tp::runtime::run(*tp::kernels::Wave<2>::make({64, 64}), {64, 64}, o);
  ::unsetenv("TILEPIPE_FAULT_KILL_RANK");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(entries(), 0u);
}

TEST_F(RunOutput, bad_outputs_are_refused_before_any_rank_starts) {
  RunOptions o;
  o.nodes = 2;
  o.comm.sync = tp::comm::SyncMode::block;
  o.output = file("missing/u.npy");
  auto r = tp::runtime::run(*tp::kernels::Wave<2>::make({16, 16}), {16, 16}, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.error().is_user_error());
  EXPECT_EQ(r.error().option, "output");
  EXPECT_EQ(r.error().rank, -1);
  // A frontier kernel passes only faces: it has no array to write.
  const auto& m = tp::kernels::ScoreMatrix::blosum62();
  const std::vector<std::uint8_t> q(20, 1);
  auto sw = tp::kernels::SwKernel::make(m, q, q, {10, 1});
  ASSERT_TRUE(sw.has_value());
  o.output = file("sw.npy");
  auto f = tp::runtime::run(*sw, {20, 20}, o);
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().option, "output");
  EXPECT_EQ(entries(), 0u);
}

}  // namespace
