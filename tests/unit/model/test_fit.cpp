// Fitting calibration data: the link cost's least squares, monotone compute samples, and that a
// calibrated machine (with notes) survives the machine-file round trip.
#include <tilepipe/model/fit.hpp>
#include <tilepipe/model/machine_file.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using tp::model::ComputeSample;
using tp::model::Seconds;
using tp::model::TransferSample;

TEST(Fit, median_takes_the_upper_middle) {
  EXPECT_EQ(tp::model::median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(tp::model::median({4.0, 1.0, 3.0, 2.0}), 3.0);
  EXPECT_EQ(tp::model::median({7.5}), 7.5);
}

TEST(Fit, link_cost_recovers_exact_latency_and_bandwidth) {
  // 2 us + bytes / 5 GB/s, exactly.
  std::vector<TransferSample> s;
  for (std::int64_t b : {64, 1024, 65536, 1 << 20, 4 << 20}) {
    s.push_back({b, Seconds{2e-6 + static_cast<double>(b) / 5e9}});
  }
  auto link = tp::model::fit_link_cost(s);
  ASSERT_TRUE(link) << link.error().message;
  EXPECT_NEAR(link->latency.count(), 2e-6, 1e-12);
  EXPECT_NEAR(link->bandwidth_bytes_per_s, 5e9, 5e9 * 1e-9);
}

TEST(Fit, link_cost_weighs_relative_errors_so_small_messages_keep_their_latency) {
  // A 10% error on the largest message must not swamp the 1 us latency of the small ones.
  std::vector<TransferSample> s;
  for (std::int64_t b : {8, 64, 512, 4096}) {
    s.push_back({b, Seconds{1e-6 + static_cast<double>(b) / 1e10}});
  }
  s.push_back({64 << 20, Seconds{1.1 * (1e-6 + static_cast<double>(64 << 20) / 1e10)}});
  auto link = tp::model::fit_link_cost(s);
  ASSERT_TRUE(link);
  EXPECT_NEAR(link->latency.count(), 1e-6, 0.1e-6);
}

TEST(Fit, negative_intercept_is_clamped_and_the_slope_refitted_through_the_origin) {
  // Times exactly proportional to size minus an offset: the intercept would be negative.
  std::vector<TransferSample> s{
      {1000, Seconds{0.5e-6}}, {2000, Seconds{1.5e-6}}, {4000, Seconds{3.5e-6}}};
  auto link = tp::model::fit_link_cost(s);
  ASSERT_TRUE(link);
  EXPECT_EQ(link->latency.count(), 0.0);
  EXPECT_GT(link->bandwidth_bytes_per_s, 0.0);
  // Through the origin the fitted time of 4000 bytes lies between the measured extremes' ratios.
  const double t4000 = 4000 / link->bandwidth_bytes_per_s;
  EXPECT_GT(t4000, 2e-6);
  EXPECT_LT(t4000, 4e-6);
}

TEST(Fit, link_cost_refuses_what_cannot_be_fitted) {
  auto one_size = tp::model::fit_link_cost({{64, Seconds{1e-6}}, {64, Seconds{2e-6}}});
  ASSERT_FALSE(one_size);
  EXPECT_EQ(one_size.error().message, "fitting a link cost needs at least 2 distinct sizes");
  auto zero = tp::model::fit_link_cost({{64, Seconds{0}}, {128, Seconds{2e-6}}});
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "transfer sample of 64 bytes: the time must be > 0 and finite");
  auto shrinking = tp::model::fit_link_cost({{64, Seconds{2e-6}}, {4096, Seconds{1e-6}}});
  ASSERT_FALSE(shrinking);
  EXPECT_EQ(shrinking.error().message,
            "the transfer times do not grow with the message size: no bandwidth to fit");
}

TEST(Fit, compute_samples_are_grouped_sorted_and_made_monotone) {
  std::vector<ComputeSample> raw{{4096, Seconds{2e-9}},
                                 {1024, Seconds{3e-9}},
                                 {4096, Seconds{4e-9}},
                                 {4096, Seconds{1e-9}},
                                 {16384, Seconds{0.1e-9}}};
  auto s = tp::model::compute_samples_from(raw);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].tile_points, 1024);
  EXPECT_EQ((*s)[0].t_comp1.count(), 3e-9);
  EXPECT_EQ((*s)[1].tile_points, 4096);
  EXPECT_EQ((*s)[1].t_comp1.count(), 2e-9);  // the median of 1, 2, 4 ns
  // 16384 x 0.1 ns = 1.6 us < 4096 x 2 ns = 8.19 us: raised to the previous tile time.
  EXPECT_EQ((*s)[2].tile_points, 16384);
  const double prev = 4096 * 2e-9;
  EXPECT_GE((*s)[2].t_comp1.count() * 16384, prev);
  EXPECT_NEAR((*s)[2].t_comp1.count() * 16384, prev, prev * 1e-8);
}

TEST(Fit, compute_samples_refuse_bad_values) {
  auto none = tp::model::compute_samples_from({});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "no compute sample to fit");
  auto zero_points = tp::model::compute_samples_from({{0, Seconds{1e-9}}});
  ASSERT_FALSE(zero_points);
  EXPECT_EQ(zero_points.error().message, "compute sample with 0 tile points: must be >= 1");
  auto nan = tp::model::compute_samples_from({{8, Seconds{std::nan("")}}});
  ASSERT_FALSE(nan);
  EXPECT_EQ(nan.error().message, "compute sample at 8 tile points: t_comp1 must be > 0 and finite");
}

TEST(Fit, a_calibrated_machine_round_trips_through_its_file) {
  // Monotone samples raised by the running maximum must still load (the file's check is strict).
  std::vector<ComputeSample> raw;
  for (int i = 0; i < 12; ++i) {
    raw.push_back({std::int64_t{1000} << i, Seconds{(i % 2 ? 1.0 : 1.7) * 1e-9 / (1 << (i / 3))}});
  }
  auto cost = tp::model::compute_cost_from(raw, 4);
  ASSERT_TRUE(cost) << cost.error().message;
  tp::model::Machine m;
  m.name = "test-shm";
  m.hostname = "somewhere";
  m.cpu_model = "some CPU";
  m.transport = "shm";
  m.compute = *cost;
  m.kernels.emplace("wave3d", *cost);
  m.t_start = Seconds{0.6e-6};
  m.t_sync = Seconds{0.2e-6};
  m.t_sync_in = Seconds{20e-6};
  m.link = *tp::model::fit_link_cost({{64, Seconds{1e-6}}, {1 << 20, Seconds{150e-6}}});
  m.notes = R"({"notify_us":{"block":19.5,"poll":0.2}})";  // keys sorted, as read back
  auto back = tp::model::parse_machine(tp::model::machine_to_json(m), "calibrated.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->notes, m.notes);
  ASSERT_EQ(back->compute_for("wave3d").samples.size(), cost->samples.size());
  EXPECT_NEAR(back->compute.t_comp1.count(), cost->t_comp1.count(), 1e-20);
  EXPECT_NEAR(back->link.bandwidth_bytes_per_s, m.link.bandwidth_bytes_per_s, 1e-3);
}

}  // namespace
