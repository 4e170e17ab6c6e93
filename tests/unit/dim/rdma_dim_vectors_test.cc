// RDMA DIM against every R vector of dim-spec section 10. Each stream is a list of events
// (time, completions); expectations are given at the events the spec tabulates, and every
// other event must be a non-evaluating, non-changing one.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "dim/rdma_dim.h"

namespace dim {
namespace {

constexpr auto kGR = TuneState::kGoingRight;
constexpr auto kGL = TuneState::kGoingLeft;

struct Event {
  int64_t t_ns = 0;
  uint32_t comps = 0;
};

// Builds an event stream: run(n, comps, spacing_us) appends n events, the first one
// `spacing_us` after the previous event (or at `at_us` when given).
class Stream {
 public:
  Stream& run(int n, uint32_t comps, int64_t spacing_us) {
    for (int i = 0; i < n; ++i) {
      t_us_ += events_.empty() ? 0 : spacing_us;
      events_.push_back({t_us_ * 1000, comps});
    }
    return *this;
  }
  Stream& at(int64_t t_us, uint32_t comps) {
    t_us_ = t_us;
    events_.push_back({t_us_ * 1000, comps});
    return *this;
  }
  const std::vector<Event>& events() const { return events_; }

 private:
  std::vector<Event> events_;
  int64_t t_us_ = 0;
};

// Expectation after event k (1-based). verdict '-' = no evaluation at this event.
struct Check {
  char verdict = '-';
  int ix = 0;
  TuneState tune = kGR;
  int sr = 0, sl = 0;
  bool apply = false;
  int cpms = -1, epms = -1, cpe = -1;  // -1: not asserted
};

std::optional<Verdict> verdict_of(char c) {
  if (c == 'B') return Verdict::kBetter;
  if (c == 'S') return Verdict::kSame;
  if (c == 'W') return Verdict::kWorse;
  return std::nullopt;
}

// hold: event k whose change is applied only after event `hold[k]` (ignored events between).
void run_events(RdmaDim& d, const std::vector<Event>& events, const std::map<int, Check>& checks,
                const std::map<int, int>& hold = {}) {
  int release_after = 0;
  int last_ix = d.profile_ix();
  for (size_t i = 0; i < events.size(); ++i) {
    const int k = static_cast<int>(i) + 1;
    SCOPED_TRACE(::testing::Message() << "event " << k);
    const uint64_t evaluated = d.windows_evaluated();
    const bool changed = d.on_event(events[i].t_ns, events[i].comps);
    auto it = checks.find(k);
    if (it == checks.end()) {
      ASSERT_FALSE(changed);
      ASSERT_EQ(d.windows_evaluated(), evaluated);
      ASSERT_EQ(d.profile_ix(), last_ix);
    } else {
      const Check& c = it->second;
      EXPECT_EQ(changed, c.apply);
      EXPECT_EQ(d.windows_evaluated() - evaluated, c.verdict == '-' ? 0u : 1u);
      if (auto v = verdict_of(c.verdict)) {
        EXPECT_EQ(d.last_verdict(), v);
      }
      EXPECT_EQ(d.profile_ix(), c.ix);
      EXPECT_EQ(d.tune_state(), c.tune);
      EXPECT_EQ(d.steps_right(), c.sr);
      EXPECT_EQ(d.steps_left(), c.sl);
      EXPECT_EQ(d.tired(), 0);
      if (c.cpms >= 0) {
        EXPECT_EQ(d.last_stats()->cpms, c.cpms);
      }
      if (c.epms >= 0) {
        EXPECT_EQ(d.last_stats()->epms, c.epms);
      }
      if (c.cpe >= 0) {
        EXPECT_EQ(d.last_stats()->cpe_ratio, c.cpe);
      }
    }
    last_ix = d.profile_ix();
    if (changed) {
      auto h = hold.find(k);
      release_after = h == hold.end() ? k : h->second;
    }
    if (d.state() == MeasureState::kApplyNewProfile && k >= release_after) d.profile_applied();
  }
}

TEST(RdmaDimVectors, InitialState) {
  RdmaDim d;
  EXPECT_EQ(d.profile_ix(), 0);
  EXPECT_EQ(d.tune_state(), kGR);
  EXPECT_EQ(d.state(), MeasureState::kStartMeasure);
  EXPECT_EQ(d.profile(), (Profile{1, 0, 1}));
  EXPECT_FALSE(d.last_verdict().has_value());
}

TEST(RdmaDimVectors, R1SteadyLoadNeverMoves) {
  Stream s;
  s.run(1, 4, 10).run(64 * 5, 4, 10);
  RdmaDim d;
  std::map<int, Check> checks;
  for (int k = 65; k <= 321; k += 64) checks[k] = {'S', 0, kGR, 0, 0, false, 400, 100, 400};
  run_events(d, s.events(), checks);
  EXPECT_EQ(d.windows_evaluated(), 5u);
}

TEST(RdmaDimVectors, R2RampResetAndReversals) {
  Stream s;
  s.at(0, 1).run(64, 1, 40);     // 2..65, ends 2560
  s.run(64, 1, 20);              // 66..129, ends 3840
  s.at(3850, 1).run(64, 1, 10);  // 130 start, 131..194 ends 4490
  s.at(4490, 1).run(64, 1, 10);  // 195 start, 196..259 ends 5130
  s.at(5140, 8).run(64, 8, 10);  // 260 start, 261..324 ends 5780
  s.at(5790, 8).run(64, 8, 10);  // 325 start, 326..389 ends 6430
  s.run(64, 2, 10);              // 390..453 ends 7070
  s.at(7090, 1).run(64, 1, 10);  // 454 start, 455..518 ends 7730
  ASSERT_EQ(s.events().size(), 518u);
  ASSERT_EQ(s.events()[452].t_ns, 7'070'000);
  RdmaDim d;
  run_events(d, s.events(),
             {
                 {65, {'S', 0, kGR, 0, 0, false, 25, 25, 100}},
                 {129, {'B', 1, kGR, 1, 0, true, 50, 50, 100}},
                 {194, {'B', 2, kGR, 2, 0, true, 100, 100, 100}},
                 {259, {'S', 0, kGR, 2, 0, true, 100, 100, 100}},
                 {324, {'B', 1, kGR, 3, 0, true, 800, 100, 800}},
                 {389, {'S', 1, kGR, 3, 0, false, 800, 100, 800}},
                 {453, {'W', 0, kGL, 3, 1, true, 200, 100, 200}},
                 {518, {'W', 1, kGR, 1, 1, true, 100, 100, 100}},
             });
  EXPECT_EQ(d.profile(), (Profile{1, 0, 4}));
}

TEST(RdmaDimVectors, R3WorseAtLeftEdgeBounces) {
  Stream s;
  s.run(1, 4, 10).run(64, 4, 10).run(64, 2, 10).run(64, 4, 10);
  RdmaDim d;
  run_events(d, s.events(),
             {
                 {65, {'S', 0, kGR, 0, 0, false, 400}},
                 {129, {'W', 0, kGR, 0, 0, false, 200}},
                 {193, {'B', 1, kGR, 1, 0, true, 400}},
             });
}

TEST(RdmaDimVectors, R4ClimbToRightEdgeThenLeft) {
  Stream s;
  s.run(1, 1, 10).run(64, 1, 10).run(64, 2, 10);                          // decisions at 65, 129
  for (uint32_t c = 4; c <= 512; c *= 2) s.run(1, c, 10).run(64, c, 10);  // start + window
  s.run(65, 512, 10).run(63, 1024, 10);                                   // 650..714, 715..777
  ASSERT_EQ(s.events().size(), 777u);
  std::map<int, Check> checks{
      {65, {'S', 0, kGR, 0, 0, false, 100}},
      {129, {'B', 1, kGR, 1, 0, true, 200}},
  };
  int k = 194;
  int cpms = 400;
  for (int ix = 2; ix <= 8; ++ix, k += 65, cpms *= 2) {
    checks[k] = {'B', ix, kGR, ix, 0, true, cpms};
  }
  ASSERT_EQ(k, 649);
  checks[649] = {'B', 8, kGL, 8, 0, false, 51'200};
  checks[713] = {'S', 8, kGL, 8, 0, false, 51'200};
  checks[777] = {'B', 7, kGL, 8, 1, true, 101'600};
  RdmaDim d;
  run_events(d, s.events(), checks);
  EXPECT_EQ(d.profile(), (Profile{32, 0, 16}));
}

TEST(RdmaDimVectors, R5CompletionCounterWrap) {
  Stream s;
  s.run(1, 4'294'967'000u, 10).run(64, 10, 10).run(64, 12, 10);
  RdmaDim d;
  run_events(d, s.events(),
             {
                 {65, {'S', 0, kGR, 0, 0, false, 1000, 100, 1000}},
                 {129, {'B', 1, kGR, 1, 0, true, 1200, 100, 1200}},
             });
  EXPECT_EQ(d.measuring_sample().comp_ctr, 4'294'967'000u + 640u + 768u);
}

TEST(RdmaDimVectors, R6EventCounterWrapShortensWindow) {
  Stream s;
  s.run(1, 4, 10).run(64, 4, 10).run(64, 8, 10);  // 1..129
  s.run(65'665 - 129, 8, 10);
  std::map<int, Check> checks{
      {65, {'S', 0, kGR, 0, 0, false, 400}},
      {129, {'B', 1, kGR, 1, 0, true, 800}},
  };
  for (int k = 250; k <= 65'530; k += 64) checks[k] = {'S', 1, kGR, 1, 0, false, 800, 100, 800};
  checks[65'536] = {'W', 0, kGL, 1, 1, true, 800, 1067, 74};
  checks[65'601] = {'B', 0, kGR, 0, 1, false, 800, 100, 800};
  checks[65'665] = {'S', 0, kGR, 0, 1, false, 800, 100, 800};
  RdmaDim d;
  run_events(d, s.events(), checks, {{129, 185}});
  EXPECT_EQ(d.measuring_sample().event_ctr, 65'665 - 65'536);
}

TEST(RdmaDimVectors, R7ZeroCompletionWindowResetsBaseline) {
  Stream s;
  s.run(1, 0, 10).run(64, 0, 10).run(64, 4, 10).run(64, 8, 10);
  RdmaDim d;
  run_events(d, s.events(),
             {
                 {65, {'S', 0, kGR, 0, 0, false, 0, 100, 0}},
                 {129, {'S', 0, kGR, 0, 0, false, 400}},
                 {193, {'B', 1, kGR, 1, 0, true, 800}},
             });
}

TEST(RdmaDimVectors, R8ZeroTimeDelta) {
  Stream s;
  s.run(65, 4, 0).at(1000, 4);
  RdmaDim d;
  run_events(d, s.events(), {{66, {'S', 0, kGR, 0, 0, false, 260, 64, 406}}});
  EXPECT_EQ(d.window_start().event_ctr, 66);
}

TEST(RdmaDim, EventsWhilePendingStillAccumulate) {
  RdmaDim d;
  Stream s;
  s.run(1, 4, 10).run(64, 4, 10).run(64, 8, 10);
  for (const Event& e : s.events()) d.on_event(e.t_ns, e.comps);
  ASSERT_EQ(d.state(), MeasureState::kApplyNewProfile);
  EXPECT_FALSE(d.on_event(2'000'000, 100));
  EXPECT_EQ(d.measuring_sample().event_ctr, 130);
  EXPECT_EQ(d.measuring_sample().comp_ctr, 4u + 64 * 4 + 64 * 8 + 100);
  EXPECT_EQ(d.measuring_sample().time_ns, 2'000'000);
  d.profile_applied();
  d.on_event(2'010'000, 1);
  EXPECT_EQ(d.window_start().event_ctr, 131);
  EXPECT_EQ(d.window_start().comp_ctr, d.measuring_sample().comp_ctr);
}

TEST(RdmaDim, OnEventsSpreadsCompletionsAndTime) {
  RdmaDim d;
  EXPECT_FALSE(d.on_events(0, 1000, 0, 5));  // no events: nothing happens
  EXPECT_EQ(d.measuring_sample().event_ctr, 0);
  EXPECT_FALSE(d.on_events(1000, 4000, 3, 8));  // 3,3,2 comps at 2000, 3000, 4000
  EXPECT_EQ(d.measuring_sample().event_ctr, 3);
  EXPECT_EQ(d.measuring_sample().comp_ctr, 8u);
  EXPECT_EQ(d.measuring_sample().time_ns, 4000);
  EXPECT_EQ(d.window_start().time_ns, 2000);  // the first event started the window
  EXPECT_EQ(d.window_start().comp_ctr, 3u);
  EXPECT_FALSE(d.on_events(9000, 5000, 2, 2));  // backwards period: events at its start
  EXPECT_EQ(d.measuring_sample().time_ns, 9000);
  EXPECT_EQ(d.measuring_sample().event_ctr, 5);
}

}  // namespace
}  // namespace dim
