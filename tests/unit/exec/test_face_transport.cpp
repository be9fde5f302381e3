// Unit tests of the transport sizing for faces: face bytes from a plan, eager slot sizes.
#include <tilepipe/exec/face_transport.hpp>

#include <gtest/gtest.h>

namespace {

tp::plan::Plan plan_of(std::vector<std::int64_t> size, std::int64_t height, std::int64_t nodes) {
  tp::plan::PlanRequest r;
  r.size = size;
  r.deps = tp::plan::DependenceMatrix::unit(static_cast<int>(size.size()));
  r.tile_height = height;
  r.nodes = nodes;
  return *tp::plan::Plan::make(r);
}

TEST(FaceTransport, face_bytes_follow_the_tile_extents_across_node_boundaries) {
  // 16x16x4096 on 2 nodes: mesh 2x1, tiles 8x16x1024; the face across dimension 1 is 16x1024.
  const auto p = plan_of({16, 16, 4096}, 1024, 2);
  ASSERT_EQ(p.tiling().tile_extents(), (std::vector<std::int64_t>{8, 16, 1024}));
  EXPECT_EQ(tp::exec::max_face_bytes(p, 4, 1, false), 16u * 1024u * 4u);
  EXPECT_EQ(tp::exec::max_face_bytes(p, 4, 1, true), 17u * 1025u * 4u);
  // One node: no face crosses a node boundary.
  EXPECT_EQ(tp::exec::max_face_bytes(plan_of({16, 16, 4096}, 1024, 1), 4, 1, false), 0u);
}

TEST(FaceTransport, eager_slots_grow_to_the_face_up_to_the_cap) {
  tp::comm::Config base;
  const auto same = tp::exec::eager_faces_config(base, base.eager_max_bytes);
  EXPECT_EQ(same.slot_bytes, base.slot_bytes);
  const auto grown = tp::exec::eager_faces_config(base, 100000);
  EXPECT_EQ(grown.slot_bytes, 100032u);  // rounded up to 64 bytes
  EXPECT_EQ(grown.eager_max_bytes, grown.slot_bytes);
  EXPECT_TRUE(grown.validate());
  const auto capped = tp::exec::eager_faces_config(base, tp::exec::max_face_slot_bytes + 1);
  EXPECT_EQ(capped.slot_bytes, base.slot_bytes);
}

}  // namespace
