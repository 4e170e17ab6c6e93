// Net DIM against every N vector of dim-spec section 10, row by row: index, tune state,
// tired, steps right/left, measurement state, apply points and (where the spec states them)
// verdicts and window statistics.
#include <gtest/gtest.h>

#include <vector>

#include "dim/net_dim.h"

namespace dim {
namespace {

constexpr auto kPoT = TuneState::kParkingOnTop;
constexpr auto kPT = TuneState::kParkingTired;
constexpr auto kGR = TuneState::kGoingRight;
constexpr auto kGL = TuneState::kGoingLeft;

constexpr int64_t ms(int64_t v) {
  return v * 1'000'000;
}

// verdict: 'B'/'S'/'W' = a window was evaluated with that verdict, 'T' = evaluated while parked
// tired (no verdict), '-' = no evaluation (start, wait, skip, ignored).
struct NetRow {
  uint64_t ev = 0, pkts = 0, bytes = 0;
  int64_t t_ns = 0;
  char verdict = '-';
  int ix = 0;
  TuneState tune = kPoT;
  int tired = 0, sr = 0, sl = 0;
  bool apply = false;
};

std::optional<Verdict> verdict_of(char c) {
  switch (c) {
    case 'B':
      return Verdict::kBetter;
    case 'S':
      return Verdict::kSame;
    case 'W':
      return Verdict::kWorse;
    default:
      return std::nullopt;
  }
}

// Feeds the rows; applies every change before the next row (the worker runs immediately).
void run_rows(NetDim& d, const std::vector<NetRow>& rows, int first_row = 0) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const NetRow& r = rows[i];
    SCOPED_TRACE(::testing::Message() << "row " << first_row + static_cast<int>(i));
    const uint64_t evaluated = d.windows_evaluated();
    const bool changed = d.on_sample(Sample::from_counters(r.t_ns, r.ev, r.pkts, r.bytes));
    EXPECT_EQ(changed, r.apply);
    EXPECT_EQ(d.windows_evaluated() - evaluated, r.verdict == '-' ? 0u : 1u);
    if (auto v = verdict_of(r.verdict)) {
      EXPECT_EQ(d.last_verdict(), v);
    }
    if (r.verdict == 'T') {
      EXPECT_EQ(d.last_verdict(), std::nullopt);  // parked tired: no comparison
    }
    EXPECT_EQ(d.profile_ix(), r.ix);
    EXPECT_EQ(d.tune_state(), r.tune);
    EXPECT_EQ(d.tired(), r.tired);
    EXPECT_EQ(d.steps_right(), r.sr);
    EXPECT_EQ(d.steps_left(), r.sl);
    EXPECT_EQ(d.state(),
              r.apply ? MeasureState::kApplyNewProfile : MeasureState::kMeasureInProgress);
    if (changed) d.profile_applied();
  }
}

std::vector<NetRow> n1_rows() {
  return {
      {0, 0, 0, ms(0), '-', 0, kPoT, 0, 0, 0, false},
      {64, 1000, 1'000'000, ms(1), 'B', 1, kGR, 1, 1, 0, true},
      {128, 2000, 2'000'000, ms(2), '-', 1, kGR, 1, 1, 0, false},
      {192, 3200, 3'200'000, ms(3), 'B', 2, kGR, 2, 2, 0, true},
      {256, 4200, 4'200'000, ms(4), '-', 2, kGR, 2, 2, 0, false},
      {320, 5600, 5'600'000, ms(5), 'B', 3, kGR, 3, 3, 0, true},
      {384, 6600, 6'600'000, ms(6), '-', 3, kGR, 3, 3, 0, false},
      {448, 7800, 7'800'000, ms(7), 'W', 2, kGL, 4, 3, 1, true},
      {512, 8800, 8'800'000, ms(8), '-', 2, kGL, 4, 3, 1, false},
      {576, 10200, 10'200'000, ms(9), 'B', 2, kPoT, 0, 0, 0, false},
      {640, 11600, 11'600'000, ms(10), 'S', 2, kPoT, 0, 0, 0, false},
      {704, 13000, 13'000'000, ms(11), 'S', 2, kPoT, 0, 0, 0, false},
  };
}

TEST(NetDimVectors, N1RampTurnParkOnTop) {
  NetDim d;
  run_rows(d, n1_rows());
  EXPECT_EQ(d.profile(), (Profile{64, 256, 0}));
  // Parked on top: the reference stays the window that parked it (sample 9).
  EXPECT_EQ(d.prev_stats(), (Stats{1400, 1'400'000, 64, 0, 0}));
}

TEST(NetDimVectors, N2DropWhileParked) {
  NetDim d;
  run_rows(d, n1_rows());
  run_rows(d,
           {
               {768, 13700, 13'700'000, ms(12), 'W', 1, kGL, 1, 0, 1, true},
               {832, 14400, 14'400'000, ms(13), '-', 1, kGL, 1, 0, 1, false},
               {896, 15100, 15'100'000, ms(14), 'S', 2, kGR, 2, 1, 1, true},
           },
           12);
  EXPECT_EQ(d.profile().usec, 64);
}

TEST(NetDimVectors, N3TiredParking) {
  std::vector<NetRow> rows;
  uint64_t ev = 0, pkts = 0, bytes = 0;
  for (int s = 0; s <= 40; ++s) {
    if (s > 0) {
      ev += 64;
      pkts += s == 26 ? 5000 : 1000;
      bytes += s == 26 ? 5'000'000 : 1'000'000;
    }
    NetRow r{ev, pkts, bytes, ms(s)};
    if (s == 0) {
      r = {ev, pkts, bytes, ms(s), '-', 2, kPoT, 0, 0, 0, false};
    } else if (s == 1) {
      r = {ev, pkts, bytes, ms(s), 'B', 1, kGL, 1, 0, 1, true};
    } else if (s <= 20 || s >= 32) {
      const NetRow& prev = rows.back();
      if (s % 2 == 0) {  // the sample after an apply starts the window
        r = prev;
        r.ev = ev, r.pkts = pkts, r.bytes = bytes, r.t_ns = ms(s), r.verdict = '-';
        r.apply = false;
      } else {  // SAME each time: ping-pong between 2 and 1
        const bool to_two = prev.ix == 1;
        r = {ev, pkts, bytes, ms(s), 'S', to_two ? 2 : 1, to_two ? kGR : kGL, prev.tired + 1,
             1,  1,    true};
      }
    } else if (s == 21) {  // step refused at tired 10
      r = {ev, pkts, bytes, ms(s), 'S', 2, kPT, 10, 0, 0, false};
    } else if (s <= 30) {  // stats ignored (sample 26 would be BETTER, 27 WORSE), countdown
      r = {ev, pkts, bytes, ms(s), 'T', 2, kPT, 31 - s, 0, 0, false};
    } else {  // s == 31: 10th tired window exits parking
      r = {ev, pkts, bytes, ms(s), 'T', 1, kGL, 1, 0, 1, true};
    }
    rows.push_back(r);
  }
  ASSERT_EQ(rows[19].tired, 10);
  ASSERT_EQ(rows[19].ix, 2);
  ASSERT_EQ(rows[39].ix, 1);
  ASSERT_EQ(rows[39].tired, 5);
  NetDim d(CqPeriodMode::kEqe, Direction::kRx, 2);
  run_rows(d, rows);
}

TEST(NetDimVectors, N4EventRateBreaksTies) {
  NetDim d;
  run_rows(d, {
                  {0, 0, 0, ms(0), '-', 0, kPoT, 0, 0, 0, false},
                  {64, 1000, 1'000'000, ms(1), 'B', 1, kGR, 1, 1, 0, true},
                  {128, 2000, 2'000'000, ms(2), '-', 1, kGR, 1, 1, 0, false},
                  {192, 4000, 4'000'000, ms(4), 'B', 2, kGR, 2, 2, 0, true},
                  {256, 5000, 5'000'000, ms(5), '-', 2, kGR, 2, 2, 0, false},
                  {320, 7000, 7'000'000, ms(7), 'S', 1, kGL, 3, 2, 1, true},
                  {384, 8000, 8'000'000, ms(8), '-', 1, kGL, 3, 2, 1, false},
                  {448, 9000, 9'000'000, ms(9), 'W', 2, kGR, 4, 1, 1, true},
              });
  EXPECT_EQ(d.last_stats(), (Stats{1000, 1'000'000, 64, 0, 0}));
}

TEST(NetDimVectors, N5LeftEdge) {
  NetDim d(CqPeriodMode::kEqe, Direction::kRx, 4);
  run_rows(d, {
                  {0, 0, 0, ms(0), '-', 4, kPoT, 0, 0, 0, false},
                  {64, 500, 500'000, ms(1), 'B', 3, kGL, 1, 0, 1, true},
                  {128, 1000, 1'000'000, ms(2), '-', 3, kGL, 1, 0, 1, false},
                  {192, 1600, 1'600'000, ms(3), 'B', 2, kGL, 2, 0, 2, true},
                  {256, 2200, 2'200'000, ms(4), '-', 2, kGL, 2, 0, 2, false},
                  {320, 2920, 2'920'000, ms(5), 'B', 1, kGL, 3, 0, 3, true},
                  {384, 3640, 3'640'000, ms(6), '-', 1, kGL, 3, 0, 3, false},
                  {448, 4504, 4'504'000, ms(7), 'B', 0, kGL, 4, 0, 4, true},
                  {512, 5368, 5'368'000, ms(8), '-', 0, kGL, 4, 0, 4, false},
                  {576, 6400, 6'400'000, ms(9), 'B', 0, kPoT, 0, 0, 0, false},
                  {640, 7432, 7'432'000, ms(10), 'S', 0, kPoT, 0, 0, 0, false},
              });
  EXPECT_EQ(d.profile().usec, 1);
}

TEST(NetDimVectors, N6OnTopGoingRight) {
  NetDim d(CqPeriodMode::kEqe, Direction::kRx, 4);
  run_rows(d, {
                  {0, 0, 0, ms(0), '-', 4, kPoT, 0, 0, 0, false},
                  {64, 500, 500'000, ms(1), 'B', 3, kGL, 1, 0, 1, true},
                  {128, 1000, 1'000'000, ms(2), '-', 3, kGL, 1, 0, 1, false},
                  {192, 1600, 1'600'000, ms(3), 'B', 2, kGL, 2, 0, 2, true},
                  {256, 2200, 2'200'000, ms(4), '-', 2, kGL, 2, 0, 2, false},
                  {320, 2700, 2'700'000, ms(5), 'W', 3, kGR, 3, 1, 2, true},
                  {384, 3200, 3'200'000, ms(6), '-', 3, kGR, 3, 1, 2, false},
                  {448, 3800, 3'800'000, ms(7), 'B', 3, kPoT, 0, 0, 0, false},
              });
}

TEST(NetDimVectors, N7RightEdge) {
  NetDim d;
  run_rows(d, {
                  {0, 0, 0, ms(0), '-', 0, kPoT, 0, 0, 0, false},
                  {64, 1000, 1'000'000, ms(1), 'B', 1, kGR, 1, 1, 0, true},
                  {128, 2000, 2'000'000, ms(2), '-', 1, kGR, 1, 1, 0, false},
                  {192, 3200, 3'200'000, ms(3), 'B', 2, kGR, 2, 2, 0, true},
                  {256, 4400, 4'400'000, ms(4), '-', 2, kGR, 2, 2, 0, false},
                  {320, 5840, 5'840'000, ms(5), 'B', 3, kGR, 3, 3, 0, true},
                  {384, 7280, 7'280'000, ms(6), '-', 3, kGR, 3, 3, 0, false},
                  {448, 9008, 9'008'000, ms(7), 'B', 4, kGR, 4, 4, 0, true},
                  {512, 10736, 10'736'000, ms(8), '-', 4, kGR, 4, 4, 0, false},
                  {576, 12810, 12'810'000, ms(9), 'B', 4, kPoT, 0, 0, 0, false},
              });
  EXPECT_EQ(d.profile().usec, 256);
}

TEST(NetDimVectors, N8CounterWrap) {
  const std::vector<NetRow> wide = {
      {65500, 4'294'967'000, 4'294'000'000, ms(0), '-', 0, kPoT, 0, 0, 0, false},
      {65564, 4'294'968'000, 4'295'000'000, ms(1), 'B', 1, kGR, 1, 1, 0, true},
      {65628, 4'294'969'000, 4'296'000'000, ms(2), '-', 1, kGR, 1, 1, 0, false},
      {65692, 4'294'970'200, 4'297'200'000, ms(3), 'B', 2, kGR, 2, 2, 0, true},
  };
  NetDim d;
  run_rows(d, wide);
  EXPECT_EQ(d.last_stats(), (Stats{1200, 1'200'000, 64, 0, 0}));
  // The already-truncated values give the same trace.
  std::vector<NetRow> narrow = wide;
  narrow[1].ev = 28, narrow[1].pkts = 704, narrow[1].bytes = 32'704;
  narrow[2].ev = 92, narrow[2].pkts = 1704, narrow[2].bytes = 1'032'704;
  narrow[3].ev = 156, narrow[3].pkts = 2904, narrow[3].bytes = 2'232'704;
  NetDim n;
  run_rows(n, narrow);
  EXPECT_EQ(n.last_stats(), d.last_stats());
}

TEST(NetDimVectors, N9ZeroDeltaAndConstantEvents) {
  NetDim d;
  run_rows(d, {
                  {0, 0, 0, 0, '-', 0, kPoT, 0, 0, 0, false},
                  {64, 10, 10'000, 999, '-', 0, kPoT, 0, 0, 0, false},  // skip
              });
  EXPECT_EQ(d.window_start().time_ns, 0);
  EXPECT_EQ(d.window_start().event_ctr, 0);
  run_rows(d, {{200, 2000, 2'000'000, ms(1), 'B', 1, kGR, 1, 1, 0, true}}, 2);
  EXPECT_EQ(d.last_stats(), (Stats{2000, 2'000'000, 64, 0, 0}));
}

TEST(NetDimVectors, N10WaitZeroTrafficOnset) {
  NetDim d(CqPeriodMode::kEqe, Direction::kRx, 1);
  run_rows(d, {
                  {0, 0, 0, ms(0), '-', 1, kPoT, 0, 0, 0, false},
                  {63, 0, 0, ms(1), '-', 1, kPoT, 0, 0, 0, false},
                  {64, 0, 0, ms(2), 'S', 1, kPoT, 0, 0, 0, false},
              });
  EXPECT_EQ(d.last_stats(), (Stats{0, 0, 32, 0, 0}));
  EXPECT_EQ(d.window_start().event_ctr, 64);  // the window restarted at the deciding sample
  run_rows(d,
           {
               {128, 0, 0, ms(3), 'S', 1, kPoT, 0, 0, 0, false},
               {192, 1000, 1'000'000, ms(4), 'B', 0, kGL, 1, 0, 1, true},
           },
           3);
}

TEST(NetDimVectors, N11SamplesIgnoredWhilePending) {
  NetDim d;
  EXPECT_FALSE(d.on_sample(Sample::from_counters(ms(0), 0, 0, 0)));
  EXPECT_TRUE(d.on_sample(Sample::from_counters(ms(1), 64, 1000, 1'000'000)));
  EXPECT_EQ(d.state(), MeasureState::kApplyNewProfile);
  EXPECT_EQ(d.profile_ix(), 1);
  EXPECT_FALSE(d.on_sample(Sample::from_counters(ms(2), 128, 2000, 2'000'000)));
  EXPECT_EQ(d.state(), MeasureState::kApplyNewProfile);
  EXPECT_EQ(d.windows_evaluated(), 1u);
  d.profile_applied();
  EXPECT_EQ(d.state(), MeasureState::kStartMeasure);
  run_rows(d,
           {
               {192, 3000, 3'000'000, ms(3), '-', 1, kGR, 1, 1, 0, false},
               {256, 4200, 4'200'000, ms(4), 'B', 2, kGR, 2, 2, 0, true},
           },
           3);
}

TEST(NetDimVectors, N12CounterGoesBackwards) {
  NetDim d;
  run_rows(d, {
                  {1000, 50'000, 50'000'000, ms(0), '-', 0, kPoT, 0, 0, 0, false},
                  {10, 100, 100'000, ms(1), 'B', 1, kGR, 1, 1, 0, true},
              });
  ASSERT_TRUE(d.last_stats().has_value());
  EXPECT_EQ(d.last_stats()->ppms, -49'900);
  EXPECT_EQ(d.last_stats()->bpms, -49'900'000);
}

// Parked on top, the reference is frozen: +6 % per window is never significant step to step,
// but the second such window is +12 % against the frozen reference and leaves parking.
TEST(NetDim, SlowDriftWhileParkedIsMeasuredAgainstTheFrozenReference) {
  std::vector<NetRow> rows = n1_rows();
  rows.resize(10);  // parked on top at ix2 after sample 9, reference 1400/1.4e6/64
  rows.push_back({640, 11684, 11'684'000, ms(10), 'S', 2, kPoT, 0, 0, 0, false});
  rows.push_back({704, 13257, 13'257'000, ms(11), 'B', 1, kGL, 1, 0, 1, true});
  NetDim d;
  run_rows(d, rows);
}

TEST(NetDim, RestartWindowStartsAfreshAndKeepsTuning) {
  NetDim d;
  run_rows(d, {
                  {0, 0, 0, ms(0), '-', 0, kPoT, 0, 0, 0, false},
                  {64, 1000, 1'000'000, ms(1), 'B', 1, kGR, 1, 1, 0, true},
                  {128, 2000, 2'000'000, ms(2), '-', 1, kGR, 1, 1, 0, false},
              });
  d.restart_window();
  EXPECT_EQ(d.state(), MeasureState::kStartMeasure);
  // A reset counter would have been a 64,546-event garbage window; now it is a start.
  EXPECT_FALSE(d.on_sample(Sample::from_counters(ms(3), 10, 100, 100'000)));
  EXPECT_EQ(d.windows_evaluated(), 1u);
  EXPECT_EQ(d.window_start().event_ctr, 10);
  EXPECT_EQ(d.profile_ix(), 1);
  EXPECT_EQ(d.tune_state(), kGR);
}

TEST(NetDim, ProfileAppliedIsANoOpWithoutPendingChange) {
  NetDim d;
  d.on_sample(Sample::from_counters(0, 0, 0, 0));
  d.profile_applied();
  EXPECT_EQ(d.state(), MeasureState::kMeasureInProgress);
}

TEST(NetDim, CustomProfilesKeepTheIndex) {
  NetDim d(CqPeriodMode::kCqe, Direction::kTx, 3);
  EXPECT_EQ(d.profile(), (Profile{32, 32, 0}));
  NetProfiles custom{};
  custom[3] = Profile{100, 10, 0};
  EXPECT_EQ(d.profile_ix(), 3);
  EXPECT_EQ(d.profile(custom), (Profile{100, 10, 0}));
  EXPECT_EQ(d.profile(), (Profile{32, 32, 0}));
}

TEST(NetDim, StartIndexIsClampedToTheTable) {
  NetDim d(CqPeriodMode::kEqe, Direction::kRx, 200);
  EXPECT_EQ(d.profile_ix(), 4);
}

}  // namespace
}  // namespace dim
