// Building blocks: tables, sample truncation, BIT_GAP, dim_calc_stats and the 10 % rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>

#include "dim/profile.h"
#include "dim/sample.h"
#include "dim/state.h"
#include "dim/stats.h"

namespace dim {
namespace {

// The random-input tests' generator (xorshift64): reproducible, and every bit pattern in reach.
void xorshift(uint64_t& x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
}

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

// is_significant() and calc_stats() avoid 64-bit divisions for speed; these pin them to the
// macro's literal arithmetic (a division in unsigned long) over edges and random inputs.
bool significant_by_division(int val, int ref) {
  if (ref == 0) return false;
  const auto diff = static_cast<int32_t>(static_cast<int64_t>(val) - ref);
  const auto mag = static_cast<int32_t>(diff < 0 ? -static_cast<int64_t>(diff) : diff);
  return 100 * static_cast<uint64_t>(static_cast<int64_t>(mag)) /
             static_cast<uint64_t>(static_cast<int64_t>(ref)) >
         10;
}

TEST(IsSignificant, SameAsTheDivisionEverywhere) {
  const int edges[] = {INT_MIN,
                       INT_MIN + 1,
                       -1'000'000,
                       -1001,
                       -1000,
                       -1,
                       0,
                       1,
                       2,
                       9,
                       10,
                       11,
                       89,
                       90,
                       100,
                       110,
                       111,
                       999,
                       1000,
                       1110,
                       1111,
                       INT_MAX / 100,
                       INT_MAX / 100 + 1,
                       INT_MAX - 1,
                       INT_MAX};
  for (int v : edges) {
    for (int r : edges) {
      ASSERT_EQ(is_significant(v, r), significant_by_division(v, r)) << v << " vs " << r;
    }
  }
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 200'000; ++i) {
    xorshift(x);
    // Mostly nearby values (where the 10 % boundary is), some anywhere in int.
    const auto r = static_cast<int>(static_cast<int32_t>(x >> 32) >> ((x & 3) * 8));
    // Near r: r + d * (r / 64 + 1) for a small d, in 64 bits (in int it overflowed for large r,
    // which UBSan reports); where it leaves int it wraps (modular conversion, C++20).
    const int64_t near = int64_t{r} + int64_t{static_cast<int8_t>(x >> 8)} * (r / 64 + 1);
    const int v =
        (x & 16) != 0 ? static_cast<int>(static_cast<int32_t>(x)) : static_cast<int>(near);
    ASSERT_EQ(is_significant(v, r), significant_by_division(v, r)) << v << " vs " << r;
  }
}

TEST(CalcStats, SameAsTheSixtyFourBitDivisionEverywhere) {
  auto rate = [](uint64_t count, uint32_t us) {
    return static_cast<int32_t>((count * 1000 + us - 1) / us);
  };
  uint64_t x = 0x243F6A8885A308D3ULL;
  for (int i = 0; i < 200'000; ++i) {
    xorshift(x);
    Sample a, b;
    b.time_ns = static_cast<int64_t>((x >> 40) + 1000) * ((i % 3 == 0) ? 1000 : 1);
    b.pkt_ctr = static_cast<uint32_t>(x) >> ((x >> 5) & 31);
    b.byte_ctr = static_cast<uint32_t>(x >> 16) >> ((x >> 10) & 31);
    b.comp_ctr = (i % 2 == 0) ? 0 : static_cast<uint32_t>(x >> 24);
    Stats out;
    const auto us = static_cast<uint32_t>(b.time_ns / 1000);
    ASSERT_EQ(calc_stats(a, b, &out), us != 0);
    if (us == 0) continue;
    ASSERT_EQ(out.ppms, rate(b.pkt_ctr, us));
    ASSERT_EQ(out.bpms, rate(b.byte_ctr, us));
    ASSERT_EQ(out.epms, rate(kNEvents, us));
    ASSERT_EQ(out.cpms, rate(b.comp_ctr, us));
    const int32_t cpe =
        out.epms != 0 ? static_cast<int32_t>(static_cast<uint64_t>(static_cast<int64_t>(out.cpms)) *
                                             100 / static_cast<uint32_t>(out.epms))
                      : 0;
    ASSERT_EQ(out.cpe_ratio, cpe);
  }
}

// RateDivider replaces the division by the window length; it must agree with the division
// for every numerator, including the largest 64-bit ones (the rate numerators stay below 2^43,
// but divide() claims all of them), and across changes of the length.
TEST(RateDivider, DividesExactlyAtTheEdges) {
  const uint32_t lengths[] = {1,
                              2,
                              3,
                              7,
                              10,
                              64,
                              999,
                              1000,
                              1001,
                              49'999,
                              50'000,
                              65'536,
                              1'000'003,
                              1u << 31,
                              (1u << 31) + 1,
                              UINT32_MAX - 1,
                              UINT32_MAX};
  RateDivider div;
  for (const uint32_t d : lengths) {
    div.prepare(d);
    ASSERT_EQ(div.delta_us(), d);
    const uint64_t nums[] = {0,
                             1,
                             d - 1ULL,
                             d,
                             d + 1ULL,
                             2ULL * d - 1,
                             2ULL * d,
                             1000ULL * d - 1,
                             1000ULL * d,
                             (uint64_t{UINT32_MAX} * 1000 + d - 1),
                             UINT64_MAX / d * d - 1,
                             UINT64_MAX / d * d,
                             UINT64_MAX - 1,
                             UINT64_MAX};
    for (const uint64_t n : nums) ASSERT_EQ(div.divide(n), n / d) << n << " / " << d;
    ASSERT_EQ(div.epms(), detail::rate(kNEvents, d)) << d;
  }
}

TEST(RateDivider, SameAsTheDivisionOnRandomInputs) {
  RateDivider div;
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 300'000; ++i) {
    xorshift(x);
    // Lengths of every magnitude, numerators of every width.
    const auto d = std::max<uint32_t>(1, static_cast<uint32_t>(x >> 32) >> ((x >> 3) & 31));
    const uint64_t n = (x * 0x2545F4914F6CDD1DULL) >> ((x >> 9) & 63);
    div.prepare(d);
    ASSERT_EQ(div.divide(n), n / d) << n << " / " << d;
    const auto count = static_cast<uint32_t>(n);
    ASSERT_EQ(div.rate(count), detail::rate(count, d)) << count << " / " << d;
  }
}

// calc_stats() with a divider gives what calc_stats() gives, whatever the divider held before.
TEST(CalcStats, WithADividerSameAsWithout) {
  RateDivider div;
  uint64_t x = 0x243F6A8885A308D3ULL;
  for (int i = 0; i < 200'000; ++i) {
    xorshift(x);
    Sample a, b;
    a.time_ns = static_cast<int64_t>(x & 0xffff);
    // A few lengths over and over (the controller's case, some equal in us but not in ns),
    // then anything, backwards (a huge u32 length) and under 1 us too.
    b.time_ns = a.time_ns + ((i % 4 != 0) ? 50'000'000 + (x >> 60) * 1000 + (x >> 58 & 3)
                                          : static_cast<int64_t>((x >> 40) + 1000));
    if (i % 7 == 0) b.time_ns = a.time_ns - static_cast<int64_t>(x >> 44);
    if (i % 11 == 0) b.time_ns = a.time_ns + static_cast<int64_t>(x >> 54);
    b.pkt_ctr = static_cast<uint32_t>(x) >> ((x >> 5) & 31);
    b.byte_ctr = static_cast<uint32_t>(x >> 16) >> ((x >> 10) & 31);
    a.byte_ctr = static_cast<uint32_t>(x >> 20);  // wraps in half the cases
    b.comp_ctr = (i % 2 == 0) ? 0 : static_cast<uint32_t>(x >> 24);
    Stats plain, divided;
    const bool ok = calc_stats(a, b, &plain);
    ASSERT_EQ(calc_stats(a, b, &divided, div), ok);
    if (ok) {
      ASSERT_EQ(divided, plain) << i;
    }
  }
  Stats out;
  EXPECT_FALSE(calc_stats(Sample{}, Sample{.time_ns = 999}, &out, div));
}

}  // namespace
}  // namespace dim
