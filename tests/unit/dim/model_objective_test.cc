// The efficiency objective (objective.h): ModelTable's map against a brute force over the
// profiles with the cost model's predict(), written here from the rule's statement, and
// ModelPolicy on that map (settling, hysteresis in a non-monotone map).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "dim/cost_model.h"
#include "dim/model_policy.h"
#include "dim/objective.h"
#include "dim/profile.h"

namespace dim {
namespace {

constexpr int64_t kPeriod = 20'000'000;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  const char* name;
  std::span<const Profile> profiles;
  ProfileCount count;
  TimerMode timer;
};

const Case kCases[] = {
    {"eqe", kNetRxEqeProfiles, ProfileCount::kPackets, TimerMode::kRateLimit},
    {"cqe", kNetRxCqeProfiles, ProfileCount::kPackets, TimerMode::kIdleGap},
    {"rdma", kRdmaProfiles, ProfileCount::kCompletions, TimerMode::kRateLimit},
    {"rdma-absolute", kRdmaProfiles, ProfileCount::kCompletions, TimerMode::kAbsolute},
};

ModelParams efficiency(double budget_ns, TimerMode timer, double min_saving = 0.05) {
  ModelParams p;
  p.timer = timer;
  p.objective = Objective::kEfficiency;
  p.latency_budget_ns = budget_ns;
  p.min_saving = min_saving;
  return p;
}

ModelTable table(const Case& c, const ModelParams& p, uint8_t lo = 0, uint8_t hi = 255) {
  return ModelTable(c.profiles, c.count, p, lo, hi);
}

// The brute force: every profile's prediction at one rate, then the rule as stated.
struct Brute {
  std::vector<Prediction> pr;
  size_t base = 0;     // the latency profile: N <= 1 or T = 0, else the shortest timer
  size_t latency = 0;  // least L, ties within 1 % + 1 ns to the lower index
  size_t efficiency = 0;
};

Brute brute(const Case& c, const ModelParams& p, double rate) {
  Brute b;
  const size_t n = c.profiles.size();
  auto count_of = [&](const Profile& pf) {
    return c.count == ProfileCount::kPackets ? pf.pkts : pf.comps;
  };
  auto key = [&](size_t i) {
    const Profile& pf = c.profiles[i];
    return count_of(pf) == 1 || pf.usec == 0 ? 0u : pf.usec;
  };
  for (size_t i = 0; i < n; ++i) {
    b.pr.push_back(predict(p.timer, c.profiles[i].usec, count_of(c.profiles[i]), rate, p.cost));
    if (key(i) < key(b.base)) b.base = i;
  }
  std::vector<double> lat;
  for (const Prediction& x : b.pr) lat.push_back(x.latency_ns);
  const double least = *std::min_element(lat.begin(), lat.end());
  if (least == kInf) {
    b.latency = 0;
    for (size_t i = 0; i < n; ++i)
      if (b.pr[i].batch > b.pr[b.latency].batch) b.latency = i;
  } else {
    while (lat[b.latency] > least * 1.01 + 1) ++b.latency;
  }
  b.efficiency = b.latency;
  if (!b.pr[b.base].feasible) return b;
  auto within = [&](size_t i) {
    return b.pr[i].feasible && lat[i] - lat[b.base] <= p.latency_budget_ns;
  };
  const size_t ref = within(b.latency) ? b.latency : b.base;
  b.efficiency = ref;
  std::vector<size_t> savers;
  for (size_t i = 0; i < n; ++i)
    if (within(i) &&
        b.pr[i].cpu_per_completion_ns <= b.pr[ref].cpu_per_completion_ns * (1 - p.min_saving))
      savers.push_back(i);
  if (savers.empty()) return b;
  double least_cpu = kInf;
  for (size_t i : savers) least_cpu = std::min(least_cpu, b.pr[i].cpu_per_completion_ns);
  std::vector<size_t> cheap;
  for (size_t i : savers)
    if (b.pr[i].cpu_per_completion_ns * (1 - p.min_saving) <= least_cpu) cheap.push_back(i);
  double best = kInf;
  for (size_t i : cheap) best = std::min(best, lat[i]);
  for (size_t i : cheap) {
    if (lat[i] <= best * 1.01 + 1) {
      b.efficiency = i;
      break;
    }
  }
  return b;
}

// Rates where the brute force is the same 5 % either side: the table searches a grid of 9 %
// steps, and finds each boundary on it to ~0.1 %.
bool steady(const Case& c, const ModelParams& p, double rate) {
  const size_t e = brute(c, p, rate).efficiency;
  for (double f : {0.95, 0.98, 1.02, 1.05})
    if (brute(c, p, rate * f).efficiency != e) return false;
  return true;
}

TEST(ModelObjective, EfficiencyMatchesTheBruteForce) {
  for (const Case& c : kCases) {
    for (double budget : {0.0, 10e3, 25e3, 50e3, 100e3, 1e9}) {
      for (CostParams cost : {CostParams{}, CostParams{500, 3000, 0.95, 1}}) {
        ModelParams p = efficiency(budget, c.timer);
        p.cost = cost;
        const ModelTable t = table(c, p);
        int checked = 0;
        for (double r = 100; r < 3e6; r *= 1.04) {
          // A saturated base is the latency objective's (ASaturatedBaseKeepsTheLatencyChoice).
          if (!brute(c, p, r).pr[brute(c, p, r).base].feasible || !steady(c, p, r)) continue;
          ASSERT_EQ(t.pick(r), brute(c, p, r).efficiency)
              << c.name << " budget " << budget << " C_irq " << cost.interrupt_cost_ns << " at "
              << r << "/s";
          ++checked;
        }
        EXPECT_GT(checked, 150) << c.name;
      }
    }
  }
}

TEST(ModelObjective, ZeroBudgetIsTheLatencyPickAtLowRatesAndNeverAddsLatency) {
  for (const Case& c : kCases) {
    const ModelParams p = efficiency(0, c.timer);
    const ModelTable t = table(c, p);
    for (double r = 1; r < 5000; r *= 1.05) {
      ASSERT_EQ(t.pick(r), t.latency_pick(r)) << c.name << " at " << r;
      ASSERT_EQ(t.pick(r), brute(c, p, r).latency) << c.name << " at " << r;
    }
    for (double r = 100; r < 3e6; r *= 1.04) {
      if (!steady(c, p, r)) continue;
      const Brute b = brute(c, p, r);
      if (!b.pr[b.base].feasible) continue;
      EXPECT_LE(b.pr[t.pick(r)].latency_ns, b.pr[b.base].latency_ns) << c.name << " at " << r;
    }
  }
}

TEST(ModelObjective, AHugeBudgetPicksTheLeastCpuFeasibleProfile) {
  for (const Case& c : kCases) {
    for (double min_saving : {0.0, 0.05}) {
      const ModelParams p = efficiency(1e12, c.timer, min_saving);
      const ModelTable t = table(c, p);
      int checked = 0;
      for (double r = 100; r < 3e6; r *= 1.04) {
        if (!steady(c, p, r)) continue;
        const Brute b = brute(c, p, r);
        if (!b.pr[b.base].feasible) continue;
        double least = kInf;
        for (const Prediction& x : b.pr)
          if (x.feasible) least = std::min(least, x.cpu_per_completion_ns);
        const Prediction& got = b.pr[t.pick(r)];
        ASSERT_TRUE(got.feasible) << c.name << " at " << r;
        if (min_saving == 0) {
          // Equal to rounding (two profiles that never reach their count).
          ASSERT_LE(got.cpu_per_completion_ns, least * (1 + 1e-9)) << c.name << " at " << r;
        } else if (got.cpu_per_completion_ns > least) {
          // Kept for a near-tie: what the least-CPU profile would save is below min_saving, of
          // the pick's CPU or of the latency choice's.
          ASSERT_TRUE(least > got.cpu_per_completion_ns * (1 - min_saving) ||
                      least > b.pr[b.latency].cpu_per_completion_ns * (1 - min_saving))
              << c.name << " at " << r;
        }
        ++checked;
      }
      EXPECT_GT(checked, 50) << c.name;
    }
  }
}

TEST(ModelObjective, NearTiesKeepTheLatencyChoice) {
  // At low rates a long timer batches a little: a saving of a few percent, not worth a move.
  const Case& c = kCases[0];
  int near_ties = 0;
  for (double r = 200; r < 20'000; r *= 1.05) {
    const ModelParams strict = efficiency(1e9, c.timer, 0.05);
    const Brute b = brute(c, efficiency(1e9, c.timer, 0), r);
    const double saving =
        1 - b.pr[b.efficiency].cpu_per_completion_ns / b.pr[b.latency].cpu_per_completion_ns;
    if (saving <= 0.005 || saving >= 0.045 || !steady(c, strict, r)) continue;
    ++near_ties;
    EXPECT_EQ(table(c, strict).pick(r), b.latency) << r;
    EXPECT_EQ(table(c, efficiency(1e9, c.timer, 0)).pick(r), b.efficiency) << r;
    EXPECT_NE(b.efficiency, b.latency) << r;
  }
  EXPECT_GT(near_ties, 3);
  // Nor is a profile that saves less than min_saving over the latency choice taken because a
  // still cheaper one, out of reach or not, exists: every move saves min_saving.
  for (const Case& k : kCases) {
    for (double budget : {0.0, 25e3, 50e3, 100e3, 1e9}) {
      const ModelParams p = efficiency(budget, k.timer);
      const ModelTable t = table(k, p);
      for (double r = 100; r < 3e5; r *= 1.04) {
        const Brute b = brute(k, p, r);
        if (!b.pr[b.base].feasible || !steady(k, p, r) || t.pick(r) == b.latency) continue;
        EXPECT_LE(b.pr[t.pick(r)].cpu_per_completion_ns,
                  b.pr[b.latency].cpu_per_completion_ns * 0.95)
            << k.name << " budget " << budget << " at " << r;
      }
    }
  }
}

TEST(ModelObjective, ASaturatedBaseKeepsTheLatencyChoice) {
  for (const Case& c : kCases) {
    const ModelParams p = efficiency(25e3, c.timer);
    const ModelTable t = table(c, p);
    int saturated = 0;
    for (double r = 1e5; r < 3e6; r *= 1.04) {
      const Brute b = brute(c, p, r);
      if (b.pr[b.base].feasible || !steady(c, p, r)) continue;
      ++saturated;
      EXPECT_EQ(t.pick(r), t.latency_pick(r)) << c.name << " at " << r;
    }
    EXPECT_GT(saturated, 10) << c.name;
  }
}

TEST(ModelObjective, LatencyIgnoresTheBudgetAndHasNoSegments) {
  for (const Case& c : kCases) {
    ModelParams with_budget;
    with_budget.timer = c.timer;
    with_budget.latency_budget_ns = 50e3;
    with_budget.min_saving = 0.3;
    ModelParams plain;
    plain.timer = c.timer;
    const ModelTable a = table(c, with_budget), b = table(c, plain);
    EXPECT_EQ(a.segments(), 0);
    for (uint8_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.threshold(i), b.threshold(i)) << c.name;
  }
}

TEST(ModelObjective, TheMapIsNotMonotoneAndTheSegmentsSayWhere) {
  // EQE at 25 µs: the 64 µs timer at a few thousand completions per second, no moderation again
  // once its delay leaves the budget, the 8 µs timer further up.
  const Case& c = kCases[0];
  const ModelTable t = table(c, efficiency(25e3, c.timer));
  ASSERT_GE(t.segments(), 3);
  bool falls = false;
  for (uint8_t s = 0; s + 1 < t.segments(); ++s) {
    EXPECT_LT(t.segment_from(s), t.segment_from(s + 1));
    EXPECT_NE(t.segment_ix(s), t.segment_ix(s + 1));
    falls = falls || t.segment_ix(s + 1) < t.segment_ix(s);
    const double mid = std::sqrt(std::max(t.segment_from(s), 1.0) * t.segment_from(s + 1));
    EXPECT_EQ(t.pick(mid), t.segment_ix(s));
  }
  EXPECT_TRUE(falls);
  for (const Case& k : kCases) {
    for (double budget : {0.0, 25e3, 50e3, 100e3, 1e9}) {
      EXPECT_LE(table(k, efficiency(budget, k.timer)).segments(), 10) << k.name << " " << budget;
    }
  }
}

TEST(ModelObjective, BoundsAreTheTable) {
  // RDMA within [2, 6]: the brute force over those five profiles alone, whose latency profile
  // (the base) is index 2, (2 µs, 4).
  const Case whole = kCases[2];
  const Case bounded{"rdma[2..6]", whole.profiles.subspan(2, 5), whole.count, whole.timer};
  for (double budget : {0.0, 25e3, 100e3}) {
    const ModelParams p = efficiency(budget, whole.timer);
    const ModelTable t = table(whole, p, 2, 6);
    int checked = 0;
    for (double r = 1; r < 1e8; r *= 1.04) {
      ASSERT_GE(t.pick(r), 2);
      ASSERT_LE(t.pick(r), 6);
      const Brute b = brute(bounded, p, r);
      if (!b.pr[b.base].feasible || !steady(bounded, p, r)) continue;
      ASSERT_EQ(t.pick(r), 2 + b.efficiency) << budget << " at " << r;
      ++checked;
    }
    EXPECT_GT(checked, 100);
  }
}

// ---------------------------------------------------------------------------------------------
// ModelPolicy on the efficiency map.

ModelInput period(double rate, double cpe = 4) {
  ModelInput in;
  in.dt_ns = kPeriod;
  in.completions = static_cast<uint64_t>(std::llround(rate * kPeriod / 1e9));
  in.events = static_cast<uint64_t>(std::llround(static_cast<double>(in.completions) / cpe));
  return in;
}

TEST(ModelObjective, APolicySettlesOnTheMapInEverySegment) {
  for (const Case& c : kCases) {
    const ModelTable t = table(c, efficiency(25e3, c.timer));
    for (uint8_t s = 0; s < t.segments(); ++s) {
      const double from = std::max(t.segment_from(s), 100.0);
      const double to = s + 1 < t.segments() ? t.segment_from(s + 1) : 1e7;
      // The band of margins, [λ/1.25, λ/0.9], inside the segment.
      const double r = from * 1.26;
      if (r / 0.89 > to) continue;
      ModelPolicy m(t);
      for (int i = 0; i < 20; ++i) m.update(t, period(r));
      EXPECT_EQ(m.profile_ix(), t.segment_ix(s)) << c.name << " at " << r;
    }
  }
}

TEST(ModelObjective, ALoadWobblingAcrossABoundaryDoesNotFlap) {
  const Case& c = kCases[0];
  const ModelTable t = table(c, efficiency(25e3, c.timer));
  for (uint8_t s = 1; s < t.segments(); ++s) {
    const double edge = t.segment_from(s);
    ModelPolicy m(t);
    for (int i = 0; i < 10; ++i) m.update(t, period(edge * 0.97));
    const uint32_t settled = m.changes();
    for (int i = 0; i < 100; ++i) m.update(t, period(edge * (i % 2 ? 1.03 : 0.97)));
    EXPECT_EQ(m.changes(), settled) << "boundary " << edge;
  }
}

TEST(ModelObjective, ALoadTwicePastASegmentMovesUpInOnePeriod) {
  // RDMA at 25 µs: (32 µs, 16), index 7, from ~13k/s until the base saturates.
  const Case& c = kCases[2];
  const ModelTable t = table(c, efficiency(25e3, c.timer));
  ASSERT_EQ(t.pick(1000), 0);
  ASSERT_EQ(t.pick(40'000), 7);
  ASSERT_EQ(t.pick(100'000), 7);
  ModelPolicy m(t);
  for (int i = 0; i < 5; ++i) m.update(t, period(1000));
  ASSERT_EQ(m.profile_ix(), 0);
  EXPECT_TRUE(m.update(t, period(100'000)));  // the band [50k/s, 80k/s]: all index 7
  EXPECT_EQ(m.profile_ix(), 7);
  ModelPolicy slow(t);
  for (int i = 0; i < 5; ++i) slow.update(t, period(1000));
  EXPECT_FALSE(slow.update(t, period(20'000)));  // 1.5×: two periods
  EXPECT_TRUE(slow.update(t, period(20'000)));
  EXPECT_EQ(slow.profile_ix(), 7);
}

TEST(ModelObjective, AHigherLoadThatLeavesTheBudgetMovesDownAtOnce) {
  // EQE at 25 µs: the 64 µs timer (index 2) where it fits, index 0 where its delay would not.
  const Case& c = kCases[0];
  const ModelTable t = table(c, efficiency(25e3, c.timer));
  double at2 = 0, at0 = 0;
  for (uint8_t s = 0; s + 1 < t.segments(); ++s) {
    if (t.segment_ix(s) == 2 && t.segment_ix(s + 1) == 0) {
      at2 = std::sqrt(t.segment_from(s) * t.segment_from(s + 1));
      at0 = t.segment_from(s + 1) * 1.3;
    }
  }
  ASSERT_GT(at2, 0);
  ASSERT_EQ(t.pick(at0), 0);
  ModelPolicy m(t);
  for (int i = 0; i < 10; ++i) m.update(t, period(at2));
  ASSERT_EQ(m.profile_ix(), 2);
  EXPECT_TRUE(m.update(t, period(at0)));
  EXPECT_EQ(m.profile_ix(), 0);
}

// QD~1 under efficiency: one completion per interrupt at the latency profile is what an open
// loop shows too, so it is evidence only at a profile the model expects to batch.
TEST(ModelObjective, OneCompletionPerInterruptAtTheLatencyProfileDoesNotHoldItThere) {
  const Case& c = kCases[0];  // EQE, 50 µs: the 64 µs timer at 10k/s
  const ModelTable t = table(c, efficiency(50e3, c.timer));
  ASSERT_EQ(t.pick(10'000), 2);
  ModelPolicy m(t);
  // An open loop: one completion per interrupt at the latency profile, the predicted batch at 2.
  const double batch = t.prediction(2, 10'000).batch;
  ASSERT_GT(batch, 1.1);
  for (int i = 0; i < 5; ++i) m.update(t, period(10'000, m.profile_ix() == 2 ? batch : 1.0));
  EXPECT_EQ(m.profile_ix(), 2);
  // The latency objective keeps its rule: at the latency profile whatever the rate.
  ModelParams lp;
  const ModelTable lt = table(c, lp);
  ModelPolicy l(lt);
  for (int i = 0; i < 5; ++i) l.update(lt, period(400'000, 1.0));
  EXPECT_EQ(l.profile_ix(), lt.latency_ix());
}

TEST(ModelObjective, OneCompletionPerInterruptWhereTheProfileShouldBatchGoesToTheLatencyProfile) {
  const Case& c = kCases[0];  // EQE, 100 µs: the 128 µs timer at 50k/s, predicted batch ~6.4
  const ModelTable t = table(c, efficiency(100e3, c.timer));
  ASSERT_EQ(t.pick(50'000), 3);
  ModelPolicy m(t);
  for (int i = 0; i < 5; ++i) m.update(t, period(50'000));
  ASSERT_EQ(m.profile_ix(), 3);
  EXPECT_TRUE(m.update(t, period(50'000, 1.0)));
  EXPECT_EQ(m.profile_ix(), t.latency_ix());
  EXPECT_EQ(m.ceiling_ix(), t.latency_ix() + 1);
  // The map still asks for 3: the QD~1 move holds the latency profile as a bounce does (2 s,
  // doubling), each retry finds one completion per interrupt again and comes back at once.
  const uint32_t before = m.changes();
  int at_latency = 0;
  for (int i = 0; i < 50 * 10; ++i) {  // 10 s
    m.update(t, period(50'000, 1.0));
    at_latency += m.profile_ix() == t.latency_ix();
  }
  EXPECT_LE(m.changes() - before, 4u);  // retries after 2 s and 4 s more
  EXPECT_GE(at_latency, 50 * 10 - 2);
}

// Below qd1_from(): at 10k/s the 64 µs EQE timer is predicted to batch ~1.17, under the 1.875
// that counts one completion per interrupt as QD~1 outright. A flow that shows no batching there
// at all (a closed loop at QD~1, throttled by the timer) is QD~1 still (unbatched()); one that
// batches as predicted, or half as much, is not.
TEST(ModelObjective, NoneOfThePredictedBatchingBelowQd1FromGoesToTheLatencyProfile) {
  const Case& c = kCases[0];
  const ModelTable t = table(c, efficiency(50e3, c.timer));
  ASSERT_EQ(t.pick(10'000), 2);
  ASSERT_GT(t.qd1_from(2), 10'000);
  const double batch = t.prediction(2, 10'000).batch;
  ASSERT_GT(batch, 1 + ModelTable::kQd1MinGain);
  ASSERT_LT(batch, ModelTable::kQd1BatchFactor * 1.25);
  EXPECT_TRUE(t.unbatched(2, 10'000, 200, 200));
  EXPECT_TRUE(t.unbatched(2, 10'000, 200, 200 * (1 + 0.5 * (batch - 1)) - 0.1));
  EXPECT_FALSE(t.unbatched(2, 10'000, 200, 200 * (1 + 0.5 * (batch - 1)) + 0.1));
  EXPECT_FALSE(t.unbatched(2, 10'000, 200, 200 * batch));
  EXPECT_FALSE(t.unbatched(t.latency_ix(), 10'000, 200, 200)) << "an open loop shows it there";
  EXPECT_FALSE(t.unbatched(2, 10'000, 8, 8)) << "too few events to see the missing batch";
  ModelPolicy m(t);
  for (int i = 0; i < 5; ++i) m.update(t, period(10'000, m.profile_ix() == 2 ? batch : 1.0));
  ASSERT_EQ(m.profile_ix(), 2);
  EXPECT_TRUE(m.update(t, period(10'000, 1.0)));
  EXPECT_EQ(m.profile_ix(), t.latency_ix());
  EXPECT_EQ(m.ceiling_ix(), t.latency_ix() + 1);
}

}  // namespace
}  // namespace dim
