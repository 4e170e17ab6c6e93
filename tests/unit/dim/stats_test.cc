// Building blocks: tables, sample truncation, BIT_GAP, dim_calc_stats and the 10 % rule.
#include <gtest/gtest.h>

#include <climits>

#include "dim/profile.h"
#include "dim/sample.h"
#include "dim/state.h"
#include "dim/stats.h"

namespace dim {
namespace {

TEST(Profiles, NetTablesMatchSpec61) {
  EXPECT_EQ(net_profiles(CqPeriodMode::kEqe, Direction::kRx)[2], (Profile{64, 256, 0}));
  EXPECT_EQ(net_profiles(CqPeriodMode::kEqe, Direction::kRx)[4], (Profile{256, 256, 0}));
  EXPECT_EQ(net_profiles(CqPeriodMode::kCqe, Direction::kRx)[0], (Profile{2, 256, 0}));
  EXPECT_EQ(net_profiles(CqPeriodMode::kCqe, Direction::kRx)[1], (Profile{8, 128, 0}));
  EXPECT_EQ(net_profiles(CqPeriodMode::kEqe, Direction::kTx)[2], (Profile{32, 128, 0}));
  EXPECT_EQ(net_profiles(CqPeriodMode::kCqe, Direction::kTx)[0], (Profile{5, 128, 0}));
  EXPECT_EQ(net_profiles(CqPeriodMode::kCqe, Direction::kTx)[4], (Profile{64, 32, 0}));
}

TEST(Profiles, RdmaTableMatchesSpec62) {
  const uint16_t usec[] = {1, 1, 2, 2, 4, 16, 16, 32, 32};
  const uint16_t comps[] = {1, 4, 4, 8, 8, 8, 16, 16, 32};
  for (int i = 0; i < kRdmaNumProfiles; ++i) {
    EXPECT_EQ(rdma_profiles()[i], (Profile{usec[i], 0, comps[i]})) << i;
  }
}

TEST(Enums, KernelNamesAndValues) {
  EXPECT_EQ(to_string(TuneState::kParkingTired), "PARKING_TIRED");
  EXPECT_EQ(to_string(MeasureState::kApplyNewProfile), "APPLY_NEW_PROFILE");
  EXPECT_EQ(to_string(Verdict::kBetter), "BETTER");
  EXPECT_EQ(static_cast<int>(TuneState::kGoingLeft), 3);
  EXPECT_EQ(static_cast<int>(MeasureState::kMeasureInProgress), 1);
  EXPECT_EQ(static_cast<int>(Verdict::kWorse), 0);
}

TEST(Sample, FromCountersTruncatesToKernelWidths) {
  const Sample s =
      Sample::from_counters(5, 65564, 4'294'968'000ULL, 4'295'000'000ULL, (1ULL << 32) + 7);
  EXPECT_EQ(s.time_ns, 5);
  EXPECT_EQ(s.event_ctr, 28);
  EXPECT_EQ(s.pkt_ctr, 704u);
  EXPECT_EQ(s.byte_ctr, 32'704u);
  EXPECT_EQ(s.comp_ctr, 7u);
}

TEST(BitGap, ForwardDistanceModulo) {
  EXPECT_EQ(bit_gap16(28, 65500), 64);
  EXPECT_EQ(bit_gap16(10, 1000), 64'546);  // N12: backwards looks like a huge jump
  EXPECT_EQ(bit_gap32(704, 4'294'967'000u), 1000u);
  EXPECT_EQ(bit_gap32(5, 5), 0u);
}

TEST(CalcStats, ZeroMicrosecondsLeavesOutputUntouched) {
  Stats out{1, 2, 3, 4, 5};
  EXPECT_FALSE(calc_stats(Sample{}, Sample{.time_ns = 999}, &out));
  EXPECT_EQ(out, (Stats{1, 2, 3, 4, 5}));
}

TEST(CalcStats, CeilForRatesFloorForRatio) {
  Stats out;
  // 60 us, 48 completions (R6's short window): cpms ceil(800), epms ceil(1066.7), cpe floor.
  ASSERT_TRUE(calc_stats(Sample{.time_ns = 0}, Sample{.time_ns = 60'000, .comp_ctr = 48}, &out));
  EXPECT_EQ(out.cpms, 800);
  EXPECT_EQ(out.epms, 1067);
  EXPECT_EQ(out.cpe_ratio, 74);
  // 3 packets in 7 us: ceil(428.57) = 429.
  ASSERT_TRUE(calc_stats(Sample{.time_ns = 0}, Sample{.time_ns = 7'999, .pkt_ctr = 3}, &out));
  EXPECT_EQ(out.ppms, 429);
  EXPECT_EQ(out.epms, 9143);
}

TEST(CalcStats, BackwardsCounterTruncatesToNegativeInt) {
  Stats out;
  const Sample start = Sample::from_counters(0, 1000, 50'000, 50'000'000);
  const Sample end = Sample::from_counters(1'000'000, 10, 100, 100'000);
  ASSERT_TRUE(calc_stats(start, end, &out));
  EXPECT_EQ(out.ppms, -49'900);
  EXPECT_EQ(out.bpms, -49'900'000);
}

TEST(CalcStats, NegativeTimeDeltaWrapsAsU32) {
  Stats out;
  // -1 ms -> -1000 us -> 4294966296 us as u32: every rate rounds up to at most 1.
  ASSERT_TRUE(calc_stats(Sample{.time_ns = 1'000'000}, Sample{.time_ns = 0, .pkt_ctr = 5}, &out));
  EXPECT_EQ(out.epms, 1);
  EXPECT_EQ(out.ppms, 1);
}

TEST(IsSignificant, ElevenPercentInIntegerMath) {
  EXPECT_TRUE(is_significant(1110, 1000));
  EXPECT_FALSE(is_significant(1109, 1000));
  EXPECT_TRUE(is_significant(890, 1000));
  EXPECT_FALSE(is_significant(891, 1000));
  EXPECT_TRUE(is_significant(1'400'000, 1'200'000));  // 16
  EXPECT_FALSE(is_significant(408, 400));             // 2
  EXPECT_FALSE(is_significant(5, 0));                 // ref 0 guard
  EXPECT_FALSE(is_significant(5, -49'900));           // negative ref is a huge unsigned divisor
  EXPECT_TRUE(is_significant(-49'900, 1000));
  EXPECT_TRUE(is_significant(INT_MIN, 1));  // abs() wraps; still a huge unsigned numerator
}

}  // namespace
}  // namespace dim
