// Trace replay: a trace written with dimctl::trace (as `dimctl record` writes it) drives the
// simulator's open-loop arrivals: every recorded packet arrives once, inside its interval.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "dimctl/sim/simulator.h"
#include "dimctl/sim/trace_source.h"
#include "dimctl/trace/trace_writer.h"

namespace dimctl::sim {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kMs = 1'000'000;

class SimTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dimctl-sim-trace-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/t.dtr";
  }
  void TearDown() override {
    for (const char* suffix : {"", ".1", ".2"}) std::remove((path_ + suffix).c_str());
    EXPECT_EQ(rmdir(dir_.c_str()), 0);
  }
  // Two veth queues and one CQ, 20 ms apart: queue A gets `a` packets per interval, B nothing
  // but a counter reset in the middle, the CQ 3 completions per interval.
  void write_trace(int frames, uint64_t a) {
    auto w = trace::TraceWriter::open(path_, {});
    ASSERT_TRUE(w) << w.error().message();
    for (int i = 0; i < frames; ++i) {
      seam::Snapshot s;
      s.time_ns = 5'000 * kMs + i * 20 * kMs;
      s.devices = {"veth0", "veth1"};
      seam::QueueCounters qa;
      qa.key = {7, 8193};
      qa.queue = 0;
      qa.packets = 1000 + a * static_cast<uint64_t>(i);
      qa.polls = qa.packets;
      qa.device_ix = 0;
      seam::QueueCounters qb;
      qb.key = {9, 8194};
      qb.queue = 0;
      qb.packets = i < frames / 2 ? 500 : 2;  // reset: 2 new packets, then flat
      qb.device_ix = 1;
      s.queues = {qa, qb};
      seam::CqCounters c;
      c.key = {0, 4};
      c.ibdev = "rxe0";
      c.completions = 3 * static_cast<uint64_t>(i);
      s.cqs = {c};
      if (i >= 2) {
        // A NAPI the collector first sees in frame 2, 5 packets in (its first poll).
        seam::QueueCounters late;
        late.key = {11, 9000};
        late.packets = 5 + static_cast<uint64_t>(i - 2);
        late.device_ix = 1;
        s.queues.push_back(late);
      }
      ASSERT_TRUE(w->write(s));
    }
    ASSERT_TRUE(w->close());
  }
  std::string dir_, path_;
};

TEST_F(SimTrace, InspectCountsEveryRecordedArrivalAndNumbersNetQueuesFirst) {
  write_trace(11, 40);
  auto info = inspect_trace(path_);
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_EQ(info->queues, 4u);
  EXPECT_EQ(info->duration_ns, 200 * kMs);
  // A queue present from the first frame counts from there; one that appears later counts
  // everything it holds (what `dimctl trace show` does too).
  EXPECT_EQ(info->arrivals, 10u * 40 + 2 + (5 + 8) + 10 * 3);
  ASSERT_EQ(info->names.size(), 4u);
  EXPECT_NE(info->names[0].find("veth0"), std::string::npos);
  EXPECT_NE(info->names[3].find("rxe0"), std::string::npos);
  auto only = inspect_trace(path_, "veth0");
  ASSERT_TRUE(only);
  EXPECT_EQ(only->queues, 1u);
  EXPECT_EQ(only->arrivals, 400u);
}

TEST_F(SimTrace, ReplayDeliversEveryRecordedPacketInsideItsInterval) {
  write_trace(11, 40);
  Workload w;
  w.name = "replay";
  w.stages[0].service = Dist::constant(1'000);
  w.sources[0].kind = SourceSpec::Kind::kTrace;
  w.sources[0].trace_path = path_;
  w.sources[0].trace_device = "veth0";
  w.phases[0].duration_ns = 201 * kMs;
  w.window_ns = 20 * kMs;
  auto r = run(w, *parse_policy("none"));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->simulated_completions, 400u);
  // 40 per recorded 20 ms interval: the windows line up with the intervals (+1 us of service).
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(r->windows[i].completions, 40u) << i;
}

// A recorder killed mid-write leaves a partial last frame: the replay keeps the whole frames and
// says what was dropped, instead of replaying a shorter trace without a word.
TEST_F(SimTrace, TruncatedTailIsReplayedUpToTheLastFrameWithAWarning) {
  write_trace(11, 40);
  auto whole = inspect_trace(path_);
  ASSERT_TRUE(whole) << whole.error().message();
  EXPECT_FALSE(whole->warning.has_value());
  ASSERT_EQ(truncate(path_.c_str(), static_cast<off_t>(fs::file_size(path_) - 3)), 0);
  auto cut = inspect_trace(path_);
  ASSERT_TRUE(cut) << cut.error().message();
  ASSERT_TRUE(cut->warning.has_value());
  EXPECT_NE(cut->warning->find("t.dtr"), std::string::npos) << *cut->warning;
  EXPECT_EQ(cut->duration_ns, whole->duration_ns - 20 * kMs);
}

TEST_F(SimTrace, BadTracesAreErrorsNamingTheFile) {
  write_trace(1, 40);
  auto one = inspect_trace(path_);
  ASSERT_FALSE(one);
  EXPECT_NE(one.error().message().find("at least two"), std::string::npos);
  write_trace(3, 40);
  auto none = inspect_trace(path_, "eth9");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("veth0"), std::string::npos) << none.error().message();
  auto missing = inspect_trace(dir_ + "/nope.dtr");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("nope.dtr"), std::string::npos);
}

}  // namespace
}  // namespace dimctl::sim
