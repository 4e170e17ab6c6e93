// CoreCosts: per-CPU loads of a step, and each core's period measured from its CPU times.
#include "dimctl/controller/core_costs.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace dimctl::controller {
namespace {

constexpr int64_t kPeriod = 50'000'000;  // 50 ms

// CPU times after `hard_ns` of hard-IRQ and `soft_ns` of NET_RX time, every run timed.
seam::CpuTimes times(uint64_t hard_runs, uint64_t hard_ns, uint64_t soft_runs, uint64_t soft_ns) {
  seam::CpuTimes t;
  t.hardirq_count = t.hardirq_timed = hard_runs;
  t.hardirq_ns = hard_ns;
  t.softirq_net_rx_count = t.softirq_net_rx_timed = soft_runs;
  t.softirq_net_rx_ns = soft_ns;
  return t;
}

TEST(CoreCosts, LoadsSumWithinAStepAndStartAgainInTheNext) {
  CoreCosts c;
  c.add_load(3, 7, 100, 10, 12, 1);
  c.add_load(3, 7, 50, 5, 6, 0);
  EXPECT_EQ(c.load(3).step, 7u);
  EXPECT_EQ(c.load(3).packets, 150u);
  EXPECT_EQ(c.load(3).events, 15u);
  EXPECT_EQ(c.load(3).polls, 18u);
  EXPECT_EQ(c.load(3).exhausted, 1u);
  c.add_load(3, 8, 1, 1, 1, 0);
  EXPECT_EQ(c.load(3).packets, 1u);
  EXPECT_EQ(c.load(3).events, 1u);
  EXPECT_EQ(c.load(0).step, 0u);  // grown, never stamped
}

TEST(CoreCosts, NoCpuTimesNoCores) {
  CoreCosts c;
  seam::Snapshot snap;
  snap.cpus.resize(2);
  c.measure(snap, 0, 1, {});
  EXPECT_EQ(c.size(), 2u);
  EXPECT_FALSE(c.empty());
  snap.cpus.clear();
  c.measure(snap, kPeriod, 2, {});
  EXPECT_TRUE(c.empty());
  seam::ControllerState st;
  c.fill_views(st);
  EXPECT_TRUE(st.cores.empty());
}

TEST(CoreCosts, APeriodIsTheCpuTimesAgainstTheLastAndThisStepsLoads) {
  CoreCosts c;
  seam::Snapshot snap;
  snap.cpus = {times(0, 0, 0, 0), times(0, 0, 0, 0)};
  c.measure(snap, 0, 1, {});  // the baseline
  // CPU 1: 1000 interrupts of 2 us, 1000 softirqs of 8 us in 50 ms, 20000 packets, 1000 polls of
  // which 100 used their budget; CPU 0 idle. A load stamped with another step does not count.
  snap.cpus = {times(0, 0, 0, 0), times(1000, 2'000'000, 1000, 8'000'000)};
  c.add_load(0, 1, 999, 999, 999, 0);
  c.add_load(1, 2, 20000, 1000, 1000, 100);
  c.measure(snap, kPeriod, 2, {});
  seam::ControllerState st;
  c.fill_views(st);
  ASSERT_EQ(st.cores.size(), 2u);
  const seam::CoreView& v = st.cores[1];
  EXPECT_EQ(v.cpu, 1u);
  EXPECT_DOUBLE_EQ(v.interrupts_per_s, 20000);
  EXPECT_DOUBLE_EQ(v.completions_per_s, 400000);
  EXPECT_DOUBLE_EQ(v.exhausted_share, 0.1);
  EXPECT_DOUBLE_EQ(v.busy, 0.2);  // (2 + 8 ms) of 50 ms, no idle times known
  EXPECT_EQ(st.cores[0].interrupts_per_s, 0);
  EXPECT_EQ(st.cores[0].completions_per_s, 0);
  EXPECT_FALSE(v.saturated);
  EXPECT_EQ(v.model_queues, 0u);  // no model queue spoke for the core
}

TEST(CoreCosts, CountersGoingBackwardsStartTheCoreAgain) {
  CoreCosts c;
  seam::Snapshot snap;
  snap.cpus = {times(1000, 2'000'000, 1000, 8'000'000)};
  c.measure(snap, 0, 1, {});
  snap.cpus = {times(10, 20'000, 10, 80'000)};  // a re-attach: smaller counters
  c.add_load(0, 2, 100, 10, 10, 0);
  c.measure(snap, kPeriod, 2, {});
  seam::ControllerState st;
  c.fill_views(st);
  ASSERT_EQ(st.cores.size(), 1u);
  EXPECT_EQ(st.cores[0].interrupts_per_s, 0);  // not measured: a new baseline
  EXPECT_EQ(st.cores[0].busy, 0);
}

TEST(CoreCosts, BucketCostsAreTheQuantizedEstimate) {
  CoreCosts c;
  seam::Snapshot snap;
  snap.cpus = {times(0, 0, 0, 0)};
  c.measure(snap, 0, 1, {});
  // Steady traffic for a while: the estimator leaves its defaults and the core gets a bucket.
  uint64_t hard = 0, soft = 0, runs = 0;
  for (uint64_t step = 2; step < 200; ++step) {
    const uint64_t interrupts = 1000 + (step % 7) * 150;
    const uint64_t packets = interrupts * (4 + step % 5);
    runs += interrupts;
    hard += interrupts * 1500;
    soft += interrupts * 2000 + packets * 300;
    snap.cpus = {times(runs, hard, runs, soft)};
    c.add_load(0, step, packets, interrupts, interrupts, 0);
    c.measure(snap, kPeriod, step, {});
  }
  seam::ControllerState st;
  c.fill_views(st);
  ASSERT_EQ(st.cores.size(), 1u);
  const seam::CoreView& v = st.cores[0];
  ASSERT_NE(v.confidence, dim::CostConfidence::kDefaults);
  ASSERT_NE(c.picks()[0].bucket, CoreCosts::kNoBucket);
  const auto [completion_ns, interrupt_ns] = c.bucket_costs(c.picks()[0].bucket);
  // The view's costs are the bucket's, within 5 % (one step) of the model's estimate.
  EXPECT_NEAR(static_cast<double>(completion_ns), v.used_completion_ns, 1);
  EXPECT_NEAR(static_cast<double>(interrupt_ns), v.used_interrupt_ns, 1);
  EXPECT_GT(completion_ns, 0);
  EXPECT_GT(interrupt_ns, 0);
}

}  // namespace
}  // namespace dimctl::controller
