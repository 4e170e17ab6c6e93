// The checked-in trace of the veth demo traffic (tests/fixtures/traces/README.md): it still reads
// with this code, its header says how it was made, and its demo queue's rate is plausible.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "dimctl/trace/trace_reader.h"

namespace dimctl::trace {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every frame of `r`; fails the test on an error or a truncated tail.
std::vector<seam::Snapshot> read_all(TraceReader& r) {
  std::vector<seam::Snapshot> frames;
  for (;;) {
    auto f = r.next();
    EXPECT_TRUE(f.ok()) << f.error().message();
    if (!f.ok() || !f->has_value()) break;
    frames.push_back(std::move(**f));
  }
  EXPECT_FALSE(r.warning().has_value()) << *r.warning();
  return frames;
}

TEST(VethDemoFixture, HeaderAndDemoQueueRateArePlausible) {
  auto r = TraceReader::open(DIMCTL_TRACE_FIXTURE);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const TraceHeader& h = r->header();
  // Recorded before format version 2: reading it is the check that version 1 still reads.
  EXPECT_EQ(h.version, 1);
  EXPECT_FALSE(h.host.empty());
  EXPECT_FALSE(h.kernel_release.empty());
  EXPECT_THAT(h.recorder_version, StartsWith("dimctl "));
  EXPECT_THAT(h.note, HasSubstr("--devices dimdemo0"));
  EXPECT_EQ(h.interval_ns, 20'000'000);
  EXPECT_GT(h.start_realtime_ns, 1'700'000'000'000'000'000);

  const std::vector<seam::Snapshot> frames = read_all(*r);
  ASSERT_GE(frames.size(), 100u);
  EXPECT_GE(frames.front().time_ns, h.start_monotonic_ns);

  // Frames every interval: the span agrees with the count within 10 %.
  const int64_t span = frames.back().time_ns - frames.front().time_ns;
  const double expected_frames = static_cast<double>(span) / static_cast<double>(h.interval_ns) + 1;
  EXPECT_NEAR(static_cast<double>(frames.size()), expected_frames, 0.1 * expected_frames);

  // The demo queue (dimdemo0's NAPI) is in every frame; its counters only rise.
  uint64_t first = 0, last = 0, busy = 0, idle = 0, max_delta = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& s = frames[i];
    if (i > 0) {
      ASSERT_GT(s.time_ns, frames[i - 1].time_ns) << "frame " << i;
    }
    auto q = std::find_if(s.queues.begin(), s.queues.end(),
                          [&](const auto& c) { return s.device_of(c) == "dimdemo0"; });
    ASSERT_NE(q, s.queues.end()) << "frame " << i << " has no dimdemo0 queue";
    EXPECT_LE(q->events(), q->polls);
    // Version 1 recorded no per-core measurements: none is invented.
    EXPECT_EQ(q->cpu, seam::QueueCounters::kNoCpu);
    EXPECT_TRUE(s.cpus.empty());
    EXPECT_TRUE(s.irqs.empty());
    if (i == 0) {
      first = last = q->packets;
      continue;
    }
    ASSERT_GE(q->packets, last) << "frame " << i;
    const uint64_t d = q->packets - last;
    (d > 0 ? busy : idle) += 1;
    max_delta = std::max(max_delta, d);
    last = q->packets;
  }
  const uint64_t total = last - first;
  const double pps = static_cast<double>(total) * 1e9 / static_cast<double>(span);
  std::printf("veth demo fixture: %zu frames over %.3f s, %llu packets, %.0f packets/s\n",
              frames.size(), static_cast<double>(span) / 1e9,
              static_cast<unsigned long long>(total), pps);
  EXPECT_GT(total, 0u);
  // Bash-paced UDP over veth on a shared 2-core machine: well above 100/s, well below 5M/s.
  EXPECT_GT(pps, 100.0);
  EXPECT_LT(pps, 5e6);
  // Consistent with the frames: no frame carries more than the total, and the mean per busy
  // frame times the busy frames is the total.
  EXPECT_LE(max_delta, total);
  EXPECT_GE(max_delta * busy, total);
  // demo-traffic.sh sends bursts and pauses: the trace shows both (what the simulator replays).
  EXPECT_GT(busy, frames.size() / 10);
  EXPECT_GT(idle, 0u);
}

// A format 1 file with CQs, written by format 1's writer (tests/fixtures/trace-formats/README.md):
// every field comes back as written, and the fields format 1 did not record keep their defaults.
TEST(FormatOneFixture, QueuesAndCqsReadExactly) {
  auto r = TraceReader::open(DIMCTL_TRACE_V1_FIXTURE);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->header().version, 1);
  const std::vector<seam::Snapshot> frames = read_all(*r);
  ASSERT_EQ(frames.size(), 3u);
  for (size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "frame " << i);
    const seam::Snapshot& s = frames[i];
    EXPECT_EQ(s.time_ns, 5'000'000'000 + 20'000'000 * static_cast<int64_t>(i));
    ASSERT_EQ(s.devices, std::vector<std::string>{"eth9"});
    ASSERT_EQ(s.queues.size(), 1u);
    const seam::QueueCounters& q = s.queues[0];
    EXPECT_EQ(q.key, (seam::QueueKey{4, 8200}));
    EXPECT_EQ(q.queue, 3);
    EXPECT_EQ(q.irq, 77);
    EXPECT_EQ(q.polls, 100 + 10 * i);
    EXPECT_EQ(q.packets, 1000 + 120 * i);
    EXPECT_EQ(q.budget_exhausted, 2u);
    EXPECT_EQ(q.empty_polls, 5u);
    EXPECT_EQ(q.cpu, seam::QueueCounters::kNoCpu);
    ASSERT_EQ(s.cqs.size(), 2u);
    const seam::CqCounters& a = s.cqs[0];
    EXPECT_EQ(a.key, (seam::CqKey{0, 12}));
    EXPECT_EQ(a.ibdev, "rxe0");
    EXPECT_EQ(a.poll_ctx, seam::PollContext::kSoftirq);
    EXPECT_EQ(a.nr_cqe, 256u);
    EXPECT_EQ(a.comp_vector, 1);
    EXPECT_EQ(a.schedules, 10u);
    EXPECT_EQ(a.reschedules, 1u);
    EXPECT_EQ(a.events, 11 + 4 * i);
    EXPECT_EQ(a.polls, 30u);
    EXPECT_EQ(a.completions, 400 + 50 * i);
    EXPECT_EQ(a.kernel_modifies, 3u);
    EXPECT_EQ(a.kernel_comps, 32);
    EXPECT_EQ(a.kernel_usec, i == 0 ? 8 : 16);
    EXPECT_EQ(a.budget_exhausted, 0u);
    EXPECT_EQ(a.cpu, seam::QueueCounters::kNoCpu);
    const seam::CqCounters& b = s.cqs[1];
    EXPECT_EQ(b.key, (seam::CqKey{0, 13}));
    EXPECT_EQ(b.poll_ctx, seam::PollContext::kWorkqueue);
    EXPECT_EQ(b.completions, i == 0 ? 9u : i == 1 ? 2u : 3u);  // frame 1 went back: absolute
    EXPECT_EQ(b.events, 11u);
    EXPECT_TRUE(s.cpus.empty());
    EXPECT_TRUE(s.irqs.empty());
  }
}

}  // namespace
}  // namespace dimctl::trace
