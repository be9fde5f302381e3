// Unit tests of run reports: serialization, reduction and the hidden-communication share.
#include <tilepipe/exec/run_report.hpp>
#include <tilepipe/exec/trace.hpp>

#include <gtest/gtest.h>

namespace {

using tp::exec::RankReport;
using tp::exec::RunSummary;

TEST(RunReport, round_trips_through_bytes) {
  RankReport r;
  r.rank = 3;
  r.threads = 2;
  r.wall_s = 1.5;
  r.setup_s = 0.75;
  r.phases = {1.0, 0.25, 0.125, 0.0625};
  r.tiles = 7;
  r.points = 700;
  r.messages_sent = 5;
  r.bytes_sent = 500;
  r.messages_received = 4;
  r.face_transfer_s = 1e-5;
  r.exposed_comm_s = 2e-5;
  r.subtiles = 9;
  const RankReport back = tp::exec::decode_report(tp::exec::encode(r));
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.subtiles, 9);
  EXPECT_EQ(back.points, 700);
  EXPECT_DOUBLE_EQ(back.phases.sync_s, 0.0625);
  EXPECT_DOUBLE_EQ(back.exposed_comm_s, 2e-5);
  EXPECT_DOUBLE_EQ(back.setup_s, 0.75);
}

TEST(RunSummary, hidden_share_counts_exposed_waits_against_the_transfer_work) {
  RunSummary s;
  RankReport a;
  a.messages_sent = 10;
  a.face_transfer_s = 1e-3;
  a.exposed_comm_s = 0;
  RankReport b;
  b.messages_received = 10;
  b.face_transfer_s = 1e-3;
  b.exposed_comm_s = 5e-3;
  s.ranks = {a, b};
  EXPECT_DOUBLE_EQ(s.hidden_share(), 1.0 - 5e-3 / 20e-3);
  s.ranks[1].exposed_comm_s = 1.0;  // clamped
  EXPECT_DOUBLE_EQ(s.hidden_share(), 0.0);
  s.ranks = {RankReport{}};
  EXPECT_EQ(s.hidden_share(), -1);
}

TEST(RunSummary, wall_time_is_the_slowest_rank_and_phases_add_up) {
  RunSummary s;
  s.ranks.resize(2);
  s.ranks[0].wall_s = 2;
  s.ranks[1].wall_s = 3;
  s.ranks[0].phases.compute_s = 1;
  s.ranks[1].phases.compute_s = 2;
  EXPECT_EQ(s.wall_s(), 3);
  EXPECT_EQ(s.phases().compute_s, 3);
}

TEST(Trace, spans_round_trip_and_render_as_chrome_trace) {
  const auto epoch = std::chrono::steady_clock::now();
  tp::exec::Tracer tracer(2, epoch);
  tracer.record(1, tp::exec::SpanKind::compute, 4, epoch + std::chrono::microseconds(10),
                epoch + std::chrono::microseconds(30));
  const auto spans = tp::exec::decode_spans(tp::exec::encode_spans(tracer.spans()));
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].dur_ns, 20000);
  EXPECT_EQ(spans[0].step, 4);
  const auto json = tp::exec::chrome_trace_json({spans}, "t\"q");
  EXPECT_NE(
      json.find(R"("name":"compute","cat":"compute","pid":0,"tid":1,"ts":10.000,"dur":20.000)"),
      std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("title":"t\"q")"), std::string::npos);
}

TEST(RunSummary, comm_thread_fields_round_trip_and_its_comm_time_is_the_work) {
  RankReport r;
  r.messages_sent = 4;
  r.face_transfer_s = 1.0;  // ignored with a communication thread
  r.exposed_comm_s = 0.25;
  r.comm_thread = {true, 0.375, 2, 1e-4, 3e-5, 0.5, 1.0};
  const RankReport back = tp::exec::decode_report(tp::exec::encode(r));
  EXPECT_TRUE(back.comm_thread.on);
  EXPECT_DOUBLE_EQ(back.comm_thread.share, 0.375);
  EXPECT_EQ(back.comm_thread.split_dim, 2);
  EXPECT_DOUBLE_EQ(back.comm_thread.alpha_s, 1e-4);
  EXPECT_DOUBLE_EQ(back.comm_thread.comm_round_s, 3e-5);
  EXPECT_DOUBLE_EQ(back.comm_thread.compute_s, 0.5);
  EXPECT_DOUBLE_EQ(back.comm_thread.comm_s, 1.0);
  RunSummary s;
  s.ranks = {back};
  EXPECT_DOUBLE_EQ(s.hidden_share(), 0.75);
  s.ranks[0].messages_sent = 0;  // no face moved: nothing to hide
  EXPECT_EQ(s.hidden_share(), -1);
}

}  // namespace
