// exec::FrontierTileCostProbe: which tiles a pass computes, and which faces each one is given;
// exec::ColdCopyProbe: what a pass copies, and a region that cannot be mapped.
#include <tilepipe/exec/calibration.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tp::exec {
namespace frontier_probe_test {

// A frontier kernel that records every tile and checks its faces: the face entering along
// dimension 1 is the one the tile to its left wrote (its lo[1]), or the boundary's (-1).
struct RecordingKernel {
  static constexpr int dims = 2;
  static constexpr Storage storage = Storage::frontier;
  using face_type = std::int64_t;
  using result_type = std::int64_t;
  static constexpr std::array<Dependence<2>, 2> deps{{{1, 0}, {0, 1}}};
  static result_type combine(result_type a, result_type b) noexcept { return a + b; }

  struct Log {
    std::vector<Box<2>> tiles;
    std::vector<std::int64_t> left;  // what the face along dimension 1 held
  };
  std::shared_ptr<Log> log = std::make_shared<Log>();

  [[nodiscard]] std::size_t face_size(int k, const Box<2>& box) const noexcept {
    return static_cast<std::size_t>(box.extent(1 - k));
  }
  void boundary_face(int, const Box<2>&, std::span<std::int64_t> face) const noexcept {
    for (auto& v : face) v = -1;
  }
  result_type compute_tile(const Box<2>& box, const FaceSet<const std::int64_t, 2>& in,
                           const FaceSet<std::int64_t, 2>& out) const {
    log->tiles.push_back(box);
    log->left.push_back(in[1].front());
    EXPECT_EQ(in[1].size(), static_cast<std::size_t>(box.extent(0)));
    for (auto& v : out[1]) v = box.lo[1];
    for (auto& v : out[0]) v = 0;
    return 0;
  }
};

TEST(FrontierTileCostProbe, walks_a_row_of_tiles_passing_each_face_to_the_next) {
  const Point<2> size = FrontierTileCostProbe<RecordingKernel>::row_size({3, 1}, 1, 4, 50);
  EXPECT_EQ(size[0], 3);
  EXPECT_EQ(size[1] % 4, 0);
  EXPECT_GE(size[0] * size[1], 50);
  RecordingKernel k;
  FrontierTileCostProbe<RecordingKernel> probe(k, size, 1);
  const double per_point = probe.pass(4);
  EXPECT_TRUE(std::isfinite(per_point));
  EXPECT_GE(per_point, 0.0);
  const auto& log = *k.log;
  ASSERT_EQ(log.tiles.size(), static_cast<std::size_t>(size[1] / 4));
  for (std::size_t t = 0; t < log.tiles.size(); ++t) {
    const auto lo = static_cast<Index>(1 + 4 * t);
    EXPECT_EQ(log.tiles[t], (Box<2>{{1, lo}, {4, lo + 4}}));
    EXPECT_EQ(log.left[t], t == 0 ? -1 : lo - 4) << "tile " << t;
  }
  // A second pass at another height starts again from the boundary.
  probe.pass(size[1]);
  ASSERT_EQ(log.tiles.size(), static_cast<std::size_t>(size[1] / 4 + 1));
  EXPECT_EQ(log.left.back(), -1);
}

}  // namespace frontier_probe_test

namespace cold_copy_probe_test {

TEST(ColdCopyProbe, a_pass_copies_whole_blocks_over_the_region) {
  const std::size_t block = std::size_t{3} << 10, region = std::size_t{1} << 20;
  auto probe = ColdCopyProbe::make(block, region);
  ASSERT_TRUE(probe) << probe.error().message;
  EXPECT_EQ(probe->pass_bytes(), region / block * block);  // 341 blocks of 3 KiB
  const double s = probe->pass();
  EXPECT_GT(s, 0.0);
  EXPECT_LT(s, 1e-6);  // seconds per byte: above 1 MB/s on any machine that runs this
}

TEST(ColdCopyProbe, a_region_that_cannot_be_mapped_is_an_error) {
  auto probe = ColdCopyProbe::make(std::size_t{1} << 20, std::size_t{1} << 60);
  ASSERT_FALSE(probe);
  EXPECT_EQ(probe.error().code, Errc::system);
  EXPECT_NE(probe.error().message.find("the copy probe's"), std::string::npos)
      << probe.error().message;
}

}  // namespace cold_copy_probe_test
}  // namespace tp::exec
