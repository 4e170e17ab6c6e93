// CostEstimator: recovers known costs from synthetic periods (property test over random costs,
// loads, batch spreads and noise), ignores outliers, keeps the defaults without data and with
// collinear data, never divides by zero or reports NaN, stays bounded, allocates nothing.
#include "dim/cost_estimator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "support/count_allocations.h"

namespace dim {
namespace {

constexpr int64_t kPeriod = 20'000'000;

// A synthetic core: handler h ns per interrupt, softirq w per wake-up and c per completion.
struct Truth {
  double handler = 800;
  double wakeup = 1200;
  double completion = 1500;
};

// One period of `irqs` interrupts carrying `batch` completions each, times scaled by (1 + noise).
// A core cannot be busier than the period: `irqs` is capped at a busy fraction of 0.9.
CoreMeasurement period(const Truth& t, double irqs, double batch, double noise_h = 0,
                       double noise_s = 0, int64_t dt = kPeriod) {
  const double per_irq = t.handler + t.wakeup + t.completion * batch;
  irqs = std::max(std::min(irqs, 0.9 * static_cast<double>(dt) / per_irq), 16.0);
  CoreMeasurement m;
  m.dt_ns = dt;
  m.interrupts = static_cast<uint64_t>(std::llround(irqs));
  m.completions = static_cast<uint64_t>(std::llround(irqs * batch));
  m.polls = m.interrupts;
  const auto i = static_cast<double>(m.interrupts);
  const auto q = static_cast<double>(m.completions);
  m.hardirq_ns = static_cast<uint64_t>(std::llround(t.handler * i * (1 + noise_h)));
  m.softirq_ns =
      static_cast<uint64_t>(std::llround((t.wakeup * i + t.completion * q) * (1 + noise_s)));
  return m;
}

void expect_defaults(const CostEstimator& e) {
  EXPECT_NE(e.estimate().confidence, CostConfidence::kMeasured);
  EXPECT_EQ(e.estimate().completion_ns, 1000);
  EXPECT_EQ(e.estimate().interrupt_ns, 2000);
  const CostParams p = e.costs({});
  EXPECT_EQ(p.completion_cost_ns, 1000);
  EXPECT_EQ(p.interrupt_cost_ns, 2000);
}

TEST(CostEstimator, DefaultsWithoutData) {
  CostEstimator e;
  expect_defaults(e);
  EXPECT_EQ(e.estimate().confidence, CostConfidence::kDefaults);
  EXPECT_EQ(e.estimate().periods, 0u);
}

TEST(CostEstimator, RecoversKnownCostsExactly) {
  const Truth t;
  CostEstimator e;
  for (int i = 0; i < CostEstimator::kWindow; ++i) {
    EXPECT_TRUE(e.update(period(t, 2000 + 100 * i, 1 + (i % 8) * 3)));
  }
  const CostEstimate& s = e.estimate();
  ASSERT_EQ(s.confidence, CostConfidence::kMeasured);
  EXPECT_NEAR(s.completion_ns, t.completion, 1);
  EXPECT_NEAR(s.interrupt_ns, t.handler + t.wakeup, 2);
  EXPECT_NEAR(s.handler_ns, t.handler, 1);
  EXPECT_NEAR(s.wakeup_ns, t.wakeup, 2);
  EXPECT_EQ(s.kept, static_cast<uint32_t>(CostEstimator::kWindow));
  EXPECT_LT(s.residual_rms, 1e-3);
  const CostParams p = e.costs({});
  EXPECT_EQ(p.completion_cost_ns, s.completion_ns);
  EXPECT_EQ(p.interrupt_cost_ns, s.interrupt_ns);
}

TEST(CostEstimator, NeedsMinPeriods) {
  const Truth t;
  CostEstimator e;
  for (uint32_t i = 0; i + 1 < CostEstimator::kMinPeriods; ++i) {
    e.update(period(t, 3000, 1 + i * 4));
    expect_defaults(e);
    EXPECT_EQ(e.estimate().confidence, CostConfidence::kDefaults);
  }
  e.update(period(t, 3000, 40));
  EXPECT_EQ(e.estimate().confidence, CostConfidence::kMeasured);
}

TEST(CostEstimator, CollinearDataKeepsDefaultsAndReportsCombined) {
  const Truth t;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 0.03);
  CostEstimator e;
  for (int i = 0; i < 200; ++i) {
    // Every interrupt carries 12 completions, at loads from light to heavy.
    e.update(period(t, 500 + 97 * (i % 50), 12, noise(rng), noise(rng)));
    expect_defaults(e);
  }
  const CostEstimate& s = e.estimate();
  EXPECT_EQ(s.confidence, CostConfidence::kCombined);
  EXPECT_NEAR(s.batch, 12, 0.01);
  const double combined = t.handler + t.wakeup + 12 * t.completion;
  EXPECT_NEAR(s.combined_ns, combined, 0.03 * combined);
  EXPECT_LT(s.spread, CostEstimator::kMinSpread);
}

TEST(CostEstimator, NearlyCollinearNoisyDataIsNotASplit) {
  // Batches 12 ± 2 % with 5 % noise: the fit cannot separate the costs to within kMaxRelError.
  const Truth t;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0, 0.05);
  std::uniform_real_distribution<double> batch(11.76, 12.24);
  CostEstimator e;
  for (int i = 0; i < 100; ++i) {
    e.update(period(t, 3000, batch(rng), noise(rng), noise(rng)));
    expect_defaults(e);
  }
}

TEST(CostEstimator, TooLittleSpreadIsNeverASplit) {
  // Batches 12 ± 1 % without noise fit well, but below kMinSpread the split is not trusted.
  const Truth t;
  CostEstimator e;
  for (int i = 0; i < 100; ++i) {
    e.update(period(t, 400, 11.88 + 0.01 * (i % 25)));
    expect_defaults(e);
  }
  EXPECT_EQ(e.estimate().confidence, CostConfidence::kCombined);
  EXPECT_GT(e.estimate().spread, 0);
}

TEST(CostEstimator, IgnoresSoftirqOutliers) {
  // 10x softirq time alone (the handler looks normal): the residual trim must drop them. A light
  // load (busy about 0.1), so that 10x is still a plausible period and enters the window.
  const Truth t;
  CostEstimator e;
  for (int i = 0; i < CostEstimator::kWindow; ++i) {
    const double k = i % 11 == 4 ? 9 : 0;
    e.update(period(t, 40, 1 + (i % 7) * 5, 0, k));
  }
  ASSERT_EQ(e.estimate().confidence, CostConfidence::kMeasured);
  EXPECT_EQ(e.estimate().kept, static_cast<uint32_t>(CostEstimator::kWindow - 3));
  EXPECT_NEAR(e.estimate().completion_ns, t.completion, 0.01 * t.completion);
  EXPECT_NEAR(e.estimate().interrupt_ns, t.handler + t.wakeup, 0.01 * (t.handler + t.wakeup));
}

TEST(CostEstimator, IgnoresOutliers) {
  const Truth t;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.01);
  for (int first_bad : {0, 5, 20}) {
    CostEstimator e;
    for (int i = 0; i < 3 * CostEstimator::kWindow; ++i) {
      const double b = 1 + (i % 7) * 2;
      const bool bad = i == first_bad || i == first_bad + 2 || i == first_bad + 9;
      // 10x the time (both the handler and the softirq) in three periods of a window, at a load
      // light enough (busy about 0.1) for 10x to be a plausible period.
      const double k = bad ? 9 : 0;
      e.update(period(t, 40, b, k + noise(rng), k + noise(rng)));
      if (i >= first_bad && i < first_bad + CostEstimator::kWindow &&
          e.estimate().confidence == CostConfidence::kMeasured) {
        EXPECT_NEAR(e.estimate().completion_ns, t.completion, 0.05 * t.completion) << i;
        EXPECT_NEAR(e.estimate().interrupt_ns, t.handler + t.wakeup, 0.05 * (t.handler + t.wakeup))
            << i;
      }
    }
    ASSERT_EQ(e.estimate().confidence, CostConfidence::kMeasured);
  }
  // Outliers inside a full window are dropped from the fit.
  CostEstimator e;
  for (int i = 0; i < CostEstimator::kWindow; ++i) {
    const double k = i % 11 == 4 ? 9 : 0;
    e.update(period(t, 40, 1 + (i % 7) * 5, k, k));
  }
  EXPECT_EQ(e.estimate().kept, static_cast<uint32_t>(CostEstimator::kWindow - 3));
  EXPECT_NEAR(e.estimate().completion_ns, t.completion, 1);
}

// The estimator's contract: over random costs, loads, batch spreads, period lengths and
// noise (seeded), a confident estimate is within 10 % of the truth, and enough spread gives one.
TEST(CostEstimator, PropertyRecoversRandomCostsWithin10Percent) {
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> log_u(0, 1);
  auto log_range = [&](double lo, double hi) { return lo * std::pow(hi / lo, log_u(rng)); };
  int confident = 0, required = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Truth t{log_range(150, 3000), log_range(100, 5000), log_range(100, 7000)};
    const double load = log_range(200, 40000);    // interrupts per 20 ms period, mean
    const double b0 = log_range(1, 32);           // the smallest batch
    const double spread = log_range(0.05, 8);     // batches in [b0, b0 (1 + spread)]
    const double sigma = log_range(0.002, 0.05);  // multiplicative noise
    std::normal_distribution<double> noise(0, sigma);
    std::uniform_real_distribution<double> batch(b0, b0 * (1 + spread));
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    std::uniform_int_distribution<int64_t> dt(5'000'000, 100'000'000);
    CostEstimator e;
    for (int i = 0; i < 2 * CostEstimator::kWindow; ++i) {
      const int64_t d = dt(rng);
      e.update(period(t, load * jitter(rng) * static_cast<double>(d) / kPeriod, batch(rng),
                      noise(rng), noise(rng), d));
    }
    const CostEstimate& s = e.estimate();
    if (s.confidence == CostConfidence::kMeasured) {
      ++confident;
      EXPECT_NEAR(s.completion_ns, t.completion, 0.10 * t.completion) << trial;
      EXPECT_NEAR(s.interrupt_ns, t.handler + t.wakeup, 0.10 * (t.handler + t.wakeup)) << trial;
    } else {
      EXPECT_EQ(s.completion_ns, 1000) << trial;
      EXPECT_EQ(s.interrupt_ns, 2000) << trial;
    }
    // A wide spread of batches with noise well below both costs' shares of the softirq time
    // must give a split (a cost hidden in the other's noise cannot be measured to 3 %).
    const double mid = b0 * (1 + spread / 2);
    const double share = std::min(t.wakeup, t.completion * mid) / (t.wakeup + t.completion * mid);
    if (spread >= 1 && share >= 30 * sigma) {
      ++required;
      EXPECT_EQ(s.confidence, CostConfidence::kMeasured)
          << trial << " spread " << spread << " sigma " << sigma << " rel " << s.relative_error;
    }
  }
  EXPECT_GT(required, 20);
  EXPECT_GT(confident, 60);
}

TEST(CostEstimator, NeverDividesByZeroOrGoesOutOfBounds) {
  CostEstimator e;
  const uint64_t big = std::numeric_limits<uint64_t>::max();
  const int64_t big_dt = std::numeric_limits<int64_t>::max();
  const CoreMeasurement odd[] = {
      {},                                           // all zero
      {kPeriod, 0, 0, 0, 0, 0},                     // zero events
      {0, 1000, 100, 1000, 100, 100},               // zero period
      {-5, 1000, 100, 1000, 100, 100},              // negative period
      {kPeriod, 1000, 100, 1000, 100, 0},           // no completions
      {kPeriod, 1000, 0, 1000, 100, 100},           // no interrupts
      {kPeriod, big, big, big, big, big},           // huge
      {big_dt, big, big, big, big, big},            // huge period
      {kPeriod, 0, 1000, 0, 1000, 1000},            // no time at all
      {kPeriod, 3 * kPeriod, 1000, 0, 1000, 1000},  // more IRQ time than the period
      {1, 0, 16, 0, 16, 1 << 30},                   // a 1 ns period
  };
  for (const CoreMeasurement& m : odd) {
    e.update(m);
    const CostEstimate& s = e.estimate();
    EXPECT_TRUE(std::isfinite(s.completion_ns));
    EXPECT_TRUE(std::isfinite(s.interrupt_ns));
    EXPECT_TRUE(std::isfinite(s.combined_ns));
    EXPECT_TRUE(std::isfinite(s.batch));
  }
  // Zero time with events: fits a zero cost, which is out of bounds: defaults.
  for (int i = 0; i < 40; ++i) e.update({kPeriod, 0, 1000, 0, 1000, 1000u + 100u * (i % 9)});
  expect_defaults(e);
  // Costs far above the bounds: defaults, never the absurd numbers.
  CostEstimator f;
  for (int i = 0; i < 40; ++i) {
    f.update(period({50, 50, 500'000}, 16 + i % 3, 1 + i % 4));
  }
  EXPECT_LE(f.estimate().completion_ns, CostEstimator::kMaxCompletionNs);
  EXPECT_LE(f.estimate().interrupt_ns, CostEstimator::kMaxInterruptNs);
  // Costs at the bounds' edges are reported as measured when inside them.
  CostEstimator g;
  for (int i = 0; i < 40; ++i) g.update(period({60, 60, 30}, 10000, 1 + i % 9));
  EXPECT_EQ(g.estimate().confidence, CostConfidence::kMeasured);
  EXPECT_NEAR(g.estimate().completion_ns, 30, 1);
}

TEST(CostEstimator, IdleAndImplausiblePeriodsDoNotEnter) {
  CostEstimator e;
  EXPECT_FALSE(e.update({kPeriod, 100, CostEstimator::kMinInterrupts - 1, 100, 10, 10}));
  EXPECT_FALSE(e.update({kPeriod, kPeriod, 100, kPeriod + 1, 100, 100}));
  EXPECT_TRUE(e.update({kPeriod, 1000, 100, 1000, 100, 100}));
  EXPECT_EQ(e.estimate().periods, 1u);
}

TEST(CostEstimator, NaNDefaultsFallBack) {
  CostParams p;
  p.completion_cost_ns = std::numeric_limits<double>::quiet_NaN();
  p.interrupt_cost_ns = 1e12;
  CostEstimator e(p);
  EXPECT_EQ(e.estimate().completion_ns, 1000);
  EXPECT_EQ(e.estimate().interrupt_ns, CostEstimator::kMaxInterruptNs);
}

TEST(CostEstimator, FollowsAChangeOfCosts) {
  Truth t;
  CostEstimator e;
  for (int i = 0; i < CostEstimator::kWindow; ++i) e.update(period(t, 3000, 1 + (i % 6) * 4));
  t.completion *= 2;
  for (int i = 0; i < CostEstimator::kWindow; ++i) e.update(period(t, 3000, 1 + (i % 6) * 4));
  ASSERT_EQ(e.estimate().confidence, CostConfidence::kMeasured);
  EXPECT_NEAR(e.estimate().completion_ns, t.completion, 1);
}

// Direct costs: the recent control periods' hard-IRQ time per interrupt and softirq time per
// completion, from the second period on, until the split is measured.
double direct_completion(const Truth& t, double batch) {
  return t.completion + t.wakeup / batch;
}

TEST(CostEstimator, DirectCostsFromTheSecondPeriod) {
  const Truth t;
  CostEstimator e;
  EXPECT_TRUE(e.observe(period(t, 3000, 4)));
  expect_defaults(e);
  EXPECT_EQ(e.estimate().confidence, CostConfidence::kDefaults);
  EXPECT_TRUE(e.observe(period(t, 2500, 4)));
  const CostEstimate& s = e.estimate();
  EXPECT_EQ(s.confidence, CostConfidence::kDirect);
  EXPECT_NEAR(s.interrupt_ns, t.handler, 1);
  EXPECT_NEAR(s.completion_ns, direct_completion(t, 4), 1);
  // The costs predict the time measured at the batch the core runs.
  const CostParams p = e.costs({});
  EXPECT_NEAR(p.interrupt_cost_ns + 4 * p.completion_cost_ns,
              t.handler + t.wakeup + 4 * t.completion, 5.0);
  // Held while the periods' costs stay within kDirectBand (here the batch moves C_c by 13 %):
  // the model's costs do not follow its own picks.
  const double held = s.completion_ns;
  for (int i = 0; i < CostEstimator::kDirectPeriods; ++i) e.observe(period(t, 500, 30));
  EXPECT_EQ(e.estimate().completion_ns, held);
  // Beyond it, they follow (a host whose costs doubled), once the median moved.
  const Truth twice{2 * t.handler, 2 * t.wakeup, 2 * t.completion};
  e.observe(period(twice, 500, 30));
  e.observe(period(twice, 500, 30));
  EXPECT_EQ(e.estimate().completion_ns, held);  // 2 of 5
  e.observe(period(twice, 500, 30));
  EXPECT_NEAR(e.estimate().completion_ns, direct_completion(twice, 30), 1);
  EXPECT_NEAR(e.estimate().interrupt_ns, twice.handler, 1);
}

TEST(CostEstimator, DirectCostsIgnoreOutlierPeriods) {
  const Truth t;
  CostEstimator e;
  for (int i = 0; i < 5; ++i) e.observe(period(t, 100, 8));
  const double c = e.estimate().completion_ns, h = e.estimate().interrupt_ns;
  EXPECT_NEAR(c, direct_completion(t, 8), 1);
  // Two periods of five with 10x the times (plausible at this light load).
  EXPECT_TRUE(e.observe(period(t, 100, 8, 9, 9)));
  EXPECT_TRUE(e.observe(period(t, 100, 8, 9, 9)));
  EXPECT_EQ(e.estimate().completion_ns, c);
  EXPECT_EQ(e.estimate().interrupt_ns, h);
  // Of two periods, the lower counts.
  CostEstimator f;
  EXPECT_TRUE(f.observe(period(t, 100, 8, 9, 9)));
  EXPECT_TRUE(f.observe(period(t, 100, 8)));
  EXPECT_NEAR(f.estimate().completion_ns, c, 1);
  EXPECT_NEAR(f.estimate().interrupt_ns, h, 1);
}

TEST(CostEstimator, DirectCostsNeverReplaceAMeasuredSplitAndStayBounded) {
  const Truth t;
  CostEstimator e;
  for (int i = 0; i < 40; ++i) e.update(period(t, 200 + 100 * (i % 7), 2 + (i % 9) * 3));
  ASSERT_EQ(e.estimate().confidence, CostConfidence::kMeasured);
  const CostEstimate before = e.estimate();
  for (int i = 0; i < 5; ++i) e.observe(period(t, 500, 8, 0, 3));
  EXPECT_EQ(e.estimate().confidence, CostConfidence::kMeasured);
  EXPECT_EQ(e.estimate().completion_ns, before.completion_ns);
  EXPECT_EQ(e.estimate().interrupt_ns, before.interrupt_ns);
  // Idle or implausible periods do not count.
  CostEstimator g;
  CoreMeasurement idle = period(t, 500, 8);
  idle.completions = 0;
  EXPECT_FALSE(g.observe(idle));
  CoreMeasurement over = period(t, 500, 8);
  over.softirq_ns = 3 * kPeriod;
  EXPECT_FALSE(g.observe(over));
  EXPECT_EQ(g.estimate().confidence, CostConfidence::kDefaults);
  // No hard-IRQ time (veth: the NAPI is scheduled by the sender) and next to no softirq time: the
  // costs' lower bounds, never zero.
  CoreMeasurement none = period(t, 500, 8);
  none.hardirq_ns = 0;
  none.softirq_ns = 1;
  EXPECT_TRUE(g.observe(none));
  EXPECT_TRUE(g.observe(none));
  EXPECT_EQ(g.estimate().confidence, CostConfidence::kDirect);
  EXPECT_EQ(g.estimate().interrupt_ns, CostEstimator::kMinInterruptNs);
  EXPECT_EQ(g.estimate().completion_ns, CostEstimator::kMinCompletionNs);
}

TEST(CostEstimator, BackgroundWorkStretchesTheModelsCosts) {
  const Truth t;
  CostEstimator e;
  CoreMeasurement m = period(t, 500, 8);
  EXPECT_TRUE(e.observe(m));
  EXPECT_TRUE(e.observe(m));
  EXPECT_EQ(e.estimate().background, 0);  // not measured: no stretch
  EXPECT_EQ(e.model_costs().first, e.estimate().completion_ns);
  // The application keeps the core busy 40 % of the time.
  m.other_known = true;
  m.other_ns = static_cast<uint64_t>(0.4 * kPeriod);
  EXPECT_TRUE(e.observe(m));
  EXPECT_NEAR(e.estimate().background, 0.4, 1e-9);
  EXPECT_NEAR(e.model_costs().first, e.estimate().completion_ns / 0.6, 1e-6);
  EXPECT_NEAR(e.model_costs().second, e.estimate().interrupt_ns / 0.6, 1e-6);
  // Held within the band; an outlier period does not move it; a real change does.
  m.other_ns = static_cast<uint64_t>(0.43 * kPeriod);
  for (int i = 0; i < CostEstimator::kDirectPeriods; ++i) e.observe(m);
  EXPECT_NEAR(e.estimate().background, 0.4, 1e-9);
  m.other_ns = static_cast<uint64_t>(0.2 * kPeriod);
  for (int i = 0; i < CostEstimator::kDirectPeriods; ++i) e.observe(m);
  EXPECT_NEAR(e.estimate().background, 0.2, 1e-9);
  CoreMeasurement spike = m;
  spike.other_ns = static_cast<uint64_t>(kPeriod);
  e.observe(spike);
  EXPECT_NEAR(e.estimate().background, 0.2, 1e-9);
  // A core never idle: at most kMaxBackground (costs at most 5x).
  m.other_ns = static_cast<uint64_t>(kPeriod);
  for (int i = 0; i < CostEstimator::kDirectPeriods; ++i) e.observe(m);
  EXPECT_EQ(e.estimate().background, CostEstimator::kMaxBackground);
  EXPECT_NEAR(e.model_costs().first, 5 * e.estimate().completion_ns, 1e-6);
}

TEST(CostEstimator, NoAllocationPerUpdate) {
  CostEstimator e;
  const Truth t;
  const uint64_t before = dimctl::testing::allocations_so_far();
  for (int i = 0; i < 1000; ++i) {
    e.update(period(t, 3000, 1 + i % 9));
    e.observe(period(t, 3000, 1 + i % 9));
  }
  EXPECT_EQ(dimctl::testing::allocations_so_far(), before);
}

}  // namespace
}  // namespace dim
