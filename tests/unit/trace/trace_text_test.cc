// TraceShow: what `dimctl trace show` counts and prints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dimctl/trace/trace_text.h"

namespace dimctl::trace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

seam::Snapshot frame(int64_t t, std::vector<std::pair<uint32_t, uint64_t>> napi_packets) {
  seam::Snapshot s;
  s.time_ns = t;
  s.devices = {"veth0"};
  for (auto [napi, packets] : napi_packets) {
    seam::QueueCounters q;
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
  EXPECT_EQ(t.at(seam::packed(seam::QueueKey{3, 1})).packets, 100u + 30 + 5);
  EXPECT_EQ(t.at(seam::packed(seam::QueueKey{3, 1})).resets, 1u);
  EXPECT_EQ(t.at(seam::packed(seam::QueueKey{3, 1})).frames, 5u);
  EXPECT_EQ(t.at(seam::packed(seam::QueueKey{3, 2})).packets, 70u + 10 + 10);
  EXPECT_EQ(t.at(seam::packed(seam::QueueKey{3, 2})).polls, 7u + 1 + 1);

  EXPECT_THAT(out,
              HasSubstr("frame 0 t=1.000000s baseline: 1 queues, 0 CQs, 0 CPUs, devices [veth0]"));
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
  seam::Snapshot s;
  seam::CqCounters c;
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
  EXPECT_THAT(text, HasSubstr("a.dtr (1234 bytes, format version 2)"));
  EXPECT_THAT(text, HasSubstr("box (kernel 6.1.0)"));
  EXPECT_THAT(text, HasSubstr("2023-11-14T22:13:20.123Z"));
  EXPECT_THAT(text, HasSubstr("interval  20.000ms"));
  EXPECT_THAT(text, Not(HasSubstr("note")));
}

// Format 2's per-core measurements: the CPU a queue and a CQ were polled on, a CQ's exhausted
// passes, and each CPU's interrupt, softirq and busy time (from idle time, or the interrupt
// time when that is larger).
TEST(TraceShow, CpuTimesBusyAndPollCpus) {
  TraceShow show;
  std::string out;
  seam::Snapshot s = frame(0, {{1, 100}});
  s.queues[0].cpu = 1;
  seam::CqCounters c;
  c.key = {0, 9};
  c.ibdev = "rxe0";
  c.cpu = 0;
  s.cqs = {c};
  s.cpus.resize(2);
  for (auto& t : s.cpus) t.idle_known = true;
  show.frame(s, out);

  s.time_ns = 20'000'000;  // 20 ms
  s.queues[0].packets = 300;
  s.cqs[0].budget_exhausted = 3;
  s.cqs[0].completions = 900;
  // CPU 0: 10 hard IRQs, 2 timed at 1 us each; 4 NET_RX runs, all timed, 2 ms; 15 ms idle.
  s.cpus[0].hardirq_count = 10;
  s.cpus[0].hardirq_timed = 2;
  s.cpus[0].hardirq_ns = 2'000;
  s.cpus[0].softirq_net_rx_count = 4;
  s.cpus[0].softirq_net_rx_timed = 4;
  s.cpus[0].softirq_net_rx_ns = 2'000'000;
  s.cpus[0].idle_ns = 15'000'000;
  // CPU 1: idle time unknown at the end: no busy figure; 1 IRQ_POLL run of 3 ms.
  s.cpus[1].idle_known = false;
  s.cpus[1].softirq_irq_poll_count = 1;
  s.cpus[1].softirq_irq_poll_timed = 1;
  s.cpus[1].softirq_irq_poll_ns = 3'000'000;
  show.frame(s, out);

  EXPECT_THAT(out, HasSubstr("baseline: 1 queues, 1 CQs, 2 CPUs"));
  EXPECT_THAT(out, HasSubstr("packets +200 events +0 exhausted +0 empty +0 cpu 1\n"));
  EXPECT_THAT(out, HasSubstr("completions +900 schedules +0 polls +0 exhausted +3 moderation "
                             "0/0us cpu 0\n"));
  // 10 runs at 1 us estimated = 0.010 ms; busy = 20 − 15 = 5 ms of 20.
  EXPECT_THAT(out, HasSubstr("cpu 0    hardirq +10 (0.010ms) softirq +4 (2.000ms) busy 25.0%\n"));
  EXPECT_THAT(out, HasSubstr("cpu 1    hardirq +0 (0.000ms) softirq +1 (3.000ms)\n"));

  const auto& t = show.cpu_totals();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.at(0).hardirqs, 10u);
  EXPECT_DOUBLE_EQ(t.at(0).hardirq_ns, 10'000);
  EXPECT_DOUBLE_EQ(t.at(0).softirq_ns, 2'000'000);
  EXPECT_EQ(t.at(0).idle_span_ns, 20'000'000);
  EXPECT_DOUBLE_EQ(t.at(0).busy_ns, 5'000'000);
  EXPECT_EQ(t.at(1).idle_span_ns, 0);
  EXPECT_EQ(show.cq_totals().begin()->second.budget_exhausted, 3u);

  // Busy is at least the interrupt time: a CPU whose idle clock says 19.9 ms idle but spent
  // 3 ms in softirqs (interrupts taken while idle count as idle) is 15 % busy, not 0.5 %.
  s.time_ns = 40'000'000;
  s.cpus[0].idle_ns += 19'900'000;
  s.cpus[0].softirq_net_rx_count += 1;
  s.cpus[0].softirq_net_rx_timed += 1;
  s.cpus[0].softirq_net_rx_ns += 3'000'000;
  out.clear();
  show.frame(s, out);
  EXPECT_THAT(out, HasSubstr("busy 15.0%"));
  const std::string sum = show.summary();
  EXPECT_THAT(sum, HasSubstr("EXHAUSTED"));
  // CPU 0 over 40 ms: 10 hard IRQs (250/s), 5 softirqs (125/s), 5 ms of softirq (12.50 %),
  // busy 5 + 3 ms of 40 ms.
  EXPECT_THAT(sum, HasSubstr("0           3        250.0       0.03        125.0      12.50     "
                             "20.0 40.000ms\n"));
  EXPECT_THAT(sum, HasSubstr("1           3          0.0       0.00         25.0       7.50        "
                             "-        -\n"));
}

}  // namespace
}  // namespace dimctl::trace
