// The simulator measures as the BPF does: the per-core hard-IRQ and softirq
// times and the per-IRQ times a snapshot carries are the time the engine charged, sampled and
// noisy only as the workload's Measurement says, and the same for a seed.
#include <gtest/gtest.h>

#include "controller_bridge.h"
#include "dimctl/sim/simulator.h"
#include "engine.h"

namespace dimctl::sim {
namespace {

constexpr int64_t kMs = 1'000'000;

// Six queues on two cores, Poisson load that keeps the cores busy (some polls exhaust their
// budget), then a phase without load in which every CQ drains: every charged poll call ends
// within the run.
Workload busy_then_idle(ProfileTable table) {
  Workload w;
  w.name = "measure";
  w.seed = 11;
  w.queues = 6;
  w.table = table;
  w.stages[0].service = Dist::lognormal(8'000, 0.5);
  w.stages[0].cpu = CostModel{"test", 2'000, 700, 300, 0};
  w.stages[0].cores = 2;
  w.stages[0].poll_budget = 16;
  w.sources[0].kind = SourceSpec::Kind::kPoisson;
  w.sources[0].rate = 2.5e5;
  w.phases = {Phase{"busy", 60 * kMs, 1.0, false, {}}, Phase{"idle", 20 * kMs, 0.0, false, {}}};
  return w;
}

Workload exact(Workload w) {
  w.measurement.time_one_in = 1;
  w.measurement.jitter = 0;
  w.measurement.outlier_share = 0;
  return w;
}

struct Measured {
  RunResult result;
  seam::Snapshot snap;
  std::vector<Engine::CpuTimeCounters> cores;
};

Measured measure(const Workload& w, const char* policy) {
  auto p = parse_policy(policy);
  EXPECT_TRUE(p);
  Engine engine(w, *p);
  auto r = engine.run({});
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  Measured m;
  if (r) m.result = std::move(*r);
  // What the controller would be handed at the end of the run.
  ControllerBridge bridge(engine, *p, w);
  auto s = bridge.sample();
  EXPECT_TRUE(s);
  if (s) m.snap = std::move(*s);
  for (uint32_t c = 0; c < w.stages[0].cores; ++c) m.cores.push_back(engine.cpu_times(c));
  return m;
}

TEST(SimMeasurement, WithoutNoiseTheReportedTimesAreWhatTheEngineCharged) {
  const Workload w = exact(busy_then_idle(ProfileTable::kNetEqe));
  const Measured m = measure(w, "static:1");
  const CostModel& cost = w.stages[0].cpu;
  ASSERT_EQ(m.snap.cpus.size(), 2u);
  uint64_t hard = 0, soft = 0, irqs = 0, polls = 0, completions = 0, exhausted = 0;
  for (const seam::QueueCounters& q : m.snap.queues) {
    polls += q.polls;
    completions += q.packets;
    exhausted += q.budget_exhausted;
  }
  EXPECT_GT(exhausted, 0u);  // the re-polls' poll_ns is in the softirq time too
  for (uint32_t c = 0; c < 2; ++c) {
    const seam::CpuTimes& t = m.snap.cpus[c];
    EXPECT_EQ(t.hardirq_ns, m.cores[c].hardirq_charged_ns);
    EXPECT_EQ(t.softirq_net_rx_ns, m.cores[c].softirq_charged_ns);
    EXPECT_EQ(t.hardirq_timed, t.hardirq_count);
    EXPECT_EQ(t.softirq_net_rx_timed, t.softirq_net_rx_count);
    EXPECT_EQ(t.softirq_irq_poll_count, 0u);         // a net stage polls in NET_RX
    EXPECT_EQ(t.hardirq_ns, t.hardirq_count * 800);  // 40 % of irq_ns is the handler
    hard += t.hardirq_ns;
    soft += t.softirq_net_rx_ns;
    irqs += t.hardirq_count;
    EXPECT_EQ(t.softirq_net_rx_count, [&] {
      uint64_t n = 0;
      for (const seam::QueueCounters& q : m.snap.queues)
        if (q.cpu == c) n += q.polls;
      return n;
    }());
  }
  // Every interrupt ran its handler, every poll call is one softirq run, and the two times add
  // up to the CPU the engine charged (no application work, no warm-up).
  EXPECT_EQ(irqs, m.result.total.interrupts);
  EXPECT_EQ(polls, m.result.total.polls);
  EXPECT_EQ(hard + soft, static_cast<uint64_t>(m.result.total.cpu_busy_ns));
  EXPECT_EQ(soft, irqs * 1'200 + (polls - irqs) * uint64_t(cost.poll_ns) +
                      completions * uint64_t(cost.completion_ns));
  // Per IRQ: one per queue, in IRQ order, the queue's interrupts and its share of the handler.
  ASSERT_EQ(m.snap.irqs.size(), w.queues);
  for (uint32_t q = 0; q < w.queues; ++q) {
    const seam::IrqTimes& i = m.snap.irqs[q];
    EXPECT_EQ(static_cast<int32_t>(i.irq), m.snap.queues[q].irq);
    EXPECT_EQ(i.ns, i.count * 800);
    if (q > 0) {
      EXPECT_GT(i.irq, m.snap.irqs[q - 1].irq);
    }
  }
}

TEST(SimMeasurement, RdmaStagesReportTheirPollsInIrqPoll) {
  const Workload w = exact(busy_then_idle(ProfileTable::kRdma));
  const Measured m = measure(w, "dimctl-rdma");
  ASSERT_EQ(m.snap.cpus.size(), 2u);
  for (uint32_t c = 0; c < 2; ++c) {
    const seam::CpuTimes& t = m.snap.cpus[c];
    EXPECT_EQ(t.softirq_net_rx_count, 0u);
    EXPECT_GT(t.softirq_irq_poll_count, 0u);
    EXPECT_EQ(t.softirq_irq_poll_ns, m.cores[c].softirq_charged_ns);
    EXPECT_EQ(t.hardirq_ns, m.cores[c].hardirq_charged_ns);
  }
  // A CQ's poll passes that used their budget are counted as rdma.bpf.c counts them (a pass here
  // is one poll call, so never more than its events).
  ASSERT_EQ(m.snap.cqs.size(), w.queues);
  uint64_t exhausted = 0;
  for (const seam::CqCounters& c : m.snap.cqs) {
    EXPECT_LE(c.budget_exhausted, c.events);
    exhausted += c.budget_exhausted;
  }
  EXPECT_GT(exhausted, 0u);
}

TEST(SimMeasurement, OneRunInEightIsTimedAndScalesToTheCharged) {
  Workload w = busy_then_idle(ProfileTable::kNetEqe);
  w.measurement.jitter = 0;
  w.measurement.outlier_share = 0;
  const Measured m = measure(w, "none");
  for (uint32_t c = 0; c < 2; ++c) {
    const seam::CpuTimes& t = m.snap.cpus[c];
    EXPECT_EQ(t.hardirq_timed, (t.hardirq_count + 7) / 8);
    EXPECT_EQ(t.softirq_net_rx_timed, (t.softirq_net_rx_count + 7) / 8);
    // Every handler costs the same: the scaled sample is exact. Poll calls differ: within 5 %.
    EXPECT_DOUBLE_EQ(seam::estimated_ns(t.hardirq_ns, t.hardirq_timed, t.hardirq_count),
                     static_cast<double>(m.cores[c].hardirq_charged_ns));
    EXPECT_NEAR(
        seam::estimated_ns(t.softirq_net_rx_ns, t.softirq_net_rx_timed, t.softirq_net_rx_count),
        static_cast<double>(m.cores[c].softirq_charged_ns),
        0.05 * static_cast<double>(m.cores[c].softirq_charged_ns));
  }
}

TEST(SimMeasurement, TheNoiseIsBoundedSeededAndLeavesTheRunAlone) {
  Workload w = busy_then_idle(ProfileTable::kNetEqe);
  w.measurement.time_one_in = 1;
  w.measurement.outlier_share = 0;  // jitter alone: within +-3 sigma of every run
  const Measured quiet = measure(exact(w), "none");
  const Measured a = measure(w, "none");
  const Measured b = measure(w, "none");
  for (uint32_t c = 0; c < 2; ++c) {
    const auto charged = static_cast<double>(a.cores[c].softirq_charged_ns);
    const auto reported = static_cast<double>(a.snap.cpus[c].softirq_net_rx_ns);
    EXPECT_NE(reported, charged);
    EXPECT_LE(std::abs(reported / charged - 1), 3 * w.measurement.jitter);
    // Zero-mean: over thousands of runs the sum is within 1 % of the charged.
    EXPECT_LE(std::abs(reported / charged - 1), 0.01);
    EXPECT_EQ(a.snap.cpus[c], b.snap.cpus[c]);  // the same seed, the same measurement
    // The noise is in what is reported, never in what is simulated.
    EXPECT_EQ(a.cores[c].softirq_charged_ns, quiet.cores[c].softirq_charged_ns);
  }
  EXPECT_EQ(a.result.total.latency.quantile(0.99), quiet.result.total.latency.quantile(0.99));
  EXPECT_EQ(a.snap.irqs, b.snap.irqs);
  Workload same_arrivals = w;
  same_arrivals.seed = 12;
  const Measured d = measure(same_arrivals, "none");
  EXPECT_NE(d.snap.cpus[0].softirq_net_rx_ns, a.snap.cpus[0].softirq_net_rx_ns);

  // Outliers: one timed run in `1 / outlier_share` reports `outlier_scale` times its time.
  w.measurement.jitter = 0;
  w.measurement.outlier_share = 0.01;
  w.measurement.outlier_scale = 10;
  const Measured o = measure(w, "none");
  for (uint32_t c = 0; c < 2; ++c) {
    const double ratio = static_cast<double>(o.snap.cpus[c].hardirq_ns) /
                         static_cast<double>(o.cores[c].hardirq_charged_ns);
    // Expected 1 + 0.01 * 9 = 1.09; thousands of handler runs keep it within 1.03..1.15.
    EXPECT_GT(ratio, 1.03);
    EXPECT_LT(ratio, 1.15);
    EXPECT_EQ(o.snap.cpus[c].hardirq_ns % 800, 0u);  // whole runs, 1x or 10x
  }
}

TEST(SimMeasurement, DimctlModelEstimatesTheCoresCostsFromTheSimulatedTimes) {
  // dimctl-model is the daemon's default config (model.costs: measured): the controller's
  // estimator runs on what the bridge reports. One NAPI-like queue on one core whose load
  // alternates between 45k/s and 300k/s every second (the controller feeds the estimator the sum
  // of about a second of periods), so the batch per entry varies and the fit can split the
  // interrupt's cost from the completion's; 12 s give it more than its 8 entries. Measured as
  // the collector does by default (one run in 8 timed, with the simulated host's noise), it
  // recovers the cost model within 10 %: completion 1.5 us, interrupt 2 us (0.8 handler + 1.2
  // softirq wake-up).
  Workload w = busy_then_idle(ProfileTable::kNetEqe);  // sampled one in 8, noisy
  w.queues = 1;
  w.stages[0].cores = 1;
  w.stages[0].poll_budget = 64;
  w.stages[0].service = Dist::constant(5'000);
  w.stages[0].cpu = CostModel{"test", 2'000, 1'500, 300, 0};
  w.sources[0].rate = 3e5;
  w.phases.clear();
  for (int i = 0; i < 12; ++i)
    w.phases.push_back(Phase{"p", 1000 * kMs, i % 2 ? 1.0 : 0.15, false, {}});
  auto p = parse_policy("dimctl-model");
  ASSERT_TRUE(p);
  Engine engine(w, *p);
  ASSERT_TRUE(engine.run({}));
  ASSERT_NE(engine.bridge(), nullptr);
  const auto st = engine.bridge()->state();
  ASSERT_EQ(st->cores.size(), 1u);
  const seam::CoreView& c = st->cores[0];
  EXPECT_EQ(c.confidence, dim::CostConfidence::kMeasured)
      << "spread " << c.estimate.spread << ", relative error " << c.estimate.relative_error
      << ", batch " << c.estimate.batch << ", kept " << c.estimate.kept << ", w "
      << c.estimate.wakeup_ns << ", c " << c.estimate.fit_completion_ns;
  EXPECT_NEAR(c.estimate.completion_ns, 1'500, 150);
  EXPECT_NEAR(c.estimate.interrupt_ns, 2'000, 200);
  EXPECT_NEAR(c.estimate.handler_ns, 800, 24);
  // The model uses them (quantized in 5 % steps).
  EXPECT_NEAR(c.used_completion_ns, 1'500, 150);
  EXPECT_NEAR(c.used_interrupt_ns, 2'000, 200);
}

}  // namespace
}  // namespace dimctl::sim
