// TraceShow: what `dimctl trace show` counts and prints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dimctl/trace/trace_text.h"

namespace dimctl::trace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

model::Snapshot frame(int64_t t, std::vector<std::pair<uint32_t, uint64_t>> napi_packets) {
  model::Snapshot s;
  s.time_ns = t;
  s.devices = {"veth0"};
  for (auto [napi, packets] : napi_packets) {
    model::QueueCounters q;
    q.key = {3, napi};
    q.packets = packets;
    q.polls = packets / 10;
    s.queues.push_back(q);
  }
  return s;
}

TEST(TraceShow, BaselineNewResetAndGoneQueues) {
  TraceShow show;
  std::string out;
  show.frame(frame(1'000'000'000, {{1, 500}}), out);           // baseline: nothing counted
  show.frame(frame(1'020'000'000, {{1, 600}}), out);           // +100
  show.frame(frame(1'040'000'000, {{1, 600}, {2, 70}}), out);  // napi 2 new: counts 70
  show.frame(frame(1'060'000'000, {{1, 30}, {2, 80}}), out);   // napi 1 reset: counts 30
  show.frame(frame(1'080'000'000, {{2, 80}}), out);            // napi 1 gone, napi 2 quiet
  show.frame(frame(1'100'000'000, {{1, 5}, {2, 90}}), out);    // napi 1 back: counts 5

  EXPECT_EQ(show.frames(), 6u);
  EXPECT_EQ(show.span_ns(), 100'000'000);
  const auto& t = show.queue_totals();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.at(model::packed(model::QueueKey{3, 1})).packets, 100u + 30 + 5);
  EXPECT_EQ(t.at(model::packed(model::QueueKey{3, 1})).resets, 1u);
  EXPECT_EQ(t.at(model::packed(model::QueueKey{3, 1})).frames, 5u);
  EXPECT_EQ(t.at(model::packed(model::QueueKey{3, 2})).packets, 70u + 10 + 10);
  EXPECT_EQ(t.at(model::packed(model::QueueKey{3, 2})).polls, 7u + 1 + 1);

  EXPECT_THAT(out, HasSubstr("frame 0 t=1.000000s baseline: 1 queues, 0 CQs, devices [veth0]"));
  EXPECT_THAT(out, HasSubstr("frame 1 t=+0.020000s dt=20.000ms queues 1 cqs 0\n"));
  EXPECT_THAT(out, HasSubstr("packets +100 "));
  EXPECT_THAT(out, HasSubstr("packets +70 events +7 exhausted +0 empty +0 (new)"));
  EXPECT_THAT(out, HasSubstr("packets +30 events +3 exhausted +0 empty +0 (reset"));
  EXPECT_THAT(out, HasSubstr("frame 4 t=+0.080000s dt=20.000ms queues 1 cqs 0 (1 quiet)\n"
                             "  veth0           napi 1      gone\n"));

  const std::string sum = show.summary();
  EXPECT_THAT(sum, HasSubstr("summary: 6 frames, 0.100000 s"));
  // 135 packets over 0.1 s.
  EXPECT_THAT(sum, HasSubstr("1350.0"));
  EXPECT_THAT(sum, HasSubstr("(1 resets)"));
}

TEST(TraceShow, SummaryOnlyPrintsNoFrames) {
  TraceShow show(ShowOptions{.frames = false});
  std::string out;
  show.frame(frame(0, {{1, 0}}), out);
  show.frame(frame(1'000'000'000, {{1, 1000}}), out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(show.queue_totals().begin()->second.packets, 1000u);
  EXPECT_THAT(show.summary(), HasSubstr("1000.0"));
}

TEST(TraceShow, CqDeltasAndHeaderText) {
  TraceShow show;
  std::string out;
  model::Snapshot s;
  model::CqCounters c;
  c.key = {1, 7};
  c.ibdev = "rxe0";
  c.events = 10;
  c.completions = 100;
  s.cqs = {c};
  show.frame(s, out);
  s.time_ns = 500'000'000;
  s.cqs[0].events = 15;
  s.cqs[0].completions = 180;
  s.cqs[0].kernel_comps = 32;
  s.cqs[0].kernel_usec = 8;
  show.frame(s, out);
  EXPECT_THAT(out, HasSubstr("cq rxe0         7      events +5 completions +80 schedules +0 "
                             "polls +0 moderation 32/8us\n"));
  EXPECT_THAT(show.summary(), HasSubstr("160.0"));  // 80 completions / 0.5 s

  TraceHeader h;
  h.host = "box";
  h.kernel_release = "6.1.0";
  h.recorder_version = "dimctl 0.1.0";
  h.start_realtime_ns = 1'700'000'000'123'000'000;
  h.interval_ns = 20'000'000;
  const std::string text = TraceShow::header_text(h, "a.dtr", 1234);
  EXPECT_THAT(text, HasSubstr("a.dtr (1234 bytes, format version 1)"));
  EXPECT_THAT(text, HasSubstr("box (kernel 6.1.0)"));
  EXPECT_THAT(text, HasSubstr("2023-11-14T22:13:20.123Z"));
  EXPECT_THAT(text, HasSubstr("interval  20.000ms"));
  EXPECT_THAT(text, Not(HasSubstr("note")));
}

}  // namespace
}  // namespace dimctl::trace
