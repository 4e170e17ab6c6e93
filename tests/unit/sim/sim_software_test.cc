// Software moderation (StageSpec::software: a NAPI's gro-flush-timeout and defer-hard-irqs, as
// napi_complete_done() runs them) against closed forms: a QD=1 loop whose period P sits below
// the timeout g, between g and defer * g, and above defer * g, where every figure is exact; and
// Poisson arrivals, a renewal process whose interrupt rate, poll rate and mean added delay
// follow from the chance that a timer interval stays empty.
#include <gtest/gtest.h>

#include <cmath>

#include "dimctl/sim/simulator.h"

namespace dimctl::sim {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kG = 20 * kUs;  // gro-flush-timeout

// One queue, free CPU, instant device, a NAPI under software moderation that no policy moves.
Workload napi(uint32_t defer, int64_t gro_flush_timeout) {
  Workload w;
  w.name = "napi";
  w.seed = 11;
  w.stages[0].moderated = false;
  w.stages[0].fixed = Moderation{1, gro_flush_timeout};
  w.stages[0].software = SoftwareModeration{defer};
  w.stages[0].poll_budget = 1u << 30;
  return w;
}

// QD=1 ping-pong: the next request `period` after each delivery.
Workload ping(uint32_t defer, int64_t period) {
  Workload w = napi(defer, kG);
  w.sources[0].kind = SourceSpec::Kind::kClosed;
  w.sources[0].depth = 1;
  w.sources[0].think = Dist::constant(static_cast<double>(period));
  w.phases[0].duration_ns = 200'000'000;
  w.warmup_ns = 1'000'000;
  return w;
}

Workload poisson(uint32_t defer, double rate) {
  Workload w = napi(defer, kG);
  w.sources[0].kind = SourceSpec::Kind::kPoisson;
  w.sources[0].rate = rate;
  w.phases[0].duration_ns = static_cast<int64_t>(1e6 / rate * 1e9);  // ~10^6 arrivals
  w.warmup_ns = w.phases[0].duration_ns / 50;
  return w;
}

RunResult must_run(const Workload& w, const std::string& policy = "none") {
  auto p = parse_policy(policy);
  EXPECT_TRUE(p) << (p ? "" : p.error().message());
  auto r = run(w, *p);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return r ? *r : RunResult{};
}

double per_completion(uint64_t n, const PhaseMetrics& m) {
  return static_cast<double>(n) / static_cast<double>(m.completions);
}

TEST(SimSoftware, SlowerThanTheDeferWindowOneInterruptAndDeferEmptyPollsPerPacket) {
  // P > defer * g: every request finds the interrupt re-armed, pays nothing, and leaves defer
  // empty timer polls behind it (the defer-th re-arms).
  for (uint32_t defer : {1u, 2u, 5u}) {
    const int64_t period = defer * kG + 7 * kUs;
    const RunResult r = must_run(ping(defer, period));
    ASSERT_GT(r.total.completions, 1000u);
    EXPECT_EQ(r.total.latency.max(), 0u) << "defer " << defer;
    EXPECT_NEAR(per_completion(r.total.interrupts, r.total), 1.0, 1e-3) << "defer " << defer;
    EXPECT_NEAR(per_completion(r.total.polls, r.total), 1.0 + defer, 1e-3) << "defer " << defer;
  }
}

TEST(SimSoftware, FasterThanTheTimeoutNoInterruptAndOnePollPerTimeout) {
  // P < g: each request lands while the interrupt is masked and waits for the next timer poll,
  // which finds it (work: the count starts again). Latency g - P, one poll per request.
  const int64_t period = 6 * kUs;
  const RunResult r = must_run(ping(2, period));
  ASSERT_GT(r.total.completions, 1000u);
  EXPECT_EQ(r.total.interrupts, 0u);
  EXPECT_EQ(r.total.latency.min(), static_cast<uint64_t>(kG - period));
  EXPECT_EQ(r.total.latency.max(), static_cast<uint64_t>(kG - period));
  EXPECT_EQ(r.total.polls, r.total.completions);
  EXPECT_NEAR(r.total.throughput(), 1e9 / static_cast<double>(kG), 10);
}

TEST(SimSoftware, APollWithWorkRestartsTheDeferCount) {
  // g < P < defer * g: each request comes during the empty re-polls, and the poll that finds it
  // reloads the count, so the interrupt is never re-armed. With defer = 3 and P = 1.5 g the
  // request is found by the second timer poll, the count still at 1: a count that work only
  // reloads once it reached 0, or that only an interrupt reloads, re-arms after the next empty
  // poll and takes an interrupt for every other request.
  const int64_t period = 3 * kG / 2;
  const RunResult r = must_run(ping(3, period));
  ASSERT_GT(r.total.completions, 1000u);
  EXPECT_EQ(r.total.interrupts, 0u);
  EXPECT_EQ(r.total.latency.max(), static_cast<uint64_t>(2 * kG - period));
  EXPECT_EQ(r.total.latency.min(), static_cast<uint64_t>(2 * kG - period));
  EXPECT_NEAR(per_completion(r.total.polls, r.total), 2.0, 1e-3);  // one empty, one with work
}

TEST(SimSoftware, ZeroTimeoutOrZeroDeferIsPlainNapi) {
  for (const auto& [defer, g] : {std::pair<uint32_t, int64_t>{0, kG}, {4, 0}}) {
    Workload w = ping(defer, 3 * kUs);
    w.stages[0].fixed.timer_ns = g;
    const RunResult r = must_run(w);
    EXPECT_EQ(r.total.latency.max(), 0u);
    EXPECT_EQ(r.total.interrupts, r.total.completions);
    EXPECT_EQ(r.total.polls, r.total.completions);
  }
}

TEST(SimSoftware, PoissonMatchesTheRenewalClosedForm) {
  // After a poll with work the timer polls every g; the interrupt is re-armed after `defer`
  // consecutive empty intervals (each empty with e = exp(-lambda g)): E[N] = (1 - e^D) /
  // ((1 - e) e^D) intervals, then an exponential wait for the next arrival, which interrupts.
  // Per cycle: 1 + lambda g E[N] packets; those in the intervals wait g/2 on average (Wald).
  const double g = static_cast<double>(kG) / 1e9;
  for (uint32_t defer : {1u, 2u, 4u}) {
    for (double lambda : {1e4, 5e4}) {
      const RunResult r = must_run(poisson(defer, lambda));
      const double e = std::exp(-lambda * g);
      const double eD = std::pow(e, defer);
      const double n = (1 - eD) / ((1 - e) * eD);
      const double cycle = n * g + 1 / lambda;
      const double irq_rate = 1 / cycle;
      const double poll_rate = (1 + n) / cycle;
      const double delay = (lambda * n * g * g / 2) / (1 + lambda * n * g) * 1e9;
      const std::string at = "defer " + std::to_string(defer) + " lambda " + std::to_string(lambda);
      const double s = static_cast<double>(r.total.end_ns - r.total.start_ns) / 1e9;
      EXPECT_NEAR(r.total.interrupts_per_s() / irq_rate, 1.0, 0.03) << at;
      EXPECT_NEAR(static_cast<double>(r.total.polls) / s / poll_rate, 1.0, 0.02) << at;
      EXPECT_NEAR(r.total.latency.mean() / delay, 1.0, 0.02) << at;
    }
  }
}

TEST(SimSoftware, PacedArrivalsAreEvenlySpacedAndMeetTheQueueDepthOneForms) {
  // A paced open-loop source (poisson with `periodic`, as sockperf under-load sends): every gap
  // exactly 1/rate. Slower than the defer window: each message interrupts and leaves one empty
  // timer poll; faster than the timeout: no interrupt, and each message waits for the timer's
  // grid (mean half a timeout when the two periods share no factor).
  Workload w = napi(1, kG);
  w.sources[0].kind = SourceSpec::Kind::kPoisson;
  w.sources[0].periodic = true;
  w.sources[0].rate = 1e9 / static_cast<double>(kG + 7 * kUs);
  w.phases[0].duration_ns = 200'000'000;
  w.warmup_ns = 1'000'000;
  const RunResult slow = must_run(w);
  EXPECT_NEAR(slow.total.throughput(), w.sources[0].rate, 10);
  EXPECT_EQ(slow.total.latency.max(), 0u);
  EXPECT_EQ(slow.total.interrupts, slow.total.completions);
  EXPECT_EQ(slow.total.polls, 2 * slow.total.completions);

  w.sources[0].rate = 1e9 / 7001.0;  // 7.001 us apart, under g = 20 us
  const RunResult fast = must_run(w);
  EXPECT_EQ(fast.total.interrupts, 0u);
  EXPECT_LE(fast.total.latency.max(), static_cast<uint64_t>(kG));
  EXPECT_NEAR(fast.total.latency.mean() / (kG / 2.0), 1.0, 0.02);
  EXPECT_NEAR(static_cast<double>(fast.total.polls) / fast.total.seconds(), 1e9 / kG, 100);
}

TEST(SimSoftware, TimerLatencyDelaysTheRepollAndTimerCostIsChargedPerArmedTimer) {
  // QD=1 faster than the timeout: each request waits for the re-poll, now g + L after the last
  // one, so latency g + L - P. Slower than the defer window: defer timers armed per request,
  // each charged timer_cost, and nothing else costs CPU.
  const int64_t latency = 7 * kUs, cost = 3 * kUs;
  Workload w = ping(2, 6 * kUs);
  w.stages[0].software->timer_latency_ns = latency;
  const RunResult fast = must_run(w);
  EXPECT_EQ(fast.total.interrupts, 0u);
  EXPECT_EQ(fast.total.latency.max(), static_cast<uint64_t>(kG + latency - 6 * kUs));
  EXPECT_EQ(fast.total.latency.min(), static_cast<uint64_t>(kG + latency - 6 * kUs));

  for (uint32_t defer : {1u, 3u}) {
    Workload s = ping(defer, defer * (kG + latency + cost) + 9 * kUs);
    s.stages[0].software->timer_latency_ns = latency;
    s.stages[0].software->timer_cost_ns = cost;
    const RunResult slow = must_run(s);
    ASSERT_GT(slow.total.completions, 1000u);
    EXPECT_EQ(slow.total.latency.max(), 0u) << "defer " << defer;
    EXPECT_EQ(slow.total.interrupts, slow.total.completions) << "defer " << defer;
    EXPECT_NEAR(
        static_cast<double>(slow.total.cpu_busy_ns) / static_cast<double>(slow.total.completions),
        static_cast<double>(defer * cost), 0.01 * cost)
        << "defer " << defer;
  }
}

TEST(SimSoftware, ProfilesBecomeTheTimeoutAndNoneIsPlainNapi) {
  // A moderated software stage: the policy's profile timer is the gro-flush-timeout (net-eqe
  // static:2 = 64 us), `none` leaves it 0, whatever the stage's defer count.
  Workload w = ping(2, 10 * kUs);
  w.stages[0].moderated = true;
  w.table = ProfileTable::kNetEqe;
  const RunResult none = must_run(w, "none");
  EXPECT_EQ(none.total.latency.max(), 0u);
  EXPECT_EQ(none.total.interrupts, none.total.completions);
  const RunResult s2 = must_run(w, "static:2");
  EXPECT_EQ(s2.total.interrupts, 0u);
  EXPECT_EQ(s2.total.latency.max(), static_cast<uint64_t>(64 * kUs - 10 * kUs));
}

}  // namespace
}  // namespace dimctl::sim
