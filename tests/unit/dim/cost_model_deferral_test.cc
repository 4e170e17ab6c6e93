// Software moderation in the cost model (TimerMode::kDeferral, cost_model.h): the closed forms
// for one and two deferrals, and a direct simulation of napi_complete_done()'s deferral under
// Poisson arrivals for the others.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "dim/cost_model.h"

namespace dim {
namespace {

constexpr double kCc = 1500, kCirq = 5000, kCpoll = 20000;

CostParams host(double timer_latency_ns = 0) {
  CostParams c;
  c.completion_cost_ns = kCc;
  c.interrupt_cost_ns = kCirq;
  c.poll_cost_ns = kCpoll;
  c.timer_latency_ns = timer_latency_ns;
  return c;
}

// One deferral: an episode's timer polls run until the first empty one, P = e^{λW}.
TEST(CostModelDeferral, OneDeferralMatchesTheClosedForm) {
  for (const uint32_t t_us : {16u, 64u, 256u}) {
    for (const double rate : {1e3, 1e4, 2e4, 5e4, 2e5}) {
      const double w = t_us * 1e-6;
      const double mu = rate * w;
      const double p_polls = std::exp(mu);
      const double q = 1 + mu * p_polls;
      const Prediction p = predict(TimerMode::kDeferral, t_us, 1, rate, host());
      EXPECT_NEAR(p.empty_polls_per_completion, 1 / q, 1e-9 / q) << t_us << " " << rate;
      EXPECT_NEAR(p.polls_per_completion, (1 + p_polls) / q, 1e-9) << t_us << " " << rate;
      EXPECT_NEAR(p.batch, q / (1 + p_polls), 1e-9 * q) << t_us << " " << rate;
      const double delay_ns = mu * p_polls * (w / 2) / q * 1e9;
      EXPECT_NEAR(p.added_delay_ns, delay_ns, delay_ns * 1e-9 + 1e-9) << t_us << " " << rate;
      const double s = kCc + (kCirq + p_polls * kCpoll) / q;
      EXPECT_NEAR(p.cpu_per_completion_ns, s, s * 1e-9) << t_us << " " << rate;
      if (p.feasible) {
        EXPECT_NEAR(p.latency_ns, p.added_delay_ns + s / (1 - p.utilisation), 1e-6);
      }
    }
  }
}

// Two deferrals: the episode ends at two empty polls in a row, P = (1 + p) / p², p = e^{-λW}.
TEST(CostModelDeferral, TwoDeferralsMatchTheClosedForm) {
  for (const double rate : {1e3, 1e4, 5e4}) {
    const double w = 64e-6;
    const double pe = std::exp(-rate * w);
    const double p_polls = (1 + pe) / (pe * pe);
    const double q = 1 + p_polls * rate * w;
    const Prediction p = predict(TimerMode::kDeferral, 64, 2, rate, host());
    EXPECT_NEAR(p.polls_per_completion, (1 + p_polls) / q, 1e-9) << rate;
    EXPECT_NEAR(p.empty_polls_per_completion, p_polls * pe / q, 1e-9) << rate;
  }
}

TEST(CostModelDeferral, NoTimerOrNoDeferralIsNoModeration) {
  for (const double rate : {0.0, 1e3, 1e6}) {
    for (const auto& [t_us, defer] : {std::pair{0u, 1u}, std::pair{64u, 0u}}) {
      const Prediction p = predict(TimerMode::kDeferral, t_us, defer, rate, host());
      EXPECT_EQ(p.added_delay_ns, 0) << t_us << " " << defer;
      EXPECT_EQ(p.polls_per_completion, 1);
      EXPECT_EQ(p.empty_polls_per_completion, 0);
      EXPECT_EQ(p.cpu_per_completion_ns, kCc + kCirq);
    }
  }
}

// At low rates every completion pays its wake-up and d empty timer polls, and waits for nothing.
TEST(CostModelDeferral, LowRatesPayTheEmptyPolls) {
  for (const uint32_t d : {1u, 3u}) {
    const Prediction p = predict(TimerMode::kDeferral, 64, d, 0.01, host());
    EXPECT_NEAR(p.empty_polls_per_completion, d, 1e-3);
    EXPECT_NEAR(p.cpu_per_completion_ns, kCc + kCirq + d * kCpoll, 1);
    EXPECT_LT(p.added_delay_ns, 1);
  }
}

// The timer running late is a longer window.
TEST(CostModelDeferral, TimerLatencyLengthensTheWindow) {
  for (const double rate : {5e3, 5e4}) {
    const Prediction late = predict(TimerMode::kDeferral, 16, 1, rate, host(10'000));
    const Prediction longer = predict(TimerMode::kDeferral, 26, 1, rate, host());
    EXPECT_DOUBLE_EQ(late.added_delay_ns, longer.added_delay_ns);
    EXPECT_DOUBLE_EQ(late.cpu_per_completion_ns, longer.cpu_per_completion_ns);
  }
}

// A flood: the episode never ends, polls per completion go to 1/(λW), nothing overflows.
TEST(CostModelDeferral, AFloodStaysFinite) {
  const Prediction p = predict(TimerMode::kDeferral, 256, 1, 1e8, host());
  EXPECT_TRUE(std::isfinite(p.cpu_per_completion_ns));
  EXPECT_NEAR(p.polls_per_completion, 1 / (1e8 * 256e-6), 1e-12);
  EXPECT_NEAR(p.added_delay_ns, 128'000, 1);
}

// napi_complete_done() and the watchdog timer, event by event.
struct Simulated {
  double polls_per_completion = 0, empty_per_completion = 0, delay_us = 0;
};

Simulated simulate(double w_us, uint32_t defer, double rate, int arrivals, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate / 1e6);
  double now = gap(rng);
  uint64_t polls = 0, empty = 0, done = 0;
  double waited = 0;
  int left = arrivals;
  while (left > 0) {
    // The interrupt is enabled: the next arrival is polled at once.
    ++polls;
    ++done;
    --left;
    double next = now + gap(rng);
    double timer = now + w_us;
    uint32_t count = defer;
    while (count > 0) {
      uint64_t taken = 0;
      while (left > 0 && next <= timer) {
        waited += timer - next;
        ++taken;
        --left;
        next += gap(rng);
      }
      ++polls;
      done += taken;
      if (taken > 0) {
        count = defer;
      } else {
        ++empty;
        --count;
      }
      timer += w_us;
    }
    now = next;
  }
  const auto n = static_cast<double>(done);
  return {static_cast<double>(polls) / n, static_cast<double>(empty) / n, waited / n};
}

TEST(CostModelDeferral, PredictionsMatchASimulation) {
  struct Case {
    uint32_t t_us, defer;
    double rate;
  };
  const Case cases[] = {{16, 1, 2e4}, {64, 1, 1e4}, {64, 1, 3e4},  {128, 1, 5e3},
                        {32, 2, 2e4}, {64, 3, 1e4}, {256, 2, 2e3}, {16, 4, 1e5}};
  uint64_t seed = 11;
  for (const Case& c : cases) {
    const Prediction p = predict(TimerMode::kDeferral, c.t_us, c.defer, c.rate, host());
    const Simulated s = simulate(c.t_us, c.defer, c.rate, 400'000, ++seed);
    EXPECT_NEAR(p.polls_per_completion, s.polls_per_completion, s.polls_per_completion * 0.02)
        << c.t_us << " " << c.defer << " " << c.rate;
    EXPECT_NEAR(p.empty_polls_per_completion, s.empty_per_completion,
                s.empty_per_completion * 0.03 + 1e-4)
        << c.t_us << " " << c.defer << " " << c.rate;
    EXPECT_NEAR(p.added_delay_ns / 1000, s.delay_us, s.delay_us * 0.02 + 0.05)
        << c.t_us << " " << c.defer << " " << c.rate;
  }
}

}  // namespace
}  // namespace dim
