// ModelPolicy / ModelTable: the thresholds, the decision rules and the invariants the controller
// relies on (monotone in load, hysteresis, change budget, bounds, QD=1, one-period step down),
// then property tests on random streams.
#include "dim/model_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <random>
#include <vector>

#include "support/count_allocations.h"

namespace dim {
namespace {

constexpr int64_t kPeriod = 20'000'000;  // the daemon's default interval

ModelParams eqe_params() {
  return ModelParams{};
}

ModelParams with_timer(TimerMode m) {
  ModelParams p;
  p.timer = m;
  return p;
}

ModelTable eqe_table(uint8_t lo = 0, uint8_t hi = 255, ModelParams p = eqe_params()) {
  return ModelTable(kNetRxEqeProfiles, ProfileCount::kPackets, p, lo, hi);
}
ModelTable cqe_table() {
  return ModelTable(kNetRxCqeProfiles, ProfileCount::kPackets, with_timer(TimerMode::kIdleGap));
}
ModelTable rdma_table(uint8_t lo = 0, uint8_t hi = 255) {
  return ModelTable(kRdmaProfiles, ProfileCount::kCompletions, eqe_params(), lo, hi);
}

// One period of a steady load: `rate` completions per second, `cpe` completions per event.
ModelInput period(double rate, double cpe = 4, int64_t dt = kPeriod) {
  ModelInput in;
  in.dt_ns = dt;
  in.completions = static_cast<uint64_t>(std::llround(rate * static_cast<double>(dt) / 1e9));
  in.events =
      cpe > 0 ? static_cast<uint64_t>(std::llround(static_cast<double>(in.completions) / cpe)) : 0;
  return in;
}

uint8_t settle(ModelPolicy& m, const ModelTable& t, double rate, double cpe = 4, int periods = 20) {
  for (int i = 0; i < periods; ++i) m.update(t, period(rate, cpe));
  return m.profile_ix();
}

// ---------------------------------------------------------------------------------------------
// The table.

TEST(ModelTable, ThresholdsAreMonotoneAndPickFollowsThem) {
  for (const ModelTable& t :
       {eqe_table(), cqe_table(), rdma_table(),
        ModelTable(kRdmaProfiles, ProfileCount::kCompletions, with_timer(TimerMode::kAbsolute))}) {
    EXPECT_EQ(t.threshold(t.min_ix()), 0);
    for (uint8_t i = t.min_ix() + 1; i <= t.max_ix(); ++i) {
      EXPECT_GE(t.threshold(i), t.threshold(i - 1));
    }
    uint8_t prev = 0;
    for (double r = 1; r < 1e11; r *= 1.01) {
      const uint8_t p = t.pick(r);
      ASSERT_GE(p, prev) << r;
      ASSERT_GE(r, t.threshold(p));
      prev = p;
    }
  }
}

TEST(ModelTable, SaturationPicksAProfileThatBatches) {
  // Near 1/C_c completions per second no profile keeps the core below max_utilisation; the model
  // then takes the profile that batches most. EQE and RDMA tables batch more with every index.
  const double saturation = 0.97e9 / ModelParams{}.cost.completion_cost_ns;
  EXPECT_EQ(eqe_table().pick(saturation), 4);
  EXPECT_EQ(rdma_table().pick(saturation), 8);
  // The CQE table trades the count (256 -> 64) for the timer: its 32 and 64 µs profiles batch no
  // more than 16 µs under load and add delay, so the model stops at 16 µs.
  const ModelTable cqe = cqe_table();
  EXPECT_EQ(cqe.pick(saturation), 2);
  EXPECT_TRUE(std::isinf(cqe.threshold(3)));
  const auto batch = [&](uint8_t i) {
    return predict(TimerMode::kIdleGap, kNetRxCqeProfiles[i].usec, kNetRxCqeProfiles[i].pkts,
                   saturation, cqe.params().cost)
        .batch;
  };
  EXPECT_GT(batch(2), 8 * batch(0));
  EXPECT_NEAR(batch(3), batch(2), 1e-3);
}

TEST(ModelTable, KernelTablesLatencyProfileIsIndexZero) {
  EXPECT_EQ(eqe_table().latency_ix(), 0);
  EXPECT_EQ(cqe_table().latency_ix(), 0);
  EXPECT_EQ(rdma_table().latency_ix(), 0);  // (1 µs, 1 completion)
  // Low rates pick it too.
  EXPECT_EQ(eqe_table().pick(1000), 0);
  EXPECT_EQ(rdma_table().pick(1000), 0);
  EXPECT_EQ(cqe_table().pick(1000), 0);
}

TEST(ModelTable, LatencyProfileOfACustomTable) {
  // No N = 1 profile: the shortest timer. With one: that profile, wherever it is.
  const Profile a[5] = {{16, 64, 0}, {4, 64, 0}, {8, 64, 0}, {32, 64, 0}, {64, 64, 0}};
  EXPECT_EQ(ModelTable(a, ProfileCount::kPackets, eqe_params()).latency_ix(), 1);
  const Profile b[5] = {{16, 64, 0}, {4, 64, 0}, {8, 1, 0}, {32, 64, 0}, {64, 64, 0}};
  EXPECT_EQ(ModelTable(b, ProfileCount::kPackets, eqe_params()).latency_ix(), 2);
  // Within the bounds only.
  EXPECT_EQ(ModelTable(b, ProfileCount::kPackets, eqe_params(), 3, 4).latency_ix(), 3);
}

TEST(ModelTable, BoundsAreClampedToTheTable) {
  const ModelTable t = eqe_table(2, 200);
  EXPECT_EQ(t.min_ix(), 2);
  EXPECT_EQ(t.max_ix(), 4);
  const ModelTable crossed = eqe_table(3, 1);  // min wins
  EXPECT_EQ(crossed.min_ix(), 3);
  EXPECT_EQ(crossed.max_ix(), 3);
  const ModelTable big = eqe_table(9, 9);
  EXPECT_EQ(big.min_ix(), 4);
  EXPECT_EQ(big.max_ix(), 4);
}

TEST(ModelTable, CheaperInterruptsRaiseTheThresholds) {
  ModelParams cheap;
  cheap.cost.interrupt_cost_ns = 500;
  const ModelTable a = eqe_table();
  const ModelTable b = eqe_table(0, 255, cheap);
  EXPECT_GT(b.threshold(1), a.threshold(1));
}

// A core shared by k queues: batching pays at a k-th of the rate, for every profile above the
// latency one (the table's thresholds scale down, none moves up).
TEST(ModelTable, SharersLowerTheThresholds) {
  ModelParams shared;
  shared.cost.sharers = 4;
  const ModelTable a = rdma_table();
  const ModelTable b(kRdmaProfiles, ProfileCount::kCompletions, shared);
  bool lower = false;
  for (uint8_t ix = 1; ix < a.size(); ++ix) {
    EXPECT_LE(b.threshold(ix), a.threshold(ix)) << int{ix};
    lower |= b.threshold(ix) < a.threshold(ix);
  }
  EXPECT_TRUE(lower);
  EXPECT_GT(b.pick(1e5), a.pick(1e5));
}

// ---------------------------------------------------------------------------------------------
// The policy's rules.

TEST(ModelPolicy, StartsAtTheLatencyProfile) {
  const ModelTable t = eqe_table();
  EXPECT_EQ(ModelPolicy(t).profile_ix(), t.latency_ix());
  const ModelTable b = eqe_table(2, 3);
  EXPECT_EQ(ModelPolicy(b).profile_ix(), 2);
}

TEST(ModelPolicy, MeasuresNothingBeforeTraffic) {
  const ModelTable t = eqe_table();
  ModelPolicy m(t);
  EXPECT_FALSE(m.measured());
  // Periods without events or completions: no decision, no state (the up streak below still
  // needs its two periods).
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(m.update(t, period(0)));
  EXPECT_FALSE(m.measured());
  EXPECT_FALSE(m.wish().has_value());
  EXPECT_EQ(m.profile_ix(), t.latency_ix());
  EXPECT_EQ(m.changes(), 0u);
  // The first period with traffic is measured, an idle one after it too.
  const double rate = t.threshold(1) * 1.4;  // above the up margin, below fast up
  ASSERT_EQ(t.pick(rate), 1);
  EXPECT_FALSE(m.update(t, period(rate)));
  EXPECT_TRUE(m.measured());
  EXPECT_EQ(m.wish(), std::optional<uint8_t>(t.latency_ix()));
  EXPECT_TRUE(m.update(t, period(rate)));
  EXPECT_EQ(m.profile_ix(), 1);
  EXPECT_EQ(m.wish(), std::optional<uint8_t>(1));
  EXPECT_TRUE(m.update(t, period(0)));
  EXPECT_EQ(m.profile_ix(), 0);
  // Events alone (a queue polled with nothing completed) count as traffic.
  ModelPolicy e(t);
  e.update(t, ModelInput{20'000'000, 5, 0});
  EXPECT_TRUE(e.measured());
}

TEST(ModelPolicy, JumpsToThePredictedProfileInOneChange) {
  for (const ModelTable& t : {eqe_table(), rdma_table(), cqe_table()}) {
    // A load well inside the last reachable profile's range, not near a threshold.
    const uint8_t target = t.pick(1e12);
    const double rate = std::isinf(t.threshold(target)) ? 1e7 : t.threshold(target) * 3;
    ASSERT_EQ(t.pick(rate), target);
    ModelPolicy m(t);
    ASSERT_EQ(m.profile_ix(), 0);
    // Fast up (3x the threshold): one period.
    EXPECT_TRUE(m.update(t, period(rate)));
    EXPECT_EQ(m.profile_ix(), target);
    EXPECT_EQ(m.changes(), 1u);
  }
}

TEST(ModelPolicy, SlowUpNeedsConsecutivePeriodsAboveTheMargin) {
  const ModelTable t = eqe_table();
  const double rate = t.threshold(1) * 1.4;  // above the 25 % margin, below fast-up (2x)
  ASSERT_EQ(t.pick(rate), 1);
  ModelPolicy m(t);
  EXPECT_FALSE(m.update(t, period(rate)));
  EXPECT_EQ(m.profile_ix(), 0);
  EXPECT_TRUE(m.update(t, period(rate)));
  EXPECT_EQ(m.profile_ix(), 1);
  // An interruption of the streak starts it again.
  ModelPolicy n(t);
  EXPECT_FALSE(n.update(t, period(rate)));
  EXPECT_FALSE(n.update(t, period(t.threshold(1) * 1.1)));  // inside the margin
  EXPECT_FALSE(n.update(t, period(rate)));
  EXPECT_TRUE(n.update(t, period(rate)));
}

TEST(ModelPolicy, StepDownReactsInOnePeriod) {
  for (const ModelTable& t : {eqe_table(), rdma_table(), cqe_table()}) {
    ModelPolicy m(t);
    const uint8_t top = settle(m, t, 1e8);
    ASSERT_GT(top, 0);
    // Any lower load: the very next period is at the model's pick for it.
    for (double low : {0.0, 100.0, t.threshold(1) * 0.5}) {
      ModelPolicy k = m;
      k.update(t, period(low));
      EXPECT_EQ(k.profile_ix(), t.pick(low)) << low;
    }
  }
}

TEST(ModelPolicy, QueueDepthOneTakesTheLatencyProfileAtAnyRate) {
  for (const ModelTable& t : {eqe_table(), rdma_table(), cqe_table()}) {
    for (double rate : {1e3, 1e5, 3e5, 1e6, 1e8}) {
      ModelPolicy m(t);
      // One completion per interrupt, from the start and after a period of heavy batching.
      EXPECT_EQ(settle(m, t, rate, 1.0), t.latency_ix()) << rate;
      settle(m, t, 1e8, 16);
      m.update(t, period(rate, 1.0));
      EXPECT_EQ(m.profile_ix(), t.latency_ix()) << rate;
      EXPECT_EQ(settle(m, t, rate, 1.1), t.latency_ix()) << rate;
    }
  }
}

TEST(ModelPolicy, TooFewEventsForTheQueueDepthRule) {
  // 7 events with one completion each in a microsecond: the rate says batch, the rule needs 8.
  const ModelTable t = eqe_table();
  ModelPolicy m(t);
  m.update(t, ModelInput{1000, 7, 7});
  EXPECT_GT(m.profile_ix(), 0);
}

TEST(ModelPolicy, HysteresisAroundABoundary) {
  const ModelTable t = eqe_table();
  const double b = t.threshold(1);
  ASSERT_EQ(t.pick(b * 1.5), 1);
  // From below and from above the boundary: a load oscillating around it by up to 9 % (inside
  // the band of -10 % / +25 %) never flips, whatever its phase.
  for (double start : {0.5, 1.5}) {
    for (double amplitude : {0.02, 0.05, 0.09}) {
      for (int phase : {0, 1}) {
        ModelPolicy m(t);
        const uint8_t settled = settle(m, t, b * start);
        ASSERT_EQ(settled, start < 1 ? 0 : 1);
        for (int i = 0; i < 1000; ++i) {
          m.update(t, period(b * ((i + phase) % 2 ? 1 - amplitude : 1 + amplitude)));
        }
        EXPECT_EQ(m.profile_ix(), settled) << start << " " << amplitude;
        EXPECT_EQ(m.changes(), start < 1 ? 0u : 1u) << start << " " << amplitude;
      }
    }
  }
  // A wider one (±30 %, alternating every period) does not flip every period either: the up
  // move needs two high periods in a row.
  ModelPolicy m(t);
  for (int i = 0; i < 1000; ++i) m.update(t, period(b * (i % 2 ? 0.7 : 1.3)));
  EXPECT_EQ(m.changes(), 0u);
}

TEST(ModelPolicy, ClosedLoopDoesNotCycle) {
  // A QD-limited closed loop: moderation lowers the rate below the threshold, which moves the
  // policy back down, where the rate is high again. The bounce guard turns what would be a flip
  // every three periods into probes that back off.
  const ModelTable t = eqe_table();
  const double hi = t.threshold(1) * 1.5, lo = t.threshold(1) * 0.5;
  ModelPolicy m(t);
  int64_t time = 0;
  std::vector<int64_t> ups;
  for (int i = 0; i < 50 * 600; ++i) {  // 10 minutes at 20 ms
    const uint8_t before = m.profile_ix();
    if (m.update(t, period(before == 0 ? hi : lo)) && m.profile_ix() > before) {
      ups.push_back(time);
    }
    time += kPeriod;
  }
  ASSERT_GE(ups.size(), 3u);  // it does probe
  // Holds of 2, 4, 8, 16 s, then 32 s: each probe waits at least as long as the one before.
  for (size_t i = 2; i < ups.size(); ++i) {
    EXPECT_GE(ups[i] - ups[i - 1], ups[i - 1] - ups[i - 2] - kPeriod) << i;
    EXPECT_GE(ups[i] - ups[i - 1], 2'000'000'000) << i;
  }
  EXPECT_LE(ups.size(), 5 + 600 / 32 + 1);
}

TEST(ModelPolicy, BounceCeilingLiftsWhenTheLoadRisesEnough) {
  const ModelTable t = eqe_table();
  const double th = t.threshold(1);
  ModelPolicy m(t);
  m.update(t, period(th * 1.4));
  m.update(t, period(th * 1.4));
  ASSERT_EQ(m.profile_ix(), 1);
  m.update(t, period(th * 0.5));  // bounce
  ASSERT_EQ(m.profile_ix(), 0);
  ASSERT_EQ(m.ceiling_ix(), 1);
  // The same load again is held back...
  for (int i = 0; i < 10; ++i) m.update(t, period(th * 1.4));
  EXPECT_EQ(m.profile_ix(), 0);
  // ...a clearly higher one is not.
  m.update(t, period(th * 1.4 * 1.6));
  m.update(t, period(th * 1.4 * 1.6));
  EXPECT_EQ(m.profile_ix(), 1);
  EXPECT_EQ(m.ceiling_ix(), 0xff);
}

// A closed loop with a few completions outstanding settles wherever its throttled rate still
// justifies the profile that throttles it: profile 2 halves its rate to well above threshold 1
// and 2, so without the throttle guard nothing moves it down again. With it, the move that cost
// a quarter of the rate is undone at once and held back as a bounce.
TEST(ModelPolicy, ThrottleGuardUndoesAMoveThatCostTheLoopItsRate) {
  const ModelTable t = eqe_table();
  const double fast = t.threshold(2) * 4;  // at profile 0: fast up to 2 or above
  auto rate_at = [&](uint8_t ix) { return ix == 0 ? fast : fast * 0.55; };
  ModelPolicy m(t);
  m.update(t, period(rate_at(0)));
  const uint8_t up = m.profile_ix();
  ASSERT_GE(up, 2);
  ASSERT_GE(rate_at(up), t.threshold(up) * (1 + t.params().up_margin));  // the rate justifies it
  m.update(t, period(rate_at(up)));
  EXPECT_EQ(m.profile_ix(), 0) << "the move that throttled the loop stays";
  EXPECT_EQ(m.ceiling_ix(), up);
  for (int i = 0; i < 50; ++i) m.update(t, period(rate_at(m.profile_ix())));
  EXPECT_LT(m.profile_ix(), up);
  // Off (throttle_drop 1): the throttled profile holds.
  ModelParams off;
  off.throttle_drop = 1;
  const ModelTable t_off = eqe_table(0, 255, off);
  ModelPolicy m_off(t_off);
  m_off.update(t_off, period(rate_at(0)));
  ASSERT_EQ(m_off.profile_ix(), up);
  for (int i = 0; i < 50; ++i) m_off.update(t_off, period(rate_at(m_off.profile_ix())));
  EXPECT_EQ(m_off.profile_ix(), up);
}

// An open loop whose load merely wobbles (±10 %) after a move up keeps the move.
TEST(ModelPolicy, ThrottleGuardLeavesAMoveWhoseRateHolds) {
  const ModelTable t = eqe_table();
  const double r = t.threshold(2) * 4;
  ModelPolicy m(t);
  m.update(t, period(r));
  const uint8_t up = m.profile_ix();
  ASSERT_GT(up, 0);
  for (int i = 0; i < 20; ++i) m.update(t, period(r * (i % 2 ? 0.9 : 1.1)));
  EXPECT_EQ(m.profile_ix(), up);
  EXPECT_EQ(m.ceiling_ix(), 0xff);
}

TEST(ModelPolicy, BounceCeilingExpires) {
  const ModelTable t = eqe_table();
  const double th = t.threshold(1);
  ModelPolicy m(t);
  m.update(t, period(th * 1.4));
  m.update(t, period(th * 1.4));
  m.update(t, period(th * 0.5));
  ASSERT_EQ(m.ceiling_ix(), 1);
  m.update(t, period(th * 0.5, 4, 1'999'000'000));  // 1.999 s
  EXPECT_EQ(m.ceiling_ix(), 1);
  m.update(t, period(th * 0.5, 4, 2'000'000));
  EXPECT_EQ(m.ceiling_ix(), 0xff);
}

TEST(ModelPolicy, ChangeBudgetHoldsBackAndReleases) {
  ModelParams p;
  p.max_changes_per_s = 2;  // one at once, then one more per ~second
  const ModelTable t = eqe_table(0, 255, p);
  ModelPolicy m(t);
  EXPECT_TRUE(m.update(t, period(1e8)));  // the only token
  EXPECT_FALSE(m.update(t, period(0)));   // wants to go down, no token
  EXPECT_GT(m.profile_ix(), 0);
  int periods = 0;
  while (!m.update(t, period(0)) && periods < 1000) ++periods;
  EXPECT_EQ(m.profile_ix(), 0);
  // Refill of 2 - 1 + 1 - 1e-6 changes per second: half a second (25 periods) for the next one.
  EXPECT_NEAR(periods, 25, 1);
}

TEST(ModelPolicy, ZeroDeltaTimeDecidesNothing) {
  // A policy given periods of no length behaves afterwards exactly like one that never saw them.
  const ModelTable t = eqe_table();
  ModelPolicy m(t);
  m.update(t, period(t.threshold(1) * 1.4));  // mid-streak
  ModelPolicy twin = m;
  EXPECT_FALSE(m.update(t, ModelInput{0, 1000, 100000}));
  EXPECT_FALSE(m.update(t, ModelInput{-5, 0, 0}));
  EXPECT_FALSE(m.update(t, ModelInput{0, 0, 0}));
  for (double r : {1.4, 1.4, 0.1, 3.0, 0.5, 1.4, 1.4, 1.4}) {
    const ModelInput in = period(t.threshold(1) * r);
    EXPECT_EQ(m.update(t, in), twin.update(t, in));
    EXPECT_EQ(m.profile_ix(), twin.profile_ix());
    EXPECT_EQ(m.ceiling_ix(), twin.ceiling_ix());
  }
}

TEST(ModelPolicy, UpdateDoesNotAllocate) {
  const ModelTable t = rdma_table();
  ModelPolicy m(t);
  std::mt19937_64 rng(5);
  const uint64_t before = dimctl::testing::allocations_so_far();
  for (int i = 0; i < 10'000; ++i) {
    m.update(t, period(static_cast<double>(rng() % 2'000'000), 1 + static_cast<double>(rng() % 8)));
  }
  EXPECT_EQ(dimctl::testing::allocations_so_far(), before);
}

// ---------------------------------------------------------------------------------------------
// Invariants on many loads and random streams.

std::vector<ModelTable> all_tables() {
  std::vector<ModelTable> out;
  for (auto m : {TimerMode::kRateLimit, TimerMode::kIdleGap, TimerMode::kAbsolute}) {
    out.emplace_back(kNetRxEqeProfiles, ProfileCount::kPackets, with_timer(m));
    out.emplace_back(kNetRxCqeProfiles, ProfileCount::kPackets, with_timer(m));
    out.emplace_back(kRdmaProfiles, ProfileCount::kCompletions, with_timer(m));
    out.emplace_back(kRdmaProfiles, ProfileCount::kCompletions, with_timer(m), 2, 6);
  }
  return out;
}

TEST(ModelPolicyInvariant, HigherSteadyLoadNeverPicksALowerProfile) {
  for (const ModelTable& t : all_tables()) {
    for (double cpe : {1.0, 2.0, 8.0, 64.0}) {
      uint8_t prev = 0;
      for (double rate = 10; rate < 1e9; rate *= 1.15) {
        ModelPolicy m(t);
        const uint8_t p = settle(m, t, rate, cpe, 10);
        ASSERT_GE(p, prev) << "rate " << rate << " cpe " << cpe;
        ASSERT_GE(p, t.min_ix());
        ASSERT_LE(p, t.max_ix());
        prev = p;
      }
    }
  }
}

TEST(ModelPolicyInvariant, SteadyLoadSettlesOnThePickOrTheLatencyProfile) {
  for (const ModelTable& t : all_tables()) {
    for (double rate = 10; rate < 1e9; rate *= 1.3) {
      ModelPolicy m(t);
      const uint8_t got = settle(m, t, rate, 8, 20);
      // From below, within the up margin of a threshold the policy may stay one step lower.
      EXPECT_TRUE(got == t.pick(rate) || got == t.pick(rate / 1.25)) << rate;
      ModelPolicy q(t);
      EXPECT_EQ(settle(q, t, rate, 1.0, 20), t.latency_ix());
    }
  }
}

// Random input: periods of any length (0, sub-microsecond, up to hours), zero deltas, rates from
// idle to absurd, completions per event from 0 to thousands, events without completions and the
// reverse, load regime changes.
struct RandomInputs {
  explicit RandomInputs(uint64_t seed) : rng(seed) {}
  uint64_t pick(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  }
  ModelInput next() {
    if (pick(0, 99) < 10) {
      rate = std::pow(10.0, static_cast<double>(pick(0, 90)) / 10);  // 1 .. 1e9 per s
      cpe = static_cast<double>(pick(0, 2000)) / 100;
    }
    ModelInput in;
    const uint64_t r = pick(0, 99);
    if (r < 70) {
      in.dt_ns = static_cast<int64_t>(pick(1'000'000, 100'000'000));
    } else if (r < 78) {
      in.dt_ns = 0;
    } else if (r < 84) {
      in.dt_ns = static_cast<int64_t>(pick(1, 999));
    } else if (r < 90) {
      in.dt_ns = static_cast<int64_t>(pick(1'000'000'000, uint64_t{1} << 50));
    } else if (r < 93) {
      in.dt_ns = -static_cast<int64_t>(pick(1, 1000));
    } else {
      in.dt_ns = static_cast<int64_t>(pick(1, 10'000'000'000));
    }
    const uint64_t k = pick(0, 99);
    if (k < 10) {
      in.completions = 0;
      in.events = pick(0, 100);
    } else if (k < 15) {
      in.completions = pick(0, UINT64_MAX);
      in.events = pick(0, UINT64_MAX);
    } else {
      const double dt = static_cast<double>(std::max<int64_t>(in.dt_ns, 0));
      in.completions =
          static_cast<uint64_t>(std::min(rate * dt / 1e9 * (0.8 + 0.4 * jitter()), 1e18));
      in.events = cpe > 0 ? static_cast<uint64_t>(static_cast<double>(in.completions) / cpe) : 0;
    }
    return in;
  }
  double jitter() { return std::uniform_real_distribution<double>(0, 1)(rng); }
  std::mt19937_64 rng;
  double rate = 1000, cpe = 4;
};

class ModelPolicyRandom : public ::testing::TestWithParam<int> {};

TEST_P(ModelPolicyRandom, BoundsBudgetAndDeterminism) {
  const std::vector<ModelTable> tables = all_tables();
  for (uint32_t budget : {1u, 3u, 10u, 50u}) {
    for (size_t ti = 0; ti < tables.size(); ++ti) {
      ModelParams p = tables[ti].params();
      p.max_changes_per_s = budget;
      // Random bounds on top.
      RandomInputs gen(static_cast<uint64_t>(GetParam()) * 1000 + ti * 10 + budget);
      const auto lo = static_cast<uint8_t>(gen.pick(0, 3));
      const auto hi = static_cast<uint8_t>(gen.pick(lo, 12));
      const ModelTable t(
          tables[ti].size() == 5 ? std::span<const Profile>(kNetRxEqeProfiles)
                                 : std::span<const Profile>(kRdmaProfiles),
          tables[ti].size() == 5 ? ProfileCount::kPackets : ProfileCount::kCompletions, p, lo, hi);
      ModelPolicy m(t), twin(t);
      // Times of the last `budget` changes, on the policy's own clock (the sum of Δt).
      std::deque<int64_t> recent;
      int64_t now = 0;
      for (int i = 0; i < 5000; ++i) {
        const ModelInput in = gen.next();
        const uint8_t before = m.profile_ix();
        const bool changed = m.update(t, in);
        ASSERT_EQ(twin.update(t, in), changed);
        ASSERT_EQ(twin.profile_ix(), m.profile_ix());
        ASSERT_EQ(changed, m.profile_ix() != before);
        ASSERT_GE(m.profile_ix(), t.min_ix());
        ASSERT_LE(m.profile_ix(), t.max_ix());
        if (in.dt_ns > 0) now += std::min<int64_t>(in.dt_ns, int64_t{1000} * 1'000'000'000);
        if (changed) {
          recent.push_back(now);
          if (recent.size() > budget) {
            // budget + 1 changes must span more than a second.
            ASSERT_GT(recent.back() - recent.front(), 1'000'000'000)
                << "budget " << budget << " step " << i;
            recent.pop_front();
          }
        }
        if (in.dt_ns <= 0) {
          ASSERT_FALSE(changed);
        }
      }
    }
  }
}

// Whatever happened before, a QD=1 period (enough events, one completion each) puts the policy
// on the latency profile when the budget allows, and a steady high load (with tokens) reaches the
// pick within the up periods plus the bounce hold.
TEST_P(ModelPolicyRandom, RecoversFromAnyHistory) {
  for (const ModelTable& t : all_tables()) {
    RandomInputs gen(static_cast<uint64_t>(GetParam()) + 77);
    ModelPolicy m(t);
    for (int i = 0; i < 2000; ++i) m.update(t, gen.next());
    // Two seconds of QD=1: the budget refills, the move down is immediate once it has.
    for (int i = 0; i < 100; ++i) m.update(t, period(2e5, 1.0));
    EXPECT_EQ(m.profile_ix(), t.latency_ix());
    // A minute of steady heavy load: any ceiling expired (<= 32 s), the pick is reached.
    const double heavy = 1e9;
    for (int i = 0; i < 3000; ++i) m.update(t, period(heavy, 32));
    EXPECT_EQ(m.profile_ix(), t.pick(heavy));
  }
}

// The worst case for the budget: every period wants a change (heavy, idle, QD=1 in turn), at
// random period lengths from 1 to 50 ms.
TEST(ModelPolicyInvariant, ChangeBudgetUnderAlternatingLoad) {
  for (uint32_t budget : {1u, 2u, 3u, 7u, 10u, 20u}) {
    ModelParams p;
    p.max_changes_per_s = budget;
    p.bounce_hold_ms = 0;  // no ceiling: every period really wants to move
    const ModelTable t = eqe_table(0, 255, p);
    ModelPolicy m(t);
    std::mt19937_64 rng(budget);
    std::deque<int64_t> recent;
    int64_t now = 0;
    uint64_t changes = 0;
    for (int i = 0; i < 20'000; ++i) {
      const int64_t dt = 1'000'000 + static_cast<int64_t>(rng() % 49'000'000);
      now += dt;
      const double load = i % 3 == 0 ? 1e8 : (i % 3 == 1 ? 0 : 3e5);
      if (m.update(t, period(load, i % 3 == 2 ? 1.0 : 8, dt))) {
        ++changes;
        recent.push_back(now);
        if (recent.size() > budget) {
          ASSERT_GT(recent.back() - recent.front(), 1'000'000'000) << budget << " " << i;
          recent.pop_front();
        }
      }
    }
    // And the budget is what limits it: the bucket's refill, b - ceil(b/2) + 1 per second, is
    // spent in full over the run.
    const double seconds = static_cast<double>(now) / 1e9;
    const double sustained = budget - (budget + 1) / 2 + 1;
    EXPECT_GT(static_cast<double>(changes), 0.9 * sustained * seconds) << budget;
    EXPECT_LT(static_cast<double>(changes), 1.1 * sustained * seconds + budget) << budget;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ModelPolicyRandom, ::testing::Range(0, 6));

}  // namespace
}  // namespace dim
