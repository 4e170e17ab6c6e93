// SaturationPolicy: enters and leaves on the documented thresholds (K periods at X, at once below
// Y, projected to the latency objective's profile), climbs to the throughput-best profile of a
// synthetic core and holds it, does not climb when the rate does not answer, and has no limit
// cycle on a periodic load (property test).
#include "dim/saturation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "support/count_allocations.h"

namespace dim {
namespace {

constexpr int64_t kPeriod = 20'000'000;

ModelTable rdma_table(uint8_t lo = 0, uint8_t hi = 255) {
  return ModelTable(kRdmaProfiles, ProfileCount::kCompletions, ModelParams{}, lo, hi);
}

// A period with the given busy fraction, batch 1, no exhausted polls.
SaturationInput busy_period(double busy, uint8_t model_ix = 0) {
  SaturationInput in;
  in.dt_ns = kPeriod;
  in.busy_ns = static_cast<uint64_t>(busy * kPeriod);
  in.interrupts = in.completions = in.polls = 1000;
  in.model_ix = model_ix;
  return in;
}

// A period on a core never idle at profile ix of the RDMA table, batching more the higher ix.
SaturationInput overloaded_period(uint64_t completions, uint8_t ix) {
  SaturationInput in = busy_period(1.0, 0);
  in.completions = completions;
  in.interrupts = in.polls = completions / (2 + 4 * uint64_t{ix});
  return in;
}

// Enters saturation on a core never idle at profile 0 (`completions` a period): the first
// trial's profile, 0 when it did not enter or found nothing to climb to.
uint8_t enter_overloaded(SaturationPolicy& s, const ModelTable& t, uint64_t completions = 100'000) {
  for (int i = 0; i < SaturationParams{}.enter_periods; ++i) {
    s.update(t, {}, overloaded_period(completions, 0));
  }
  return s.saturated() ? s.profile_ix() : 0;
}

// A synthetic core serving one queue: CPU per completion S and batch B from the cost model at the
// rate it serves. Open loop (`offered` completions/s, capped by the core's capacity) or closed
// loop (`depth` completions outstanding, each taking base_ns + the moderation delay + S).
struct SynthCore {
  CostParams cost;
  double offered = 0;
  double depth = 0;
  double base_ns = 0;
  double app_busy = 0;  // the core's share taken by other work

  double rate_at(const ModelTable& t, uint8_t ix, Prediction* out = nullptr) const {
    double rate = depth > 0 ? 1e5 : offered;
    Prediction pr;
    for (int k = 0; k < 60; ++k) {
      pr = predict(t.params().timer, t.profile(ix).usec, t.count(ix), rate, cost);
      const double cap = 1e9 / pr.cpu_per_completion_ns * (1 - app_busy);
      const double want =
          depth > 0 ? depth * 1e9 / (base_ns + pr.added_delay_ns + pr.cpu_per_completion_ns)
                    : offered;
      rate = 0.5 * rate + 0.5 * std::min(want, cap);
    }
    if (out != nullptr) *out = pr;
    return rate;
  }

  // What the queue wants beyond what the core serves waits at the core, and each poll finds
  // that backlog: an open loop's grows without bound (every poll uses its 64 budget), a closed
  // loop's is bounded by its depth (the batch grows with the overload).
  double batch(const ModelTable& t, uint8_t ix, const Prediction& pr) const {
    const double rate = rate_at(t, ix);
    const double cap = 1e9 / pr.cpu_per_completion_ns * (1 - app_busy);
    if (rate < 0.99 * cap) return pr.batch;
    if (depth <= 0) return offered > cap ? 64.0 : pr.batch;
    const double want = depth * 1e9 / (base_ns + pr.added_delay_ns + pr.cpu_per_completion_ns);
    return std::min(64.0, pr.batch * std::max(1.0, want / cap));
  }

  SaturationInput period(const ModelTable& t, uint8_t ix, uint8_t model_ix) const {
    Prediction pr;
    const double rate = rate_at(t, ix, &pr);
    SaturationInput in;
    in.dt_ns = kPeriod;
    const double secs = kPeriod * 1e-9;
    in.completions = static_cast<uint64_t>(rate * secs);
    in.interrupts = static_cast<uint64_t>(rate * secs / batch(t, ix, pr));
    in.polls = in.interrupts;
    in.busy_ns = static_cast<uint64_t>(
        std::min(1.0, app_busy + rate * pr.cpu_per_completion_ns * 1e-9) * kPeriod);
    in.model_ix = model_ix;
    return in;
  }
};

TEST(SaturationPolicy, EntersAfterKPeriodsAtXAndLeavesAtOnceBelowY) {
  const ModelTable t = rdma_table(0, 0);  // one profile: no climb, only the detector
  const SaturationParams p;
  SaturationPolicy s;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(s.update(t, {}, busy_period(0.899)));
  EXPECT_FALSE(s.saturated());
  for (int i = 0; i + 1 < p.enter_periods; ++i) {
    EXPECT_FALSE(s.update(t, {}, busy_period(p.enter_busy)));
    EXPECT_FALSE(s.saturated());
  }
  // A period without pressure restarts the count.
  EXPECT_FALSE(s.update(t, {}, busy_period(0.5)));
  for (int i = 0; i + 1 < p.enter_periods; ++i) s.update(t, {}, busy_period(1.0));
  EXPECT_FALSE(s.saturated());
  EXPECT_TRUE(s.update(t, {}, busy_period(1.0)));
  EXPECT_TRUE(s.saturated());
  EXPECT_EQ(s.episodes(), 1u);
  // Between Y and X: stays.
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(s.update(t, {}, busy_period(p.leave_busy)));
  EXPECT_TRUE(s.saturated());
  // Below Y: leaves in that period.
  EXPECT_TRUE(s.update(t, {}, busy_period(p.leave_busy - 0.001)));
  EXPECT_FALSE(s.saturated());
}

TEST(SaturationPolicy, ExhaustedPollsAndBacklogArePressure) {
  const ModelTable t = rdma_table(0, 0);
  const SaturationParams p;
  SaturationPolicy s;
  // Exhausted polls on a busy core (between Y and X): pressure.
  SaturationInput in = busy_period(p.leave_busy + 0.05);
  in.exhausted_polls = in.polls / 2;  // enter_exhausted
  for (int i = 0; i < 3; ++i) s.update(t, {}, in);
  EXPECT_TRUE(s.saturated());
  in.exhausted_polls = in.polls / 10;
  s.update(t, {}, in);
  EXPECT_TRUE(s.saturated());
  // On a core with idle time, exhausted polls are batches bigger than the budget: they do not
  // keep it saturated ...
  in = busy_period(p.leave_busy - 0.01);
  in.exhausted_polls = in.polls;
  s.update(t, {}, in);
  EXPECT_FALSE(s.saturated());
  // ... nor make it so.
  for (int i = 0; i < 10; ++i) s.update(t, {}, in);
  EXPECT_FALSE(s.saturated());
  // Too few polls say nothing.
  in = busy_period(p.leave_busy + 0.05);
  in.polls = 15;
  in.exhausted_polls = 15;
  for (int i = 0; i < 10; ++i) s.update(t, {}, in);
  EXPECT_FALSE(s.saturated());
  in = busy_period(0.5);
  in.backlog_growing = true;
  for (int i = 0; i < 3; ++i) s.update(t, {}, in);
  EXPECT_TRUE(s.saturated());
  in.backlog_growing = false;
  s.update(t, {}, in);
  EXPECT_FALSE(s.saturated());
}

// Runs the policy on the core for `periods` with the latency objective at `model_ix`; returns the
// wish changes.
int drive(SaturationPolicy& s, const ModelTable& t, const SynthCore& core, int periods,
          uint8_t model_ix = 0) {
  int changes = 0;
  for (int i = 0; i < periods; ++i) {
    const uint8_t before = s.wish(model_ix);
    s.update(t, core.cost, core.period(t, s.wish(model_ix), model_ix));
    changes += s.wish(model_ix) != before;
  }
  return changes;
}

// Runs the policy for `periods` on the inputs `input(i, wish)` gives (the wish in force during
// period i) with the latency objective at `model_ix`; returns the wish changes.
template <typename Input>
int drive_inputs(SaturationPolicy& s, const ModelTable& t, int periods, uint8_t model_ix,
                 Input input) {
  int changes = 0;
  for (int i = 0; i < periods; ++i) {
    const uint8_t before = s.wish(model_ix);
    s.update(t, {}, input(i, before));
    changes += s.wish(model_ix) != before;
  }
  return changes;
}

double best_rate(const ModelTable& t, const SynthCore& core) {
  double best = 0;
  for (uint8_t i = t.min_ix(); i <= t.max_ix(); ++i) best = std::max(best, core.rate_at(t, i));
  return best;
}

TEST(SaturationPolicy, OpenLoopOverloadClimbsToCapacityAndHolds) {
  const ModelTable t = rdma_table();
  SynthCore core;
  core.cost = {3500, 2300, 0.95, 1};  // the W3 host's costs
  core.offered = 600'000;             // above every profile's capacity
  SaturationPolicy s;
  const int climb = drive(s, t, core, 60);
  EXPECT_TRUE(s.saturated());
  EXPECT_TRUE(s.holding());
  EXPECT_GE(climb, 1);
  EXPECT_LE(climb, t.size() + 1);
  EXPECT_GE(core.rate_at(t, s.profile_ix()), 0.96 * best_rate(t, core));
  // Holds: no more changes while the core stays saturated.
  EXPECT_EQ(drive(s, t, core, 500), 0);
  EXPECT_EQ(s.episodes(), 1u);
  // The load drops to a third of what profile 0 can carry: hands back at once.
  core.offered = 1e9 / (3500 + 2300) / 3;
  EXPECT_EQ(drive(s, t, core, 1), 1);
  EXPECT_FALSE(s.saturated());
}

TEST(SaturationPolicy, ClosedLoopClimbStopsAtTheThroughputBest) {
  // A closed loop: more batching frees the core until its moderation delay costs more rate than
  // the CPU it saves. The climb must stop there, not at the top.
  const ModelTable t = rdma_table();
  SynthCore core;
  core.cost = {500, 5000, 0.95, 1};
  core.depth = 24;
  core.base_ns = 20'000;
  uint8_t best_ix = 0;
  for (uint8_t i = 0; i < t.size(); ++i) {
    if (core.rate_at(t, i) > core.rate_at(t, best_ix)) best_ix = i;
  }
  ASSERT_GT(best_ix, 0);
  ASSERT_LT(core.rate_at(t, t.max_ix()), 0.97 * core.rate_at(t, best_ix));
  SaturationPolicy s;
  const int climb = drive(s, t, core, 80);
  ASSERT_TRUE(s.saturated());
  EXPECT_TRUE(s.holding());
  EXPECT_LE(climb, t.size() + 1);
  EXPECT_GE(core.rate_at(t, s.profile_ix()), 0.96 * core.rate_at(t, best_ix));
  // The cost model's jump overshoots this loop's best (its prediction holds the rate fixed); the
  // bisection back finds it.
  EXPECT_EQ(s.profile_ix(), best_ix);
  EXPECT_EQ(drive(s, t, core, 300), 0);
}

// A period on a core busy 0.98 (saturated, idle left) at profile ix whose rate answers to
// moderation as rate(ix) says, batching more the higher ix (the inputs the cost model cannot
// predict: a closed loop's batches).
template <typename Rate>
SaturationInput answering_period(uint8_t ix, Rate rate) {
  SaturationInput in = overloaded_period(static_cast<uint64_t>(rate(ix) * kPeriod * 1e-9), ix);
  in.busy_ns = static_cast<uint64_t>(0.98 * kPeriod);
  return in;
}

// Where the cost model predicts no saving above the best, after a measured gain: the step above
// is measured once an episode (W3 512B held 7, 1 % below 8 and below kernel DIM).
TEST(SaturationPolicy, TheStepAboveWhereTheModelSeesNothingIsMeasuredOnce) {
  const ModelTable t = rdma_table();
  // Without the edge step: where the climb ends on its own.
  const auto gains = [](uint8_t ix) { return 100'000.0 * (1 + 0.2 * ix); };
  SaturationParams off;
  off.edge_step = false;
  SaturationPolicy base(off);
  drive_inputs(base, t, 60, 0, [&](int, uint8_t w) { return answering_period(w, gains); });
  ASSERT_TRUE(base.saturated());
  ASSERT_TRUE(base.holding());
  const uint8_t b = base.profile_ix();
  ASSERT_GT(b, 0) << "the climb must have measured a gain";
  ASSERT_LT(b, t.max_ix()) << "the cost model must see nothing above some best";
  // A 1 % gain above b (below the verdict's 2 %, so "hold whichever measured higher"): taken.
  const auto edge_gains = [&](uint8_t ix) {
    return ix <= b ? gains(ix) : gains(b) * (ix == b + 1 ? 1.01 : 0.9);
  };
  SaturationPolicy s;
  const int changes =
      drive_inputs(s, t, 200, 0, [&](int, uint8_t w) { return answering_period(w, edge_gains); });
  EXPECT_TRUE(s.holding());
  EXPECT_EQ(s.profile_ix(), b + 1);
  SaturationPolicy s_base(off);
  const int base_changes = drive_inputs(
      s_base, t, 200, 0, [&](int, uint8_t w) { return answering_period(w, edge_gains); });
  EXPECT_EQ(s_base.profile_ix(), b);
  EXPECT_EQ(changes, base_changes + 1) << "one step more, taken, and nothing after it";
  // The step above worse: back to b and hold, one step up and one back.
  const auto edge_loses = [&](uint8_t ix) { return ix <= b ? gains(ix) : gains(b) * 0.9; };
  SaturationPolicy l;
  const int l_changes =
      drive_inputs(l, t, 200, 0, [&](int, uint8_t w) { return answering_period(w, edge_loses); });
  EXPECT_TRUE(l.holding());
  EXPECT_EQ(l.profile_ix(), b);
  EXPECT_EQ(l_changes, base_changes + 2);
  EXPECT_EQ(l.episodes(), 1u);
}

// No gain measured this episode (the first trial lost): no step above.
TEST(SaturationPolicy, NoStepAboveWithoutAMeasuredGain) {
  const ModelTable t = rdma_table();
  const auto loses = [](uint8_t ix) { return ix == 0 ? 100'000.0 : 80'000.0; };
  SaturationPolicy s;
  const int changes =
      drive_inputs(s, t, 100, 0, [&](int, uint8_t w) { return answering_period(w, loses); });
  EXPECT_TRUE(s.saturated());
  EXPECT_TRUE(s.holding());
  EXPECT_EQ(s.profile_ix(), 0);
  EXPECT_EQ(changes, 2);  // the first trial up, back: nothing more
}

TEST(SaturationPolicy, NoClimbWhenTheRateDoesNotAnswer) {
  // Busy with application work; the queue's rate is what is offered whatever the profile: the
  // one step tried does not pay, so it goes back to the model's pick and holds.
  const ModelTable t = rdma_table();
  SaturationPolicy s;
  SaturationInput in = busy_period(0.97, 2);
  in.interrupts = in.polls = 500;  // 2 completions per interrupt: the queues batch
  const int changes = drive_inputs(s, t, 100, 2, [&](int, uint8_t) { return in; });
  EXPECT_TRUE(s.saturated());
  EXPECT_EQ(s.profile_ix(), 2);
  EXPECT_EQ(changes, 2);  // one step up, one back
  EXPECT_TRUE(s.holding());
}

TEST(SaturationPolicy, NoClimbWhenEachInterruptCarriesOneCompletion) {
  // Queues with one completion outstanding each (a QD~1 closed loop over many queues) saturate
  // the core with interrupts no moderation can batch: saturated, held at the model's pick.
  const ModelTable t = rdma_table();
  SaturationPolicy s;
  SaturationInput in = busy_period(1.0, 1);  // completions == interrupts
  const int changes = drive_inputs(s, t, 100, 1, [&](int, uint8_t) { return in; });
  EXPECT_TRUE(s.saturated());
  EXPECT_TRUE(s.holding());
  EXPECT_EQ(changes, 0);
  EXPECT_EQ(s.episodes(), 1u);
  // Nothing to climb to: no profile of its own, the latency objective's pick stands wherever it
  // moves.
  EXPECT_FALSE(s.overrides());
  in.model_ix = 4;
  s.update(t, {}, in);
  EXPECT_TRUE(s.saturated());
  EXPECT_EQ(s.wish(4), 4);
  EXPECT_EQ(s.profile_ix(), 4);
  // 1.3 completions per interrupt: some batching, so the climb is tried.
  SaturationPolicy s2;
  in.interrupts = in.polls = 769;
  for (int i = 0; i < SaturationParams{}.enter_periods; ++i) s2.update(t, {}, in);
  EXPECT_TRUE(s2.saturated());
  EXPECT_FALSE(s2.holding());  // a trial is running
  EXPECT_TRUE(s2.overrides());
  EXPECT_EQ(s2.wish(1), s2.profile_ix());
}

// A load whose rate moves by itself from period to period (bursts, on/off) cannot judge a 2 %
// gain on one period: saturated, but no trial.
TEST(SaturationPolicy, NoClimbWhenTheRateMovesByItself) {
  const ModelTable t = rdma_table();
  // Period i's rate alternates between 1000 and `low` completions, 4 per interrupt.
  auto alternating = [](uint64_t low) {
    return [low](int i, uint8_t) {
      SaturationInput in = busy_period(1.0, 1);
      in.completions = i % 2 ? 1000 : low;
      in.interrupts = in.polls = in.completions / 4;
      return in;
    };
  };
  SaturationPolicy s;
  EXPECT_EQ(drive_inputs(s, t, 100, 1, alternating(850)), 0);  // 15 % apart
  EXPECT_TRUE(s.saturated());
  // 5 % apart: steady enough, the climb is tried.
  SaturationPolicy s2;
  drive_inputs(s2, t, SaturationParams{}.enter_periods, 1, alternating(950));
  EXPECT_TRUE(s2.saturated());
  EXPECT_FALSE(s2.holding());  // a trial is running
}

// A trial that delays a closed loop throttles it and idles the core; that is the trial's
// verdict, not headroom: the episode goes on (back to the best) instead of ending and starting
// again every few periods.
TEST(SaturationPolicy, ATrialThatIdlesTheCoreDoesNotEndTheEpisode) {
  const ModelTable t = rdma_table();
  SaturationPolicy s;
  // At profile 0 the loop saturates the core with 1.5 completions per interrupt; any other
  // profile halves its rate and the core's busy time.
  const int changes = drive_inputs(s, t, 200, 0, [](int, uint8_t wish) {
    SaturationInput in = busy_period(wish == 0 ? 1.0 : 0.5, 0);
    in.interrupts = in.polls = wish == 0 ? 667 : 250;
    in.completions = wish == 0 ? 1000 : 500;
    return in;
  });
  EXPECT_TRUE(s.saturated());
  EXPECT_EQ(s.episodes(), 1u);
  EXPECT_EQ(s.wish(0), 0);
  EXPECT_LE(changes, t.size() + 1);
}

TEST(SaturationPolicy, LeavingIsJudgedAtTheLatencyObjectivesProfile) {
  // Batching takes the core below Y, but handing back to profile 0 would saturate it again. The
  // net EQE table's first step (1 -> 8 µs) batches about 4 at this load.
  const ModelTable t(kNetRxEqeProfiles, ProfileCount::kPackets, ModelParams{});
  SynthCore core;
  core.cost = {1000, 2000, 0.95, 1};
  core.offered = 400'000;  // 1.2x profile 0's capacity, about 0.6 of the best profile's
  SaturationPolicy s;
  drive(s, t, core, 40);
  ASSERT_TRUE(s.saturated());
  const SaturationInput now = core.period(t, s.profile_ix(), 0);
  EXPECT_LT(static_cast<double>(now.busy_ns) / kPeriod, s.params().leave_busy);
  EXPECT_EQ(drive(s, t, core, 500), 0);
  EXPECT_TRUE(s.saturated());
  EXPECT_EQ(s.episodes(), 1u);
}

// The property: a load switching between overload and light load with random on/off lengths
// changes the wish at most (table size + 1) times per overload phase and 2 per light phase (a
// trial cut short, then leaving), none in a phase shorter than K periods, and none after the
// climb in a long phase. No limit cycle.
TEST(SaturationPolicy, PropertyNoLimitCycleOnPeriodicLoad) {
  const ModelTable t = rdma_table();
  std::mt19937_64 rng(22);
  const SaturationParams p;
  // Light phases long enough to leave (a trial running when the load leaves ends first).
  std::uniform_int_distribution<int> len(1, 40), off_len(p.measure_periods + 3, 40);
  // Each trial settles and measures; a check after one takes two more periods.
  const int climb_bound = t.size() * (p.measure_periods + 3) + p.enter_periods + 2;
  for (int trial = 0; trial < 100; ++trial) {
    const int on = len(rng), off = off_len(rng);
    SynthCore hot, cold;
    hot.cost = cold.cost = {1000, 2000, 0.95, 1};
    hot.offered = 800'000;
    cold.offered = 30'000;
    SaturationPolicy s;
    int changes = 0, phases = 0;
    for (int cycle = 0; cycle < 20; ++cycle) {
      const int c = drive(s, t, hot, on);
      EXPECT_LE(c, t.size() + 1) << trial;
      if (on < p.enter_periods) {
        EXPECT_EQ(c, 0) << trial;
      }
      if (on > climb_bound) {
        // After the climb the wish is still.
        const uint8_t held = s.wish(0);
        EXPECT_EQ(drive(s, t, hot, 5), 0) << trial;
        EXPECT_EQ(s.wish(0), held);
      }
      // A trial running when the load leaves ends first (back to the best, whose check periods
      // then see the headroom): two changes, and up to measure + 3 periods to leave.
      const int leave = drive(s, t, cold, off);
      EXPECT_LE(leave, 2) << trial;
      EXPECT_FALSE(s.saturated()) << trial;
      changes += c + leave;
      phases += on >= p.enter_periods;
    }
    EXPECT_EQ(s.episodes(), static_cast<uint32_t>(phases)) << trial;
    EXPECT_LE(changes, phases * (t.size() + 3)) << trial;
  }
}

TEST(SaturationPolicy, ATrialIsMeasuredInThePeriodAfterTheChangeOrAfterSettling) {
  // A rate that does not answer to moderation: each trial ends as soon as it is measured.
  const ModelTable t = rdma_table();
  SaturationInput in = busy_period(1.0, 0);
  in.interrupts = in.polls = 500;  // 2 completions per interrupt
  for (const uint8_t settle : {uint8_t{0}, uint8_t{1}, uint8_t{2}}) {
    SaturationParams p;
    p.settle_periods = settle;
    SaturationPolicy s(p);
    for (int i = 0; i < p.enter_periods; ++i) s.update(t, {}, in);
    ASSERT_TRUE(s.saturated());
    ASSERT_FALSE(s.holding()) << "settle " << int{settle};
    for (int i = 0; i < settle; ++i) {
      s.update(t, {}, in);
      EXPECT_FALSE(s.holding()) << "settling period " << i;
    }
    s.update(t, {}, in);  // the measuring period decides
    EXPECT_TRUE(s.holding()) << "settle " << int{settle};
  }
}

// Many queues per core, each at a rate whose batch at the latency profile's 1 us timer is 1.03:
// one completion per interrupt there says nothing about QD~1 (sweep-1-080: 30 queues on 4 cores,
// a livelocked core held at profile 0, p99 150 ms). The net EQE table, 20 queues of 25k/s each.
struct ManyQueues {
  static constexpr double kQueues = 20;
  static constexpr double kRate = 25'000;  // per queue
  const ModelTable t{dim::kNetRxEqeProfiles, ProfileCount::kPackets, ModelParams{}};
  CostParams cost;  // the defaults: C_c 1 us, C_irq 2 us

  double batch(uint8_t ix) const {
    return predict(TimerMode::kRateLimit, t.profile(ix).usec, t.count(ix), kRate, cost).batch;
  }
  // The lowest profile predicted to batch 1.5: where a probe can tell.
  uint8_t judging_ix() const {
    uint8_t ix = 0;
    while (batch(ix) < SaturationParams{}.qd1_judge_batch) ++ix;
    return ix;
  }
  // A period of the core with every queue at `ix` (the batch the cost model predicts), never
  // idle; the probe queue's counts at `probe_batch` completions per interrupt.
  SaturationInput period(uint8_t ix, double probe_batch = 0) const {
    SaturationInput in;
    in.dt_ns = kPeriod;
    in.busy_ns = kPeriod;
    in.completions = static_cast<uint64_t>(kQueues * kRate * kPeriod * 1e-9);
    in.interrupts = in.polls =
        static_cast<uint64_t>(static_cast<double>(in.completions) / batch(ix));
    in.queues = kQueues;
    if (probe_batch > 0) {
      in.probe_completions = static_cast<uint64_t>(kRate * kPeriod * 1e-9);
      in.probe_events =
          static_cast<uint64_t>(static_cast<double>(in.probe_completions) / probe_batch);
    }
    return in;
  }
};

TEST(SaturationPolicy, OneCompletionPerInterruptWhereNoTimerBatchesIsProbedOnOneQueue) {
  const ManyQueues q;
  ASSERT_LT(q.batch(0), 1.25);
  const uint8_t judge = q.judging_ix();
  ASSERT_GT(judge, 0);
  ASSERT_LT(judge, q.t.max_ix());
  SaturationPolicy s;
  const SaturationParams p;
  for (int i = 0; i < p.enter_periods; ++i) s.update(q.t, q.cost, q.period(0));
  ASSERT_TRUE(s.saturated());
  // The probe: one queue at the lowest profile that can tell, the others at the model's pick.
  EXPECT_TRUE(s.probing());
  EXPECT_FALSE(s.overrides());
  EXPECT_EQ(s.profile_ix(), judge);
  EXPECT_EQ(s.wish(0), 0);
  // The probe queue batches as predicted: a batching load. The climb starts, every queue.
  EXPECT_TRUE(s.update(q.t, q.cost, q.period(0, q.batch(judge))));
  EXPECT_FALSE(s.probing());
  EXPECT_TRUE(s.overrides());
  EXPECT_GT(s.profile_ix(), 0);
  EXPECT_FALSE(s.holding());  // the first trial runs
  EXPECT_EQ(s.wish(0), s.profile_ix());
  EXPECT_EQ(s.probes().batching, 1u);
  EXPECT_EQ(s.probes().qd1, 0u);
}

TEST(SaturationPolicy, AProbeThatFindsQd1StopsTheCoresClimbsForAWhile) {
  const ManyQueues q;
  const SaturationParams p;
  SaturationPolicy s;
  auto enter = [&] {
    for (int i = 0; i < p.enter_periods; ++i) s.update(q.t, q.cost, q.period(0));
    return s.saturated();
  };
  ASSERT_TRUE(enter());
  ASSERT_TRUE(s.probing());
  // One completion per interrupt at the probe's profile too: QD~1.
  EXPECT_TRUE(s.update(q.t, q.cost, q.period(0, 1.0)));
  EXPECT_TRUE(s.saturated());
  EXPECT_FALSE(s.probing());
  EXPECT_FALSE(s.overrides());
  EXPECT_TRUE(s.holding());
  EXPECT_EQ(s.wish(0), 0);
  EXPECT_EQ(s.wish(3), 3);  // the latency objective's pick, wherever it moves
  EXPECT_EQ(s.probes().qd1, 1u);
  // Headroom ends the episode; saturated again within qd1_retry_ms: no probe, no trial.
  SaturationInput idle = q.period(0);
  idle.busy_ns = kPeriod / 4;
  const int64_t wait_periods = int64_t{p.qd1_retry_ms} * 1'000'000 / kPeriod;
  int64_t periods = 1 + p.enter_periods;
  while (periods + 1 + p.enter_periods < wait_periods) {
    s.update(q.t, q.cost, idle);
    ASSERT_FALSE(s.saturated());
    ASSERT_TRUE(enter());
    EXPECT_FALSE(s.probing()) << "period " << periods;
    EXPECT_FALSE(s.overrides());
    periods += 1 + p.enter_periods;
  }
  // After it, one probe again.
  for (; periods < wait_periods + 1; ++periods) s.update(q.t, q.cost, idle);
  ASSERT_TRUE(enter());
  EXPECT_TRUE(s.probing());
  // Nothing measured on the probe queue (it went quiet): no evidence of batching, no climb.
  s.update(q.t, q.cost, q.period(0));
  EXPECT_FALSE(s.probing());
  EXPECT_FALSE(s.overrides());
  EXPECT_EQ(s.probes().qd1, 2u);
  EXPECT_EQ(s.probes().batching, 0u);
}

// A passive verdict was taken on the entry's load: a QD~1 loop whose depth rises starts to batch
// at the same pick, and the core, still saturated, is judged again (sweep-1-247: depth 1 then 3
// per queue, never idle in both phases, held passive at 77 % of the oracle's throughput).
TEST(SaturationPolicy, APassiveCoreWhoseBatchRisesAtThePickIsJudgedAgain) {
  const ManyQueues q;
  const SaturationParams p;
  // Every queue at profile 0, the core's batch `b`; the probe queue's at `probe_batch`.
  auto at = [&](double b, double probe_batch = 0) {
    SaturationInput in = q.period(0, probe_batch);
    in.interrupts = in.polls = static_cast<uint64_t>(static_cast<double>(in.completions) / b);
    return in;
  };
  auto passive_after_qd1 = [&](SaturationPolicy& s) {
    for (int i = 0; i < p.enter_periods; ++i) s.update(q.t, q.cost, at(1.0));
    EXPECT_TRUE(s.probing());
    s.update(q.t, q.cost, at(1.0, 1.0));  // the probe: QD~1
    EXPECT_TRUE(s.saturated());
    EXPECT_FALSE(s.overrides());
    EXPECT_EQ(s.probes().qd1, 1u);
  };
  SaturationPolicy s;
  passive_after_qd1(s);
  // The same load, its batch within rejudge_batch_rise of the entry's: the verdict holds.
  for (int i = 0; i < 50; ++i) {
    s.update(q.t, q.cost, at(1.0 + 0.9 * p.rejudge_batch_rise));
    ASSERT_TRUE(s.saturated()) << i;
    ASSERT_FALSE(s.probing()) << i;
  }
  EXPECT_EQ(s.rejudged(), 0u);
  // One period above it is not a rise; K in a row are.
  const double risen = 1.0 + 4 * p.rejudge_batch_rise;
  ASSERT_LT(risen, p.no_batch_ratio) << "still QD~1 by the ratio: the probe must tell";
  s.update(q.t, q.cost, at(risen));
  s.update(q.t, q.cost, at(1.0));
  EXPECT_TRUE(s.saturated());
  for (int i = 0; i < p.enter_periods; ++i) s.update(q.t, q.cost, at(risen));
  EXPECT_FALSE(s.saturated()) << "the episode ends, to be judged again";
  EXPECT_EQ(s.rejudged(), 1u);
  EXPECT_EQ(s.episodes(), 1u);
  // The next K pressure periods enter anew, and the probe runs again though qd1_retry_ms has not
  // passed: the queue batches now, the climb starts.
  for (int i = 0; i < p.enter_periods; ++i) s.update(q.t, q.cost, at(risen));
  ASSERT_TRUE(s.saturated());
  EXPECT_EQ(s.episodes(), 2u);
  ASSERT_TRUE(s.probing());
  s.update(q.t, q.cost, at(risen, 2.0));
  EXPECT_TRUE(s.overrides());
  EXPECT_GT(s.profile_ix(), 0);
  EXPECT_EQ(s.probes().batching, 1u);

  // A core with a few dozen interrupts a period: a rise of the same size is within the batches'
  // counting noise, no re-judgment.
  SaturationPolicy few;
  auto scaled = [&](double b, uint64_t interrupts, double probe_batch = 0) {
    SaturationInput in = at(b, probe_batch);
    in.interrupts = in.polls = interrupts;
    in.completions = static_cast<uint64_t>(b * static_cast<double>(interrupts));
    return in;
  };
  for (int i = 0; i < p.enter_periods; ++i) few.update(q.t, q.cost, scaled(1.0, 40));
  if (few.probing()) few.update(q.t, q.cost, scaled(1.0, 40, 1.0));
  ASSERT_TRUE(few.saturated());
  ASSERT_FALSE(few.overrides());
  for (int i = 0; i < 50; ++i) few.update(q.t, q.cost, scaled(risen, 40));
  EXPECT_TRUE(few.saturated());
  EXPECT_EQ(few.rejudged(), 0u);

  // Off (rejudge_batch_rise 0): the passive verdict holds for the episode.
  SaturationParams off;
  off.rejudge_batch_rise = 0;
  SaturationPolicy never(off);
  for (int i = 0; i < off.enter_periods; ++i) never.update(q.t, q.cost, at(1.0));
  never.update(q.t, q.cost, at(1.0, 1.0));
  for (int i = 0; i < 50; ++i) never.update(q.t, q.cost, at(risen));
  EXPECT_TRUE(never.saturated());
  EXPECT_FALSE(never.probing());
  EXPECT_FALSE(never.overrides());
  EXPECT_EQ(never.rejudged(), 0u);
}

TEST(SaturationPolicy, NoProbeWhereTheTimerThatCouldTellSavesLittle) {
  ManyQueues q;
  // Interrupts cheap against completions: batching saves under qd1_probe_gain (10 %) and above
  // climb_gain (2 %).
  q.cost.completion_cost_ns = 5000;
  q.cost.interrupt_cost_ns = 300;
  auto probes = [&](double busy, const CostParams& cost) {
    SaturationPolicy s;
    SaturationInput in = q.period(0);
    in.busy_ns = static_cast<uint64_t>(busy * kPeriod);
    for (int i = 0; i < SaturationParams{}.enter_periods; ++i) s.update(q.t, cost, in);
    EXPECT_TRUE(s.saturated());
    EXPECT_FALSE(s.overrides());
    return s.probing();
  };
  // Saturated with idle left: the probe's delay is not worth so little.
  EXPECT_FALSE(probes(0.98, q.cost));
  // Never idle: the backlog only grows, and any saving a trial can measure is worth the probe
  // (sweep-1-233 over 2 s: 10 queues a core at 1.2 completions per interrupt, the probe predicted
  // to save 7.7 %, held at profile 0 with 76 % of the oracle's throughput and p99 628x its).
  EXPECT_TRUE(probes(1.0, q.cost));
  // ... but not below what a trial can measure.
  CostParams cheaper = q.cost;
  cheaper.interrupt_cost_ns = 100;
  EXPECT_FALSE(probes(1.0, cheaper));
  // And the probe's profile at the measured batch (> 1.5 predicted at the latency profile) is
  // QD~1 itself: no probe either.
  ManyQueues fast;
  SaturationPolicy s2;
  SaturationInput in = fast.period(fast.judging_ix());
  in.interrupts = in.polls = in.completions;  // one per interrupt where 1.5 was predicted
  SaturationParams p;
  for (int i = 0; i < p.enter_periods; ++i) {
    in.model_ix = fast.judging_ix();
    s2.update(fast.t, fast.cost, in);
  }
  ASSERT_TRUE(s2.saturated());
  EXPECT_FALSE(s2.probing());
  EXPECT_FALSE(s2.overrides());
}

// An open loop polled at its offered rate on a core its interrupts keep busy: the polled rate
// cannot rise with batching (every completion is polled already), what the CPU freed does is
// serve the application the interrupts starved. With the core never idle at the best, the
// trial's CPU per completion (its measured batch at the core's costs) is the verdict.
TEST(SaturationPolicy, AnOverloadedCoreClimbsOnTheCpuItsInterruptsFree) {
  const ModelTable t = rdma_table();
  auto climb_with_busy = [&](double busy_at_best) {
    SaturationPolicy s;
    const int changes = drive_inputs(s, t, 40, 0, [&](int, uint8_t wish) {
      SaturationInput in = busy_period(wish == 0 ? busy_at_best : 1.0, 0);
      in.completions = 1000;
      in.interrupts = in.polls = 1000 / (2 + 4 * uint64_t{wish});  // batching answers
      return in;
    });
    EXPECT_TRUE(s.saturated());
    EXPECT_TRUE(s.holding());
    EXPECT_LE(changes, t.size() + 1);
    return s.profile_ix();
  };
  // Never idle at profile 0: each trial frees CPU at the same rate and is a gain, until the cost
  // model predicts no more saving.
  const uint8_t overloaded = climb_with_busy(1.0);
  EXPECT_GE(overloaded, 4);
  // Idle left at profile 0 (busy 0.98: saturated, not overloaded): what the trial frees goes
  // idle, no gain; the trial measured no more rate, so the best (0) holds.
  EXPECT_EQ(climb_with_busy(0.98), 0);
}

// A leave the load proves wrong (the core enters again within refail_ms, at no more load than it
// left at) is not repeated at once: the next episode holds for leave_hold_ms, twice that after a
// second failure in a row, unless the load falls below what it left at. More load than it left at
// is a new episode, free to leave.
TEST(SaturationPolicy, ALeaveTheLoadProvesWrongIsHeldOffAndTheHoldDoubles) {
  const ModelTable t = rdma_table();
  const SaturationParams p;
  const int64_t hold_periods = int64_t{p.leave_hold_ms} * 1'000'000 / kPeriod;
  SaturationPolicy s;
  const uint64_t n = 1000;  // completions a period
  // Enter at the latency objective's profile (0, never idle) and climb until the rule holds.
  auto enter_and_climb = [&](uint64_t completions) {
    int periods = 0;
    for (; periods < 60 && !(s.saturated() && s.holding() && s.overrides()); ++periods) {
      s.update(t, {}, overloaded_period(completions, s.wish(0)));
    }
    return periods;
  };
  // Headroom at the held profile, which the projection to profile 0 keeps below leave_busy.
  auto free_period = [&](uint64_t completions) {
    SaturationInput in = busy_period(0.3, 0);
    in.completions = completions;
    in.interrupts = in.polls = completions / 20;
    return in;
  };
  // Free periods until the core leaves (at most `limit`).
  auto periods_to_leave = [&](uint64_t completions, int limit) {
    int k = 0;
    while (s.saturated() && k < limit) {
      s.update(t, {}, free_period(completions));
      ++k;
    }
    return k;
  };
  ASSERT_LT(enter_and_climb(n), 60);
  EXPECT_EQ(periods_to_leave(n, 1), 1);  // first episode: no hold
  // Saturated again at once, at the same load: the leave was wrong.
  int used = enter_and_climb(n);
  ASSERT_LT(used, 60);
  int k = periods_to_leave(n, 500);
  EXPECT_GT(k, 1);
  EXPECT_EQ(used + k, hold_periods + p.enter_periods);  // the hold runs from the entry
  // A second failure in a row: twice the hold.
  used = enter_and_climb(n);
  k = periods_to_leave(n, 500);
  EXPECT_EQ(used + k, 2 * hold_periods + p.enter_periods);
  // A third, but the load falls below what the core left at: it leaves at once.
  enter_and_climb(n);
  EXPECT_EQ(periods_to_leave(n / 2, 500), 1);
  // Entering well after a leave, or with more load than the core left at: no hold.
  for (int i = 0; i < 20; ++i) s.update(t, {}, free_period(n / 2));
  enter_and_climb(n);
  EXPECT_EQ(periods_to_leave(n, 500), 1);
  enter_and_climb(2 * n);
  EXPECT_EQ(periods_to_leave(n, 500), 1);
}

// A best measured with idle left is judged against its trials on rate alone, and an open loop's
// rate cannot show what batching frees. When that best then leaves the core never idle for K
// periods, the rule measures it again as an overload and searches above it, once an episode.
TEST(SaturationPolicy, AHeldBestThatLeavesTheCoreNeverIdleIsMeasuredAgain) {
  const ModelTable t = rdma_table();
  const SaturationParams p;
  SaturationPolicy s;
  // At profile ix: 1000 completions a period (less by `less`), batching 2 + 4 ix.
  auto at = [](uint8_t ix, double busy, uint64_t less = 0) {
    SaturationInput in = overloaded_period(1000 - less, ix);
    in.busy_ns = static_cast<uint64_t>(busy * kPeriod);
    return in;
  };
  for (int i = 0; i < p.enter_periods; ++i) s.update(t, {}, at(0, 0.98));
  ASSERT_TRUE(s.saturated());
  const uint8_t trial = s.profile_ix();
  ASSERT_GT(trial, 0);
  // The trial frees a fifth of the core at the best's rate within g: on a core that had idle left
  // that is no gain, and the best (0) holds.
  s.update(t, {}, at(trial, 0.8, 15));
  ASSERT_TRUE(s.holding());
  ASSERT_EQ(s.wish(0), 0);
  // Now never idle at the best: one period is not enough, K are.
  for (int i = 0; i + 1 < p.enter_periods; ++i) {
    EXPECT_FALSE(s.update(t, {}, at(0, 1.0)));
    EXPECT_EQ(s.wish(0), 0);
  }
  EXPECT_TRUE(s.update(t, {}, at(0, 1.0)));
  const uint8_t again = s.profile_ix();
  EXPECT_GT(again, 0);
  // The same trial, judged as on an overloaded core: less CPU per completion at the same rate
  // within its noise is a gain.
  s.update(t, {}, at(again, 0.8, 15));
  EXPECT_GT(s.best_ix(), 0);
  // Once an episode: a best that later leaves the core never idle again is held.
  while (!s.holding()) s.update(t, {}, at(s.profile_ix(), 0.8, 15));
  const uint8_t held = s.wish(0);
  for (int i = 0; i < 3 * p.enter_periods; ++i) s.update(t, {}, at(held, 1.0));
  EXPECT_TRUE(s.holding());
  EXPECT_EQ(s.wish(0), held);
}

// A best taken while a backlog drained (each step up drained it faster) stays above what the load
// needs once it has drained: the core has idle left there, and the leave projection, at the
// latency objective's profile 0, sees none. The profile below is measured and kept while the
// latency objective on the measured busy and batch improves; a step down into overload, or one
// projected into pressure, is not kept or not tried (sweep-1-080 over 2 s: 256 us of
// moderation held at busy 0.75, p99 1.8x the oracle's).
TEST(SaturationPolicy, AnOverBatchedBestWithIdleLeftIsMeasuredOneProfileDown) {
  const ModelTable t = rdma_table();
  // At profile ix: `completions` a period, batching 2 + 4 min(ix, 7), at `busy`.
  auto at = [](uint8_t ix, uint64_t completions, double busy) {
    SaturationInput in = busy_period(busy, 0);
    in.completions = completions;
    in.interrupts = in.polls = completions / (2 + 4 * uint64_t{std::min<uint8_t>(ix, 7)});
    return in;
  };
  // The drain: never idle, each profile up to 5 drains faster. The climb holds 7 (32 us, 16).
  auto drain = [&](SaturationPolicy& s) {
    for (int i = 0; i < 50 && !(s.saturated() && s.holding()); ++i) {
      const uint8_t ix = s.wish(0);
      s.update(t, {}, at(ix, 1000 + 100 * uint64_t{std::min<uint8_t>(ix, 5)}, 1.0));
    }
  };
  // Then 1000 a period at any profile from 4 up, the core busy `busy_of(ix)`; returns the wish
  // changes over `periods`.
  auto drained = [&](SaturationPolicy& s, int periods, auto busy_of) {
    int changes = 0;
    for (int i = 0; i < periods; ++i) {
      const uint8_t ix = s.wish(0);
      s.update(t, {}, at(ix, 1000, busy_of(ix)));
      changes += s.wish(0) != ix;
    }
    return changes;
  };
  auto idle_left = [](uint8_t ix) {
    return ix >= 7 ? 0.70 : ix == 6 ? 0.72 : ix == 5 ? 0.74 : 1.0;
  };

  SaturationParams off;
  off.descend = false;
  SaturationPolicy held(off);
  drain(held);
  ASSERT_TRUE(held.holding());
  ASSERT_EQ(held.wish(0), 7);
  EXPECT_EQ(drained(held, 200, idle_left), 0);
  EXPECT_EQ(held.wish(0), 7);

  // 7 -> 6 (16 us, 16): the delay predicted falls from 14 to 5 us at 50k/s, the sojourn rises by
  // 0.3 us: kept. 6 -> 5 (16 us, 8): the same delay at more busy: back to 6, and no more descents.
  SaturationPolicy s;
  drain(s);
  ASSERT_TRUE(s.holding());
  ASSERT_EQ(s.wish(0), 7);
  const SaturationParams p;
  for (int i = 0; i + 1 < p.enter_periods; ++i) EXPECT_FALSE(s.update(t, {}, at(7, 1000, 0.7)));
  EXPECT_TRUE(s.update(t, {}, at(7, 1000, 0.7)));
  EXPECT_EQ(s.profile_ix(), 6);
  EXPECT_EQ(s.best_ix(), 7);
  EXPECT_EQ(drained(s, 200, idle_left), 2);  // 6 -> 5 and back
  EXPECT_TRUE(s.holding());
  EXPECT_EQ(s.wish(0), 6);
  EXPECT_TRUE(s.saturated());
  EXPECT_EQ(s.descents().kept, 1u);
  EXPECT_EQ(s.descents().back, 1u);

  // The profile below overloads the core: back to the best, for good.
  SaturationPolicy over;
  drain(over);
  ASSERT_EQ(over.wish(0), 7);
  auto overloads = [](uint8_t ix) { return ix >= 7 ? 0.70 : 1.0; };
  EXPECT_EQ(drained(over, 200, overloads), 2);
  EXPECT_EQ(over.wish(0), 7);

  // Busy 0.96 at the best: one profile down is projected into pressure, no trial.
  SaturationPolicy busy;
  drain(busy);
  ASSERT_EQ(busy.wish(0), 7);
  EXPECT_EQ(drained(busy, 200, [](uint8_t) { return 0.96; }), 0);
  EXPECT_EQ(busy.wish(0), 7);
  EXPECT_EQ(busy.descents().kept + busy.descents().back, 0u);
}

// The caller's change budget may hold the rule's wish back. A period the core ran at the profile
// before is no measurement of the trial: judged as one, it measured "no gain" and the rule held
// the profile that left the core never idle for good (sweep-1-019 run for 5 s: p99 228 ms).
TEST(SaturationPolicy, APeriodWhoseWishWasHeldBackIsNoMeasurementOfTheTrial) {
  const ModelTable t = rdma_table();
  // The profile the core ends at when the caller holds the first `held_back` changes of the wish
  // and tells the rule (`told`) whether its wish was in force.
  auto run = [&](int held_back, bool told) {
    SaturationPolicy s;
    uint8_t running = 0;
    int held = 0;
    for (int i = 0; i < 60; ++i) {
      SaturationInput in = overloaded_period(1000, running);  // never idle, batching answers
      in.wish_in_force = !told || !s.overrides() || running == s.profile_ix();
      s.update(t, {}, in);
      const uint8_t wish = s.overrides() ? s.profile_ix() : 0;
      if (wish != running && held++ >= held_back) running = wish;
    }
    EXPECT_TRUE(s.saturated());
    return running;
  };
  const uint8_t free_climb = run(0, true);
  EXPECT_GE(free_climb, 4);
  EXPECT_EQ(run(3, true), free_climb);
  // Not told: the held-back periods are judged as the trial's, which measured the entry's own
  // batch, and the rule holds the entry's profile.
  EXPECT_EQ(run(3, false), 0);
}

// On an overloaded core a trial that cuts the CPU per completion but measures less rate in its
// one period is measured one period more: the rate over both decides. (100k completions a period:
// the counting noise, 2 sigma of 0.4 %, is below g.)
TEST(SaturationPolicy, LessRateWithLessCpuOnAnOverloadedCoreIsMeasuredTwice) {
  const ModelTable t = rdma_table();
  for (const uint64_t second : {uint64_t{103'000}, uint64_t{95'000}}) {
    SCOPED_TRACE(second);
    SaturationPolicy s;
    const uint8_t j = enter_overloaded(s, t);
    ASSERT_GT(j, 0);
    // 5 % less rate, CPU per completion down by a third: one period more.
    EXPECT_FALSE(s.update(t, {}, overloaded_period(95'000, j)));
    EXPECT_FALSE(s.holding());
    EXPECT_EQ(s.profile_ix(), j);
    s.update(t, {}, overloaded_period(second, j));
    if (second == 103'000) {
      // 1 % less over the two periods: within g, the CPU verdict holds, j is the best.
      EXPECT_GE(s.wish(0), j);
    } else {
      // 5 % less over both: worse on a saturated core, back to the best and hold.
      EXPECT_TRUE(s.holding());
      EXPECT_EQ(s.wish(0), 0);
    }
  }
}

// Raising the moderation of an open loop holds back its rate times the added delay once: the
// trial's first period dips, the extra period polls the offered rate again. When that period left
// the core idle time, it alone decides, and the trial is a gain; judged over both periods, the
// core went back to the livelocked profile and stayed never idle (sweep-1-044).
TEST(SaturationPolicy, AnOverloadedCoreJudgesTheExtraPeriodAloneWhenItLeftIdleTime) {
  const ModelTable t = rdma_table();
  struct Case {
    double busy;      // the extra period's
    uint64_t second;  // its completions (100k at the best)
    bool gain;
  };
  for (const Case c :
       {Case{0.8, 99'000, true}, Case{1.0, 99'000, false}, Case{0.8, 90'000, false}}) {
    SCOPED_TRACE(testing::Message() << c.busy << " " << c.second);
    SaturationPolicy s;
    const uint8_t j = enter_overloaded(s, t);
    ASSERT_GT(j, 0);
    // 10 % less in the first period, with a third less CPU per completion: one period more.
    EXPECT_FALSE(s.update(t, {}, overloaded_period(90'000, j)));
    SaturationInput extra = overloaded_period(c.second, j);
    extra.busy_ns = static_cast<uint64_t>(c.busy * kPeriod);
    s.update(t, {}, extra);
    if (c.gain) {
      EXPECT_GE(s.wish(0), j);
      EXPECT_FALSE(s.holding());  // the climb goes on from j
    } else {
      // Never idle (the rate over both periods, 5.5 % less, decides) or 10 % less again: worse
      // on a core still saturated, back to the best and hold.
      EXPECT_TRUE(s.holding());
      EXPECT_EQ(s.wish(0), 0);
    }
  }
}

// An overloaded open loop is polled at its offered rate whatever the profile, so the rate of a
// period moves by its counting noise alone: 4,500 completions a period move it by 1.5 % (one
// sigma). A trial 3.3 % below a best whose pressure periods drew high is no loss there; with no
// noise allowance (overload_sigmas 0) the core went back to 0 and held it, never idle
// (sweep-1-003).
TEST(SaturationPolicy, AnOverloadedCoresRateDipWithinItsCountingNoiseIsNoLoss) {
  const ModelTable t = rdma_table();
  for (const double sigmas : {2.0, 0.0}) {
    SCOPED_TRACE(sigmas);
    SaturationParams p;
    p.overload_sigmas = sigmas;
    SaturationPolicy s(p);
    const uint8_t j = enter_overloaded(s, t, 4'600);
    ASSERT_TRUE(s.saturated());
    ASSERT_GT(j, 0);
    for (int i = 0; i < 2 && s.profile_ix() == j && !s.holding(); ++i) {
      s.update(t, {}, overloaded_period(4'450, j));
    }
    if (sigmas > 0) {
      EXPECT_GE(s.wish(0), j);  // a gain: j is the best, the climb goes on from it
    } else {
      EXPECT_TRUE(s.holding());
      EXPECT_EQ(s.wish(0), 0);
    }
  }
}

// Within the noise, on a core the best left never idle, a trial that costs less CPU per
// completion is a gain even at 1 % less rate (both rates are the offered rate) and the climb goes
// on from it; one that costs more is not. On a core with idle left, the higher rate holds.
TEST(SaturationPolicy, WithinTheNoiseAnOverloadedCoreClimbsOnWhatCostsLessCpu) {
  const ModelTable t = rdma_table();
  auto period = [](double busy, uint64_t completions, uint64_t interrupts) {
    SaturationInput in = busy_period(busy, 0);
    in.completions = completions;
    in.interrupts = in.polls = interrupts;
    return in;
  };
  struct Case {
    double busy;
    uint64_t trial_interrupts;  // 50k at the best: 2 completions per interrupt
    bool gain;
  };
  for (const Case c :
       {Case{1.0, 48'500, true}, Case{1.0, 50'500, false}, Case{0.98, 48'500, false}}) {
    SCOPED_TRACE(testing::Message() << c.busy << " " << c.trial_interrupts);
    SaturationPolicy s;
    for (int i = 0; i < SaturationParams{}.enter_periods; ++i) {
      s.update(t, {}, period(c.busy, 100'000, 50'000));
    }
    ASSERT_TRUE(s.saturated());
    const uint8_t j = s.profile_ix();
    ASSERT_GT(j, 0);
    // 1 % less rate (within g); 3 % fewer interrupts per completion (1.5 % less CPU per
    // completion at the default costs, under g: no CPU gain by itself) or 1 % more.
    s.update(t, {}, period(c.busy, 99'000, c.trial_interrupts));
    if (c.gain) {
      EXPECT_GE(s.wish(0), j);
      EXPECT_GT(s.profile_ix(), j);  // the next jump: the first went halfway
      EXPECT_FALSE(s.holding());
    } else {
      EXPECT_TRUE(s.holding());
      EXPECT_EQ(s.wish(0), 0);
    }
  }
}

// The controller restarts a core's rule when the core loses its model queues: a new instance's
// state, the counters kept (they are exported as totals since the daemon started).
TEST(SaturationPolicy, RestartStartsAgainAndKeepsTheCounters) {
  const ManyQueues q;
  const SaturationParams p;
  SaturationPolicy s;
  for (int i = 0; i < p.enter_periods; ++i) s.update(q.t, q.cost, q.period(0));
  ASSERT_TRUE(s.probing());
  s.update(q.t, q.cost, q.period(0, 1.0));  // QD~1: passive, no probe for qd1_retry_ms
  ASSERT_TRUE(s.saturated());
  ASSERT_EQ(s.episodes(), 1u);
  ASSERT_EQ(s.probes().qd1, 1u);
  s.restart();
  EXPECT_FALSE(s.saturated());
  EXPECT_EQ(s.episodes(), 1u);
  EXPECT_EQ(s.probes().qd1, 1u);
  // As new: the pressure streak counts from zero, and the probe's wait is gone with the rest.
  for (int i = 0; i + 1 < p.enter_periods; ++i) s.update(q.t, q.cost, q.period(0));
  EXPECT_FALSE(s.saturated());
  s.update(q.t, q.cost, q.period(0));
  EXPECT_TRUE(s.saturated());
  EXPECT_TRUE(s.probing());
  EXPECT_EQ(s.episodes(), 2u);
}

TEST(SaturationPolicy, NonPositivePeriodDecidesNothing) {
  const ModelTable t = rdma_table();
  SaturationPolicy s;
  SaturationInput in = busy_period(1.0);
  in.dt_ns = 0;
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(s.update(t, {}, in));
  in.dt_ns = -1;
  EXPECT_FALSE(s.update(t, {}, in));
  EXPECT_FALSE(s.saturated());
}

TEST(SaturationPolicy, NoAllocationPerUpdate) {
  const ModelTable t = rdma_table();
  SynthCore core;
  core.offered = 600'000;
  const SaturationInput in = core.period(t, 0, 0);
  SaturationPolicy s;
  const uint64_t before = dimctl::testing::allocations_so_far();
  for (int i = 0; i < 1000; ++i) s.update(t, core.cost, in);
  EXPECT_EQ(dimctl::testing::allocations_so_far(), before);
}

}  // namespace
}  // namespace dim
