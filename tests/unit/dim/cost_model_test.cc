// The cost model against the closed forms of performance-research 5.2 (no count cap) and against
// a direct simulation of each timer semantics (with the count cap, which the closed forms lack).
#include "dim/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace dim {
namespace {

constexpr CostParams kNoHost{0, 0, 0.95};

double delay_us(TimerMode m, uint32_t usec, uint32_t count, double rate) {
  return predict(m, usec, count, rate, kNoHost).added_delay_ns / 1000;
}

// Research 5.2, T = 16 µs, no count cap (count 0).
TEST(CostModel, AbsoluteTimerMatchesTheClosedForm) {
  const double t = 16e-6;
  for (double l : {1e4, 1e5, 1e6, 1e7}) {
    const double expected = t * (1 + l * t / 2) / (1 + l * t) * 1e6;
    EXPECT_NEAR(delay_us(TimerMode::kAbsolute, 16, 0, l), expected, expected * 1e-6) << l;
    EXPECT_NEAR(predict(TimerMode::kAbsolute, 16, 0, l, kNoHost).batch, 1 + l * t, 1e-6) << l;
  }
  // The research note's own numbers: 14.90 / 11.08 / 8.47 / 8.05 µs.
  EXPECT_NEAR(delay_us(TimerMode::kAbsolute, 16, 0, 1e4), 14.90, 0.01);
  EXPECT_NEAR(delay_us(TimerMode::kAbsolute, 16, 0, 1e7), 8.05, 0.01);
}

TEST(CostModel, RateLimitTimerMatchesTheClosedForm) {
  const double t = 16e-6;
  for (double l : {1e3, 1e4, 1e5, 1e6}) {
    const double expected = (l * t * t / 2) / (l * t + std::exp(-l * t)) * 1e6;
    EXPECT_NEAR(delay_us(TimerMode::kRateLimit, 16, 0, l), expected, expected * 1e-6 + 1e-9) << l;
    EXPECT_NEAR(predict(TimerMode::kRateLimit, 16, 0, l, kNoHost).batch, l * t + std::exp(-l * t),
                1e-6)
        << l;
  }
  EXPECT_NEAR(delay_us(TimerMode::kRateLimit, 16, 0, 1e4), 1.27, 0.01);
  EXPECT_NEAR(delay_us(TimerMode::kRateLimit, 16, 0, 1e6), 8.00, 0.01);
}

TEST(CostModel, IdleGapTimerMatchesTheClosedForm) {
  const double t = 16e-6;
  for (double l : {1e3, 1e4, 1e5}) {
    const double m = 1 / l - t * std::exp(-l * t) / (1 - std::exp(-l * t));
    const double expected = (t + (std::exp(l * t) - 1) * m) * 1e6;
    EXPECT_NEAR(delay_us(TimerMode::kIdleGap, 16, 0, l), expected, expected * 1e-6) << l;
    EXPECT_NEAR(predict(TimerMode::kIdleGap, 16, 0, l, kNoHost).batch, std::exp(l * t), 1e-6) << l;
  }
  EXPECT_NEAR(delay_us(TimerMode::kIdleGap, 16, 0, 1e4), 17.35, 0.01);
  EXPECT_NEAR(delay_us(TimerMode::kIdleGap, 16, 0, 1e5), 39.53, 0.01);
}

TEST(CostModel, NoModerationWithCountOneOrTimerZero) {
  for (auto m : {TimerMode::kRateLimit, TimerMode::kIdleGap, TimerMode::kAbsolute}) {
    for (double l : {0.0, 1e3, 1e6, 1e9}) {
      for (auto [usec, count] : {std::pair<uint32_t, uint32_t>{32, 1}, {0, 64}, {0, 0}}) {
        const Prediction p = predict(m, usec, count, l, kNoHost);
        EXPECT_EQ(p.batch, 1);
        EXPECT_EQ(p.added_delay_ns, 0);
      }
    }
  }
}

TEST(CostModel, LowLoadDelayIsTheTimerExceptUnderARateLimit) {
  EXPECT_NEAR(delay_us(TimerMode::kAbsolute, 8, 4, 1e-3), 8, 1e-3);
  EXPECT_NEAR(delay_us(TimerMode::kIdleGap, 8, 4, 1e-3), 8, 1e-3);
  EXPECT_NEAR(delay_us(TimerMode::kRateLimit, 8, 4, 1e-3), 0, 1e-3);
  EXPECT_NEAR(delay_us(TimerMode::kAbsolute, 8, 4, 0), 8, 1e-9);
  EXPECT_NEAR(delay_us(TimerMode::kRateLimit, 8, 4, 0), 0, 1e-9);
}

TEST(CostModel, HostCostAndFeasibility) {
  const CostParams host{1000, 2000, 0.95};
  const Prediction p = predict(TimerMode::kAbsolute, 16, 0, 1e5, host);
  EXPECT_NEAR(p.cpu_per_completion_ns, 1000 + 2000 / p.batch, 1e-9);
  EXPECT_NEAR(p.utilisation, 1e5 * p.cpu_per_completion_ns * 1e-9, 1e-12);
  EXPECT_TRUE(p.feasible);
  EXPECT_NEAR(p.latency_ns, p.added_delay_ns + p.cpu_per_completion_ns / (1 - p.utilisation), 1e-6);
  // 1e6/s at >= 1 µs per completion saturates the core whatever the batch.
  const Prediction q = predict(TimerMode::kAbsolute, 16, 0, 1e6, host);
  EXPECT_FALSE(q.feasible);
  EXPECT_TRUE(std::isinf(q.latency_ns));
}

// k queues alike on one core: k times the load on the core, the sojourn at that load, the batch
// and the delay of the queue's own rate.
TEST(CostModel, SharersLoadTheCore) {
  const CostParams alone{1000, 2000, 0.95};
  CostParams shared = alone;
  shared.sharers = 4;
  const Prediction a = predict(TimerMode::kIdleGap, 8, 64, 1e5, alone);
  const Prediction s = predict(TimerMode::kIdleGap, 8, 64, 1e5, shared);
  EXPECT_EQ(s.batch, a.batch);
  EXPECT_EQ(s.added_delay_ns, a.added_delay_ns);
  EXPECT_EQ(s.cpu_per_completion_ns, a.cpu_per_completion_ns);
  EXPECT_NEAR(s.utilisation, 4 * a.utilisation, 1e-12);
  EXPECT_NEAR(s.latency_ns, s.added_delay_ns + s.cpu_per_completion_ns / (1 - s.utilisation), 1e-6);
  EXPECT_GT(s.latency_ns, a.latency_ns);
  // 250k/s alone is light; four such queues saturate the core.
  EXPECT_TRUE(predict(TimerMode::kIdleGap, 0, 1, 2.5e5, alone).feasible);
  EXPECT_FALSE(predict(TimerMode::kIdleGap, 0, 1, 2.5e5, shared).feasible);
  // Below one sharer (and NaN) the queue is alone.
  for (const double k : {0.0, 0.5, std::nan("")}) {
    CostParams c = alone;
    c.sharers = k;
    EXPECT_EQ(predict(TimerMode::kIdleGap, 8, 64, 1e5, c).utilisation, a.utilisation) << k;
  }
}

// A direct event simulation of one moderated queue under Poisson arrivals: mean added delay and
// completions per interrupt, to check the capped formulas (the closed forms above have no cap).
struct Simulated {
  double delay_us = 0;
  double batch = 0;
};

Simulated simulate(TimerMode mode, double t_us, uint32_t n, double rate, int arrivals,
                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate / 1e6);  // µs
  std::vector<double> pending;
  double total_delay = 0;
  uint64_t interrupts = 0, done = 0;
  double last_irq = -1e18, now = 0;
  auto fire = [&](double at) {
    for (double a : pending) total_delay += at - a;
    done += pending.size();
    pending.clear();
    ++interrupts;
    last_irq = at;
  };
  // When the pending batch would fire on the timer, given no further arrival.
  auto deadline = [&]() {
    switch (mode) {
      case TimerMode::kRateLimit:
        return std::max(last_irq + t_us, pending.front());
      case TimerMode::kIdleGap:
        return pending.back() + t_us;
      case TimerMode::kAbsolute:
        return pending.front() + t_us;
      case TimerMode::kDeferral:  // cost_model_deferral_test.cc
        break;
    }
    return 0.0;
  };
  for (int i = 0; i < arrivals; ++i) {
    now += gap(rng);
    if (!pending.empty() && deadline() <= now) fire(deadline());
    pending.push_back(now);
    if (mode == TimerMode::kRateLimit && pending.size() == 1 && now >= last_irq + t_us) {
      fire(now);
    } else if (pending.size() >= n) {
      fire(now);
    }
  }
  if (!pending.empty()) fire(deadline());
  return {total_delay / static_cast<double>(done),
          static_cast<double>(done) / static_cast<double>(interrupts)};
}

TEST(CostModel, CappedPredictionsMatchASimulation) {
  struct Case {
    TimerMode mode;
    uint32_t usec, count;
    double rate;
  };
  const Case cases[] = {
      {TimerMode::kRateLimit, 64, 8, 2e5}, {TimerMode::kRateLimit, 8, 256, 3e5},
      {TimerMode::kRateLimit, 16, 4, 5e5}, {TimerMode::kAbsolute, 16, 8, 2e5},
      {TimerMode::kAbsolute, 4, 8, 1e6},   {TimerMode::kAbsolute, 32, 32, 5e4},
      {TimerMode::kIdleGap, 16, 16, 2e5},  {TimerMode::kIdleGap, 8, 64, 3e5},
      {TimerMode::kIdleGap, 32, 4, 1e5},   {TimerMode::kRateLimit, 128, 256, 1e6},
  };
  uint64_t seed = 7;
  for (const Case& c : cases) {
    const Prediction p = predict(c.mode, c.usec, c.count, c.rate, kNoHost);
    const Simulated s = simulate(c.mode, c.usec, c.count, c.rate, 300'000, ++seed);
    EXPECT_NEAR(p.batch, s.batch, s.batch * 0.02)
        << "mode " << int(c.mode) << " T " << c.usec << " N " << c.count << " rate " << c.rate;
    EXPECT_NEAR(p.added_delay_ns / 1000, s.delay_us, s.delay_us * 0.02 + 0.02)
        << "mode " << int(c.mode) << " T " << c.usec << " N " << c.count << " rate " << c.rate;
  }
}

TEST(CostModel, BatchNeverExceedsTheCountAndGrowsWithLoad) {
  for (auto m : {TimerMode::kRateLimit, TimerMode::kIdleGap, TimerMode::kAbsolute}) {
    for (uint32_t n : {2u, 8u, 64u, 256u}) {
      double prev = 0;
      for (double l = 1e2; l < 1e9; l *= 3) {
        const Prediction p = predict(m, 16, n, l, kNoHost);
        EXPECT_LE(p.batch, n + 1e-9);
        EXPECT_GE(p.batch, prev - 1e-9) << int(m) << " " << n << " " << l;
        EXPECT_TRUE(std::isfinite(p.added_delay_ns));
        EXPECT_GE(p.added_delay_ns, 0);
        prev = p.batch;
      }
    }
  }
}

}  // namespace
}  // namespace dim
