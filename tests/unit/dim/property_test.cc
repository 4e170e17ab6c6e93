// Properties on seeded random streams: index range, the 64-event rule, invariance under
// counter offsets (wrap), and zero-delta windows being no-ops.
#include <gtest/gtest.h>

#include "dim/net_dim.h"
#include "dim/rdma_dim.h"
#include "random_streams.h"

namespace dim {
namespace {

using testing::NetStream;
using testing::RawNetSample;
using testing::RdmaStream;

constexpr int kSeeds = 16;
constexpr int kSteps = 20'000;

Sample to_sample(const RawNetSample& r) {
  return Sample::from_counters(r.time_ns, r.events, r.packets, r.bytes);
}

void expect_same_decision_state(const NetDim& a, const NetDim& b) {
  EXPECT_EQ(a.tuner(), b.tuner());
  EXPECT_EQ(a.state(), b.state());
  EXPECT_EQ(a.prev_stats(), b.prev_stats());
  EXPECT_EQ(a.last_stats(), b.last_stats());
  EXPECT_EQ(a.last_verdict(), b.last_verdict());
  EXPECT_EQ(a.windows_evaluated(), b.windows_evaluated());
}

class DimProperty : public ::testing::TestWithParam<int> {};

TEST_P(DimProperty, NetIndexInRangeAndDecisionsNeedSixtyFourEvents) {
  NetStream gen(1000 + GetParam());
  const auto mode = gen.pick(0, 1) ? CqPeriodMode::kCqe : CqPeriodMode::kEqe;
  NetDim d(mode, gen.pick(0, 1) ? Direction::kTx : Direction::kRx,
           static_cast<uint8_t>(gen.pick(0, 4)));
  uint64_t decisions = 0;
  for (int i = 0; i < kSteps; ++i) {
    const Sample s = to_sample(gen.next());
    const Sample start = d.window_start();
    const MeasureState before = d.state();
    const uint64_t evaluated = d.windows_evaluated();
    const bool changed = d.on_sample(s);
    ASSERT_LT(d.profile_ix(), kNetNumProfiles);
    ASSERT_LE(d.tired(), kNetTiredLimit);
    if (d.windows_evaluated() != evaluated) {
      ++decisions;
      ASSERT_EQ(before, MeasureState::kMeasureInProgress);
      ASSERT_GE(bit_gap16(s.event_ctr, start.event_ctr), kNEvents) << "step " << i;
      ASSERT_NE(static_cast<uint32_t>((s.time_ns - start.time_ns) / 1000), 0u);
    }
    if (changed) {
      ASSERT_EQ(d.state(), MeasureState::kApplyNewProfile);
      // Pending: further samples are ignored entirely.
      const NetDim copy = d;
      ASSERT_FALSE(d.on_sample(to_sample(gen.next())));
      expect_same_decision_state(copy, d);
      d.profile_applied();
    }
  }
  EXPECT_GT(decisions, 100u);  // the stream really exercised decisions
}

// keeps_measuring() is the caller's shortcut around on_sample(): where it says so, on_sample()
// must leave everything as it was; where it does not, the sample must matter to DIM (a window
// start, a decision, or a sample ignored while a profile change is pending). A caller holding a
// copy of the window start (the controller) gets the same answer from window_short().
TEST_P(DimProperty, NetKeepsMeasuringIsExactlyTheNoOpPath) {
  NetStream gen(3000 + GetParam());
  NetDim d(gen.pick(0, 1) ? CqPeriodMode::kCqe : CqPeriodMode::kEqe, Direction::kRx, 0);
  uint64_t skipped = 0, taken = 0;
  for (int i = 0; i < kSteps; ++i) {
    const Sample s = to_sample(gen.next());
    const bool keeps = d.keeps_measuring(s);
    // What a caller holding a copy of the window start computes.
    ASSERT_EQ(keeps, d.state() == MeasureState::kMeasureInProgress &&
                         NetDim::window_short(s.event_ctr, d.window_start().event_ctr))
        << "step " << i;
    const NetDim copy = d;
    const bool changed = d.on_sample(s);
    if (keeps) {
      ++skipped;
      ASSERT_FALSE(changed);
      expect_same_decision_state(copy, d);
      ASSERT_EQ(copy.window_start(), d.window_start());
    } else {
      ++taken;
      const bool window_started = copy.state() == MeasureState::kStartMeasure;
      const bool decided = d.windows_evaluated() != copy.windows_evaluated();
      const bool pending = copy.state() == MeasureState::kApplyNewProfile;
      const bool short_window =
          copy.state() == MeasureState::kMeasureInProgress &&
          static_cast<uint32_t>((s.time_ns - copy.window_start().time_ns) / 1000) == 0;
      ASSERT_TRUE(window_started || decided || pending || short_window) << "step " << i;
    }
    if (d.state() == MeasureState::kApplyNewProfile && gen.pick(0, 1)) d.profile_applied();
  }
  EXPECT_GT(skipped, 1000u);
  EXPECT_GT(taken, 1000u);
}

TEST_P(DimProperty, NetCounterOffsetsChangeNothing) {
  NetStream gen(2000 + GetParam());
  // 2^16 / 2^32 multiples vanish in truncation; the odd offsets force wraps mid-window.
  const uint64_t ev_off = GetParam() % 2 ? (uint64_t{1} << 16) * 3 : gen.pick(1, 0xffff);
  const uint64_t pkt_off = GetParam() % 2 ? uint64_t{1} << 32 : gen.pick(1, 0xffffffffULL);
  const uint64_t byte_off = gen.pick(1, 0xffffffffULL);
  NetDim plain;
  NetDim shifted;
  for (int i = 0; i < kSteps; ++i) {
    RawNetSample r = gen.next();
    const bool a = plain.on_sample(to_sample(r));
    r.events += ev_off, r.packets += pkt_off, r.bytes += byte_off;
    const bool b = shifted.on_sample(to_sample(r));
    ASSERT_EQ(a, b) << "step " << i;
    expect_same_decision_state(plain, shifted);
    if (::testing::Test::HasFailure()) FAIL() << "step " << i;
    if (a) {
      plain.profile_applied();
      shifted.profile_applied();
    }
  }
}

TEST_P(DimProperty, NetZeroTimeDeltaChangesNothing) {
  NetStream gen(3000 + GetParam());
  NetDim d(CqPeriodMode::kEqe, Direction::kRx, static_cast<uint8_t>(gen.pick(0, 4)));
  int probes = 0;
  for (int i = 0; i < kSteps / 4; ++i) {
    if (d.state() == MeasureState::kMeasureInProgress) {
      const NetDim copy = d;
      NetDim probe = d;
      const Sample& start = d.window_start();
      Sample s = Sample::from_counters(start.time_ns + static_cast<int64_t>(gen.pick(0, 999)),
                                       start.event_ctr + gen.pick(64, 60'000),
                                       gen.pick(0, 1ULL << 40), gen.pick(0, 1ULL << 40));
      ASSERT_FALSE(probe.on_sample(s));
      expect_same_decision_state(copy, probe);
      ASSERT_EQ(probe.window_start(), copy.window_start());
      ++probes;
    }
    if (d.on_sample(to_sample(gen.next()))) d.profile_applied();
  }
  EXPECT_GT(probes, 1000);
}

// The instance's own totals (verdicts_total(), changes_total(), windows_evaluated()) against
// what on_sample() and the outcome say, at every sample: its small counters fold into the totals
// every 255 windows, and the stream goes through many folds.
TEST_P(DimProperty, NetTotalsCountEveryWindowAcrossFolds) {
  NetStream gen(1300 + GetParam());
  NetDim d;
  RateDivider div;
  uint64_t windows = 0, changes = 0, verdicts[3] = {0, 0, 0};
  for (int i = 0; i < kSteps; ++i) {
    const Sample s = to_sample(gen.next());
    const bool closes = d.state() == MeasureState::kMeasureInProgress && !d.keeps_measuring(s);
    const uint64_t before = d.windows_evaluated();
    // Both entry points: the controller's close_window() and feed() through on_sample().
    const NetDim::Outcome o =
        closes && i % 2 == 0 ? d.close_window(s.time_ns, s.pkt_ctr, s.byte_ctr, s.event_ctr, div)
                             : d.feed(s);
    windows += d.windows_evaluated() - before;
    ASSERT_LE(d.windows_evaluated() - before, 1u);
    changes += o.changed() ? 1 : 0;
    if (o.has_verdict()) ++verdicts[static_cast<size_t>(o.verdict())];
    ASSERT_EQ(d.changes_total(), changes) << "sample " << i;
    for (int v = 0; v < 3; ++v) {
      ASSERT_EQ(d.verdicts_total(static_cast<Verdict>(v)), verdicts[v]) << "sample " << i;
    }
    if (d.state() == MeasureState::kApplyNewProfile) d.profile_applied();
  }
  ASSERT_EQ(d.windows_evaluated(), windows);
  EXPECT_GT(windows, 3u * 255);  // several folds
  EXPECT_GT(changes, 50u);

  // A successor continues the verdict and change totals, not the windows or their stats.
  NetDim next(CqPeriodMode::kCqe);
  next.carry_totals(d);
  EXPECT_EQ(next.changes_total(), changes);
  for (int v = 0; v < 3; ++v) EXPECT_EQ(next.verdicts_total(static_cast<Verdict>(v)), verdicts[v]);
  EXPECT_EQ(next.windows_evaluated(), 0u);
  EXPECT_FALSE(next.last_stats().has_value());
  EXPECT_FALSE(next.last_verdict().has_value());
  NetDim fresh;
  EXPECT_EQ(fresh.changes_total(), 0u);
}

TEST_P(DimProperty, RdmaIndexInRangeAndWindowRule) {
  RdmaStream gen(4000 + GetParam());
  RdmaDim d;
  uint64_t decisions = 0;
  int hold = 0;
  for (int i = 0; i < 5 * kSteps; ++i) {
    const auto e = gen.next();
    const Sample start = d.window_start();
    const MeasureState before = d.state();
    const uint64_t evaluated = d.windows_evaluated();
    const bool changed = d.on_event(e.time_ns, e.completions);
    ASSERT_LT(d.profile_ix(), kRdmaNumProfiles);
    ASSERT_EQ(d.tired(), 0);
    ASSERT_TRUE(d.tune_state() == TuneState::kGoingRight ||
                d.tune_state() == TuneState::kGoingLeft);
    if (d.windows_evaluated() != evaluated) {
      ++decisions;
      ASSERT_EQ(before, MeasureState::kMeasureInProgress);
      // >= 64 events, or the u16 counter wrapped below the window start (the R6 quirk).
      const uint16_t now = d.measuring_sample().event_ctr;
      ASSERT_TRUE(now - start.event_ctr >= kNEvents || now < start.event_ctr) << "event " << i;
    }
    if (changed) hold = static_cast<int>(gen.pick(0, 100));
    if (d.state() == MeasureState::kApplyNewProfile && hold-- <= 0) d.profile_applied();
  }
  EXPECT_GT(decisions, 500u);
}

TEST_P(DimProperty, RdmaCompletionOffsetChangesNothing) {
  RdmaStream gen(5000 + GetParam());
  RdmaDim plain;
  RdmaDim shifted;
  const auto off = static_cast<uint32_t>(gen.pick(1, 0xffffffffULL));
  for (int i = 0; i < 5 * kSteps; ++i) {
    const auto e = gen.next();
    // The first event only seeds the window start, so an offset there shifts every counter.
    const bool a = plain.on_event(e.time_ns, e.completions);
    const bool b = shifted.on_event(e.time_ns, e.completions + (i == 0 ? off : 0));
    ASSERT_EQ(a, b) << "event " << i;
    ASSERT_EQ(plain.tuner(), shifted.tuner()) << "event " << i;
    ASSERT_EQ(plain.prev_stats(), shifted.prev_stats()) << "event " << i;
    if (a) {
      plain.profile_applied();
      shifted.profile_applied();
    }
  }
}

TEST_P(DimProperty, RdmaZeroTimeDeltaChangesNothing) {
  RdmaStream gen(6000 + GetParam());
  RdmaDim d;
  int probes = 0;
  for (int i = 0; i < kSteps; ++i) {
    if (d.state() == MeasureState::kMeasureInProgress) {
      RdmaDim probe = d;
      // Enough events to close the window, all within the same microsecond as its start.
      const int64_t t = d.window_start().time_ns;
      for (int k = 0; k < 70; ++k) {
        ASSERT_FALSE(probe.on_event(t + static_cast<int64_t>(gen.pick(0, 999)), 7));
      }
      ASSERT_EQ(probe.tuner(), d.tuner());
      ASSERT_EQ(probe.state(), d.state());
      ASSERT_EQ(probe.prev_stats(), d.prev_stats());
      ASSERT_EQ(probe.window_start(), d.window_start());
      ASSERT_EQ(probe.windows_evaluated(), d.windows_evaluated());
      ++probes;
    }
    const auto e = gen.next();
    if (d.on_event(e.time_ns, e.completions)) d.profile_applied();
  }
  EXPECT_GT(probes, 1000);
}

INSTANTIATE_TEST_SUITE_P(Seeds, DimProperty, ::testing::Range(0, kSeeds));

}  // namespace
}  // namespace dim
