// Per-core measured costs and saturation in the controller (core_costs.cc): synthetic CPU times
// from the fake source are fitted per core, the model's picks use the core's estimate (rule
// `costs: measured`), explicit costs override, tables are not rebuilt every period, and a
// saturated core gives its queues the throughput profile and hands them back at once. A core
// full of application work is saturated when its idle time is measured (and only then), and RDMA
// CQs count on the core that polls them and follow its throughput profile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "controller_fixture.h"
#include "dim/model_policy.h"
#include "dim/net_dim.h"

namespace dimctl::controller::testing {
namespace {

const dim::NetProfiles& kEqe = dim::net_profiles(dim::CqPeriodMode::kEqe, dim::Direction::kRx);

struct Lcg {
  uint64_t x = 4242;
  uint32_t next(uint32_t mod) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>((x >> 33) % mod);
  }
};

// A host whose costs are known: per interrupt `handler` ns in the hard-IRQ handler and `wakeup`
// ns of softirq, per completion `completion` ns of softirq (C_irq = handler + wakeup).
struct Host {
  double handler = 700;
  double wakeup = 2300;
  double completion = 450;
};

class CostsTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    with_rdma = false;
    add_device("eth0", 2, 1);
    source.queue(key(2, 0))->cpu = 1;
    source.current.cpus.resize(2);
  }
  static seam::DevicePolicy model_policy(seam::DevicePolicy p) {
    p.algorithm = seam::Algorithm::kModel;
    return p;
  }
  // One period on CPU 1: `packets` completions in `events` interrupts, and the CPU times they
  // cost on `host` (every run timed).
  void period(uint64_t events, uint64_t packets, const Host& host) {
    traffic(key(2, 0), events, packets, packets * 100);
    seam::CpuTimes& t = source.current.cpus[1];
    const auto hard = static_cast<uint64_t>(host.handler * static_cast<double>(events));
    const auto soft = static_cast<uint64_t>(host.wakeup * static_cast<double>(events) +
                                            host.completion * static_cast<double>(packets));
    t.hardirq_ns += hard;
    t.hardirq_count += events;
    t.hardirq_timed += events;
    t.softirq_net_rx_ns += soft;
    t.softirq_net_rx_count += events;
    t.softirq_net_rx_timed += events;
  }
  // eth1 (device 3) on the model in shadow, its `n` queues polled on CPU 1, which is never idle
  // (idle time known, none added).
  void queues_on_a_never_idle_core(int n) {
    add_device("eth1", 3, n, fakes::RecordingNetActuator::full_coalesce(), true);
    for (int i = 0; i < n; ++i) source.queue(key(3, i))->cpu = 1;
    policy.by_name["eth1"] = model_policy(shadow());
    ASSERT_TRUE(step().ok());
    source.current.cpus[1].idle_known = true;
  }
  // One period on that core: queue i at 25k/s (queue 0 a little busier: the core's
  // representative), with `events(packets, probed)` interrupts; `probed` while the queue's
  // profile is above its model's pick.
  template <class Events>
  void a_period_on_the_never_idle_core(int n, Events events) {
    for (int i = 0; i < n; ++i) {
      const auto* v = queue(key(3, i));
      const uint64_t packets = i == 0 ? 1300 : 1250;
      const bool probed = v->dim.applied_ix > v->dim.profile_ix;
      traffic(key(3, i), events(packets, probed), packets, packets * 100);
    }
    EXPECT_TRUE(step().ok());
  }
  // mlx5_0 on the model: CQ 7 polled in softirq and CQ 8 on an unbound workqueue, both last polled
  // on CPU 1 (vector 0).
  void two_cqs_on_core_1() {
    for (const auto& [id, ctx] : {std::pair{7u, seam::PollContext::kSoftirq},
                                  std::pair{8u, seam::PollContext::kUnboundWorkqueue}}) {
      seam::CqCounters c;
      c.key = {0, id};
      c.ibdev = "mlx5_0";
      c.poll_ctx = ctx;
      c.comp_vector = 0;
      c.cpu = 1;
      source.current.cqs.push_back(c);
    }
    policy.by_name["mlx5_0"] = model_policy(shadow());
  }
  const seam::CoreView* core(uint32_t cpu) {
    hold_ = st();
    for (const auto& c : hold_->cores) {
      if (c.cpu == cpu) return &c;
    }
    return nullptr;
  }
  // The table the controller should judge with for these costs (cached: ~0.2 ms each).
  const dim::ModelTable& table(double completion_ns, double interrupt_ns) {
    auto& t = tables_[{completion_ns, interrupt_ns}];
    if (!t) {
      dim::ModelParams params;
      params.cost.completion_cost_ns = completion_ns;
      params.cost.interrupt_cost_ns = interrupt_ns;
      t = std::make_unique<dim::ModelTable>(kEqe, dim::ProfileCount::kPackets, params);
    }
    return *t;
  }
  // A varied, unsaturated load: a regime per second (20 periods; the estimator is fed once a
  // second) of 5e4..4e5 packets/s at 2..40 packets per interrupt, +-5 % from period to period.
  std::pair<uint64_t, uint64_t> varied(Lcg& rng) {
    if (period_ % 20 == 0) {
      regime_rate_ = 50'000 + 10'000 * rng.next(36);
      regime_ppe_ = 2 + rng.next(39);
    }
    ++period_;
    const uint64_t packets = regime_rate_ * (95 + rng.next(11)) / 100 * kPeriod / 1'000'000'000;
    return {std::max<uint64_t>(packets / regime_ppe_, 1), packets};
  }

  uint64_t period_ = 0, regime_rate_ = 0, regime_ppe_ = 1;
  std::shared_ptr<const seam::ControllerState> hold_;
  std::map<std::pair<double, double>, std::unique_ptr<dim::ModelTable>> tables_;
};

TEST_F(CostsTest, CostsAreRecoveredAndTheModelPicksWithThem) {
  policy.by_name["eth0"] = model_policy(shadow());
  const Host host;
  Lcg rng;
  ASSERT_TRUE(step().ok());
  dim::ModelPolicy ref(table(1000, 2000));
  int measured_at = -1, changes = 0;
  for (int p = 0; p < 500; ++p) {
    const auto [events, packets] = varied(rng);
    period(events, packets, host);
    ASSERT_TRUE(step().ok());
    const seam::CoreView* c = core(1);
    ASSERT_NE(c, nullptr);
    // The reference judges with what the core published for this period: the defaults in the
    // first period, the direct costs until the estimate is confident, the estimate after
    // (quantized).
    const bool used = c->used_completion_ns > 0;
    if (c->confidence == dim::CostConfidence::kMeasured && measured_at < 0) measured_at = p;
    const dim::ModelTable& t =
        used ? table(c->used_completion_ns, c->used_interrupt_ns) : table(1000, 2000);
    if (ref.update(t, {kPeriod, events, packets})) ++changes;
    ASSERT_EQ(queue(key(2, 0))->dim.profile_ix, ref.profile_ix()) << "period " << p;
  }
  EXPECT_GE(changes, 2)
      << "the load must exercise the model (its picks compared in several states)";
  ASSERT_GE(measured_at, 0) << "the estimate never became confident";
  // 8 entries of a second each (the first staggered by CPU: 1/20 s for CPU 1).
  EXPECT_LE(measured_at, 8 * 20 + 2);
  const seam::CoreView* c = core(1);
  EXPECT_EQ(c->confidence, dim::CostConfidence::kMeasured);
  EXPECT_NEAR(c->estimate.completion_ns, host.completion, host.completion * 0.10);
  EXPECT_NEAR(c->estimate.interrupt_ns, host.handler + host.wakeup,
              (host.handler + host.wakeup) * 0.10);
  // Quantized to 5 % steps (within three quarters of a step of the estimate).
  EXPECT_NEAR(c->used_completion_ns, c->estimate.completion_ns, c->estimate.completion_ns * 0.04);
  EXPECT_NEAR(c->used_interrupt_ns, c->estimate.interrupt_ns, c->estimate.interrupt_ns * 0.04);
  EXPECT_FALSE(c->saturated);
  EXPECT_GT(c->completions_per_s, 0);
  // Other cores carry no queue: no estimate.
  EXPECT_EQ(core(0)->confidence, dim::CostConfidence::kDefaults);
}

TEST_F(CostsTest, TheMeasuredCostsChangeThePicks) {
  // Interrupts ten times dearer than the defaults say: the model batches at lower rates.
  policy.by_name["eth0"] = model_policy(shadow());
  Host host;
  host.handler = 5000;
  host.wakeup = 15000;
  host.completion = 300;
  Lcg rng;
  ASSERT_TRUE(step().ok());
  for (int p = 0; p < 300; ++p) {
    const auto [events, packets] = varied(rng);
    period(events, packets, host);
    ASSERT_TRUE(step().ok());
  }
  ASSERT_GT(core(1)->used_interrupt_ns, 0);
  const double rate = 1e5;  // the defaults keep a lower profile here than the measured costs
  ASSERT_LT(table(1000, 2000).pick(rate),
            table(core(1)->used_completion_ns, core(1)->used_interrupt_ns).pick(rate));
  for (int p = 0; p < 6; ++p) {
    const auto packets = static_cast<uint64_t>(rate * kPeriod / 1e9);
    period(packets / 8, packets, host);
    ASSERT_TRUE(step().ok());
  }
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix,
            table(core(1)->used_completion_ns, core(1)->used_interrupt_ns).pick(rate));
}

TEST_F(CostsTest, DefaultsRuleAndNoCpuDataKeepTheDefaults) {
  for (const bool cpu_data : {true, false}) {
    SCOPED_TRACE(cpu_data ? "costs: defaults" : "no CPU times");
    auto p = model_policy(shadow());
    if (cpu_data) {
      p.model.measured_costs = false;
    } else {
      source.current.cpus.clear();
    }
    policy.by_name["eth0"] = p;
    ctl().reload_policies();
    Lcg rng;
    ASSERT_TRUE(step().ok());
    dim::ModelPolicy ref(table(1000, 2000));
    for (int k = 0; k < 300; ++k) {
      const auto [events, packets] = varied(rng);
      period(events, packets, Host{});
      ASSERT_TRUE(step().ok());
      ref.update(table(1000, 2000), {kPeriod, events, packets});
      ASSERT_EQ(queue(key(2, 0))->dim.profile_ix, ref.profile_ix()) << "period " << k;
    }
    if (cpu_data) {
      // Measured and shown, but not used by this rule.
      EXPECT_EQ(core(1)->confidence, dim::CostConfidence::kMeasured);
    } else {
      EXPECT_TRUE(st()->cores.empty());
    }
    EXPECT_EQ(st()->model_cost_tables_built_total, 0u);
  }
}

TEST_F(CostsTest, ExplicitCostsOverrideTheMeasurement) {
  auto p = model_policy(shadow());
  p.model.interrupt_cost_ns = 9000;
  p.model.interrupt_cost_set = true;
  policy.by_name["eth0"] = p;
  Lcg rng;
  ASSERT_TRUE(step().ok());
  std::unique_ptr<dim::ModelPolicy> ref;
  for (int k = 0; k < 300; ++k) {
    const auto [events, packets] = varied(rng);
    period(events, packets, Host{});
    ASSERT_TRUE(step().ok());
    const seam::CoreView* c = core(1);
    const dim::ModelTable& t =
        c->used_completion_ns > 0 ? table(c->used_completion_ns, 9000) : table(1000, 9000);
    if (!ref) ref = std::make_unique<dim::ModelPolicy>(table(1000, 9000));
    ref->update(t, {kPeriod, events, packets});
    ASSERT_EQ(queue(key(2, 0))->dim.profile_ix, ref->profile_ix()) << "period " << k;
  }
  EXPECT_GT(core(1)->used_completion_ns, 0);

  // Both set: the measurement is not used at all.
  p.model.completion_cost_ns = 1500;
  p.model.completion_cost_set = true;
  policy.by_name["eth0"] = p;
  ctl().reload_policies();
  const uint64_t built = st()->model_cost_tables_built_total;
  dim::ModelPolicy both(table(1500, 9000));
  ASSERT_TRUE(step().ok());  // the re-created policy starts from this period
  for (int k = 0; k < 60; ++k) {
    const auto [events, packets] = varied(rng);
    period(events, packets, Host{});
    ASSERT_TRUE(step().ok());
    both.update(table(1500, 9000), {kPeriod, events, packets});
    ASSERT_EQ(queue(key(2, 0))->dim.profile_ix, both.profile_ix()) << "period " << k;
  }
  EXPECT_EQ(st()->model_cost_tables_built_total, built);
}

TEST_F(CostsTest, NoTableRebuildStorm) {
  policy.by_name["eth0"] = model_policy(shadow());
  Lcg rng;
  ASSERT_TRUE(step().ok());
  for (int p = 0; p < 1200; ++p) {
    const auto [events, packets] = varied(rng);
    // ±5 % noise on every cost, every period.
    Host h;
    h.handler *= (95 + rng.next(11)) / 100.0;
    h.wakeup *= (95 + rng.next(11)) / 100.0;
    h.completion *= (95 + rng.next(11)) / 100.0;
    period(events, packets, h);
    ASSERT_TRUE(step().ok());
  }
  ASSERT_EQ(core(1)->confidence, dim::CostConfidence::kMeasured);
  // A table per bucket and share level in use: a handful, not one per period.
  EXPECT_GE(st()->model_cost_tables_built_total, 1u);
  EXPECT_LE(st()->model_cost_tables_built_total, 6u);
}

TEST_F(CostsTest, ASaturatedCoreClimbsAndHandsBackAtOnce) {
  policy.by_name["eth0"] = model_policy(shadow());
  ASSERT_TRUE(step().ok());
  // The core is busy with application work: never idle. (Not other softirq work: that is in the
  // CPU's softirq time, which the direct costs put on the queue's completions.)
  seam::CpuTimes& times = source.current.cpus[1];
  times.idle_known = true;
  // A closed loop on the saturated core: more batching, more completions (10 % per index).
  const double base = 60'000;
  int entered = -1, climbed = -1;
  for (int p = 0; p < 60; ++p) {
    const uint8_t applied = queue(key(2, 0))->dim.applied_ix;
    const auto packets = static_cast<uint64_t>(base * (1 + 0.1 * applied) * kPeriod / 1e9);
    period(packets / 8, packets, Host{});
    ASSERT_TRUE(step().ok());
    const seam::CoreView* c = core(1);
    const auto* q = queue(key(2, 0));
    if (c->saturated && entered < 0) entered = p;
    if (c->saturated && q->dim.applied_ix > q->dim.profile_ix && climbed < 0) climbed = p;
    if (c->saturated) {
      EXPECT_EQ(q->dim.applied_ix, c->saturation_profile) << "period " << p;
    }
  }
  ASSERT_GE(entered, 0);
  // K = 2 pressure periods, the first counted before the core knows its model queue.
  EXPECT_LE(entered, 2);
  ASSERT_GE(climbed, 0) << "the throughput objective never moved above the latency pick";
  EXPECT_EQ(core(1)->saturation_episodes, 1u);
  const uint8_t held = queue(key(2, 0))->dim.applied_ix;
  EXPECT_GT(held, queue(key(2, 0))->dim.profile_ix);

  // A queue on the saturated core that has carried no traffic gets no wish, the throughput
  // profile included: nothing is written for a queue before a period measured it.
  add_device("eth2", 4, 1, fakes::RecordingNetActuator::full_coalesce(), true);
  source.queue(key(4, 0))->cpu = 1;
  policy.by_name["eth2"] = model_policy(shadow());
  for (int p = 0; p < 2; ++p) {
    const auto held_packets = static_cast<uint64_t>(base * (1 + 0.1 * held) * kPeriod / 1e9);
    period(held_packets / 8, held_packets, Host{});
    ASSERT_TRUE(step().ok());
  }
  ASSERT_TRUE(core(1)->saturated);
  ASSERT_EQ(queue(key(2, 0))->dim.applied_ix, held);
  ASSERT_NE(queue(key(4, 0)), nullptr);
  EXPECT_EQ(queue(key(4, 0))->wanted_usecs, 0u);
  EXPECT_EQ(queue(key(4, 0))->dim.applied_ix, 0);

  // Headroom: the first period without pressure hands the queue back to the model's pick.
  const auto packets = static_cast<uint64_t>(base * kPeriod / 1e9);
  period(packets / 8, packets, Host{});
  times.idle_ns += static_cast<uint64_t>(0.9 * kPeriod);
  ASSERT_TRUE(step().ok());
  EXPECT_FALSE(core(1)->saturated);
  EXPECT_EQ(queue(key(2, 0))->dim.applied_ix, queue(key(2, 0))->dim.profile_ix);
}

// An open loop the core cannot carry at the low profiles (never idle there) and carries with
// idle time from profile 2 up. The estimator's direct costs put the softirq's wake-up on the
// completions, so the leave projection sees the low profiles as cheaper than they are; the
// rule's changes then outrun its budget. Over 5 s the core must settle at a profile that frees it
// and stay there: not judge a trial its budget held back (it held profile 0 for good), not leave
// again and again on the same projection, and not wait a refill to return from a trial.
TEST_F(CostsTest, AnOverloadedCoreSettlesWhereItIsFreeAndStaysThere) {
  policy.by_name["eth0"] = model_policy(shadow());
  ASSERT_TRUE(step().ok());
  seam::CpuTimes& times = source.current.cpus[1];
  times.idle_known = true;
  const Host host;
  const double offered = 450'000;  // packets/s
  const double batch[] = {1.3, 1.6, 4, 8, 16, 24, 32, 48, 64};
  int late_never_idle = 0;
  const int periods = static_cast<int>(5'000'000'000 / kPeriod);
  for (int p = 0; p < periods; ++p) {
    const uint8_t applied = queue(key(2, 0))->dim.applied_ix;
    const double ppe = batch[std::min<size_t>(applied, std::size(batch) - 1)];
    const double per_packet = host.completion + (host.handler + host.wakeup) / ppe;  // ns
    const double served = std::min(offered, 1e9 / per_packet);
    const auto packets = static_cast<uint64_t>(served * kPeriod / 1e9);
    period(static_cast<uint64_t>(static_cast<double>(packets) / ppe), packets, host);
    const double busy = std::min(1.0, offered * per_packet * 1e-9);
    times.idle_ns += static_cast<uint64_t>((1 - busy) * kPeriod);
    ASSERT_TRUE(step().ok());
    if (p >= periods / 2 && busy >= 1.0) ++late_never_idle;
  }
  EXPECT_GE(queue(key(2, 0))->dim.applied_ix, 2);
  EXPECT_LE(late_never_idle, 2) << "never idle in the second half of the run";
  EXPECT_GE(core(1)->saturation_episodes, 1u);
}

// Application work is neither hard-IRQ nor softirq time: the core looks free from the interrupt
// times alone, and saturated once its idle time says it is not.
TEST_F(CostsTest, ApplicationWorkSaturatesTheCoreOnlyWhenIdleIsMeasured) {
  policy.by_name["eth0"] = model_policy(shadow());
  const auto packets = static_cast<uint64_t>(100'000 * kPeriod / 1e9);
  auto run = [&](bool idle_known, double idle_share) {
    seam::CpuTimes& t = source.current.cpus[1];
    t.idle_known = idle_known;
    for (int p = 0; p < 10; ++p) {
      period(packets / 4, packets, Host{});
      t.idle_ns += static_cast<uint64_t>(idle_share * kPeriod);
      EXPECT_TRUE(step().ok());
    }
    return core(1);
  };
  // The interrupts take about 0.12 of the core: without idle times, that is all it is busy.
  const seam::CoreView* c = run(false, 0.0);
  ASSERT_NE(c, nullptr);
  EXPECT_LT(c->busy, 0.2);
  EXPECT_FALSE(c->saturated);
  // Idle 40 % of the time: busy 0.6, headroom.
  c = run(true, 0.4);
  EXPECT_NEAR(c->busy, 0.6, 0.01);
  EXPECT_FALSE(c->saturated);
  // Never idle: saturated after K = 2 periods.
  c = run(true, 0.0);
  EXPECT_DOUBLE_EQ(c->busy, 1.0);
  EXPECT_TRUE(c->saturated);
  EXPECT_EQ(c->saturation_episodes, 1u);
  // Idle more than the period (a reader's rounding): clamped; busy is the interrupt time again.
  c = run(true, 1.5);
  EXPECT_NEAR(c->busy, 0.12, 0.02);
  EXPECT_FALSE(c->saturated);
}

// Eight queues on one never-idle core, each at one completion per interrupt at the latency
// profile, where no timer batches (25k/s each): the saturation rule's QD~1 probe runs on the
// busiest queue alone, the others keep their model's pick; a probe queue that batches starts the
// climb on every queue, one that does not leaves them all at their picks.
TEST_F(CostsTest, TheQd1ProbeRunsOnTheBusiestQueueAlone) {
  constexpr int kQueues = 8;
  ASSERT_NO_FATAL_FAILURE(queues_on_a_never_idle_core(kQueues));
  // One period: one completion per interrupt unless the queue is probed and `batches`.
  auto run = [&](bool batches) {
    a_period_on_the_never_idle_core(kQueues, [&](uint64_t packets, bool probed) {
      return probed && batches ? packets / 3 : packets;
    });
  };
  auto probed_queues = [&] {
    std::vector<int> out;
    for (int i = 0; i < kQueues; ++i) {
      const auto* v = queue(key(3, i));
      if (v->dim.applied_ix != v->dim.profile_ix) out.push_back(i);
    }
    return out;
  };
  for (const bool batches : {true, false}) {
    SCOPED_TRACE(batches ? "a batching load" : "QD~1");
    int probe_period = -1;
    for (int p = 0; p < 10 && probe_period < 0; ++p) {
      run(batches);
      if (!probed_queues().empty()) probe_period = p;
    }
    ASSERT_GE(probe_period, 0) << "no probe";
    ASSERT_TRUE(core(1)->saturated);
    EXPECT_EQ(probed_queues(), std::vector<int>{0});
    run(batches);
    if (batches) {
      // The climb: every queue at the core's throughput profile.
      EXPECT_EQ(probed_queues().size(), size_t{kQueues});
      EXPECT_GT(core(1)->saturation_profile, 0);
      for (int i = 0; i < kQueues; ++i) {
        EXPECT_EQ(queue(key(3, i))->dim.applied_ix, core(1)->saturation_profile) << i;
      }
      EXPECT_EQ(core(1)->qd1_probes_batching, 1u);
      EXPECT_EQ(core(1)->qd1_probes_qd1, 0u);
      // Headroom hands back once the trial running is judged; the next case starts from a free
      // core.
      for (int p = 0; p < 4 && core(1)->saturated; ++p) {
        source.current.cpus[1].idle_ns += kPeriod;
        run(false);
      }
      ASSERT_FALSE(core(1)->saturated);
      EXPECT_TRUE(probed_queues().empty());
    } else {
      // QD~1: every queue at its pick, and no probe again for qd1_retry_ms (10 s: 200 periods).
      for (int p = 0; p < 40; ++p) {
        run(false);
        EXPECT_TRUE(probed_queues().empty()) << "period " << p;
      }
      EXPECT_TRUE(core(1)->saturated);
      EXPECT_EQ(core(1)->qd1_probes_qd1, 1u);
      EXPECT_EQ(core(1)->qd1_probes_batching, 1u);
    }
  }
}

// A passive verdict (QD~1, as above) judged again once the core's batch at the pick rises: the
// controller publishes the re-judgment (CoreView::rejudged, exported as
// dimctl_core_saturation_rejudged_total) and the new episode it starts.
TEST_F(CostsTest, APassiveCoreJudgedAgainPublishesTheRejudgment) {
  constexpr int kQueues = 8;
  ASSERT_NO_FATAL_FAILURE(queues_on_a_never_idle_core(kQueues));
  // One period: `batch` completions per interrupt at the model's pick, one per interrupt above it
  // (the probe finds QD~1).
  auto run = [&](double batch) {
    a_period_on_the_never_idle_core(kQueues, [&](uint64_t packets, bool probed) {
      return probed ? packets : static_cast<uint64_t>(static_cast<double>(packets) / batch);
    });
  };
  // QD~1: saturated, probed once, passive.
  for (int p = 0; p < 12; ++p) run(1.0);
  ASSERT_TRUE(core(1)->saturated);
  ASSERT_EQ(core(1)->qd1_probes_qd1, 1u);
  ASSERT_EQ(core(1)->saturation_episodes, 1u);
  EXPECT_EQ(core(1)->rejudged, 0u);
  // The same load: the verdict holds.
  for (int p = 0; p < 6; ++p) run(1.0);
  EXPECT_EQ(core(1)->rejudged, 0u);
  EXPECT_EQ(core(1)->saturation_episodes, 1u);
  // The batch at the pick rises by a quarter (well over rejudge_batch_rise and the counting
  // noise of ~10k interrupts a period): judged again after K = 2 periods, entered anew after K
  // more.
  for (int p = 0; p < 6; ++p) run(1.25);
  EXPECT_EQ(core(1)->rejudged, 1u);
  EXPECT_EQ(core(1)->saturation_episodes, 2u);
}

// A model CQ on a saturated core: its completions count on the core (CqCounters::cpu), and its
// wish follows the core's throughput profile; a CQ whose poll context has no core (an unbound
// workqueue) is left to its model.
TEST_F(CostsTest, CqsCountOnTheCoreThatPollsThemAndFollowItsThroughputProfile) {
  two_cqs_on_core_1();
  ASSERT_TRUE(step().ok());
  hold_ = st();
  // A closed loop on the core: more batching, more completions (10 % per profile index, up to
  // its best at 7; the climb measures 8 once, the step above where the cost model sees no
  // saving, and comes back). The core never idles and batches 2 per interrupt whatever the
  // profile: with the rate still rising at 8, the projection of that busy to the latency
  // objective's pick falls below leave_busy there, and the core leaves and enters again.
  const double base = 100'000;
  seam::CpuTimes& t = source.current.cpus[1];
  t.idle_known = true;
  int saturated_periods = 0;
  for (int p = 0; p < 40; ++p) {
    uint8_t ix = 0;
    for (const auto& v : st()->cqs) {
      if (v.counters.key.cq_id == 7) ix = v.dim.applied_ix;
    }
    const auto comps =
        static_cast<uint64_t>(base * (1 + 0.1 * std::min<int>(ix, 7)) * kPeriod / 1e9);
    for (uint32_t id : {7u, 8u}) {
      auto* c = source.cq({0, id});
      c->schedules += comps / 2;
      c->events += comps / 2;
      c->polls += comps / 2;
      c->completions += comps;
    }
    t.hardirq_ns += comps * 700;
    t.hardirq_count += comps / 2;
    t.hardirq_timed += comps / 2;
    t.softirq_irq_poll_ns += comps * 1000;
    t.softirq_irq_poll_count += comps / 2;
    t.softirq_irq_poll_timed += comps / 2;
    ASSERT_TRUE(step().ok());
    hold_ = st();
    const seam::CoreView* c = core(1);
    ASSERT_NE(c, nullptr);
    // The softirq CQ's completions are the core's; the unbound one's are not (it was polled
    // there this period, but an unbound worker may run anywhere the next).
    EXPECT_NEAR(c->completions_per_s, static_cast<double>(comps) * 1e9 / kPeriod, 1.0) << p;
    if (!c->saturated) continue;
    ++saturated_periods;
    for (const auto& v : hold_->cqs) {
      if (v.counters.key.cq_id == 7) {
        EXPECT_EQ(v.dim.applied_ix, c->saturation_profile) << "period " << p;
      } else {
        EXPECT_EQ(v.dim.applied_ix, v.dim.profile_ix) << "period " << p;  // its model's
      }
    }
  }
  EXPECT_GE(saturated_periods, 35);
  const seam::CoreView* c = core(1);
  EXPECT_EQ(c->saturation_episodes, 1u);
  EXPECT_GT(c->saturation_profile, 0) << "the throughput objective never left profile 0";
}

// A CQ's exhausted poll passes (CqCounters::budget_exhausted) are its core's exhausted polls, as a
// NAPI's are: on a core busy above leave_busy and below enter_busy, half the passes at their
// budget is pressure, and the core saturates; the same load without them does not. An unbound
// workqueue CQ's passes are not the core's, and a counter that went back is a discontinuity
// (no delta that period).
class CqExhaustionTest : public CostsTest, public ::testing::WithParamInterface<bool> {};

TEST_P(CqExhaustionTest, ExhaustedCqPassesArePressureOnTheirCore) {
  const bool exhaust = GetParam();
  two_cqs_on_core_1();
  ASSERT_TRUE(step().ok());
  seam::CpuTimes& t = source.current.cpus[1];
  t.idle_known = true;
  // 85 % busy: above leave_busy, below enter_busy.
  auto core_times = [&](uint64_t passes) {
    t.idle_ns += static_cast<uint64_t>(0.15 * kPeriod);
    t.softirq_irq_poll_ns += static_cast<uint64_t>(0.5 * kPeriod);
    t.softirq_irq_poll_count += passes;
    t.softirq_irq_poll_timed += passes;
  };
  const uint64_t passes = 400, comps = 40 * passes;
  bool saturated = false;
  for (int p = 0; p < 6; ++p) {
    for (uint32_t id : {7u, 8u}) {
      auto* c = source.cq({0, id});
      c->schedules += passes / 2;
      c->events += passes;
      c->polls += passes * 3;
      c->completions += comps;
      // The unbound CQ exhausts every pass: none of it may count on core 1.
      if (id == 8) c->budget_exhausted += passes;
      if (id == 7 && exhaust) c->budget_exhausted += passes / 2;
    }
    core_times(passes);
    ASSERT_TRUE(step().ok());
    const seam::CoreView* c = core(1);
    ASSERT_NE(c, nullptr);
    EXPECT_DOUBLE_EQ(c->exhausted_share, exhaust ? 0.5 : 0.0) << "period " << p;
    saturated |= c->saturated;
  }
  EXPECT_EQ(saturated, exhaust);
  // A CQ recreated under the same key: its counters start again (budget_exhausted went back), and
  // the period says nothing.
  auto* c7 = source.cq({0, 7});
  c7->schedules = c7->events = c7->polls = c7->completions = 0;
  c7->budget_exhausted = 0;
  core_times(0);
  ASSERT_TRUE(step().ok());
  EXPECT_DOUBLE_EQ(core(1)->exhausted_share, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Cq, CqExhaustionTest, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "Exhausting" : "NotExhausting"; });

}  // namespace
}  // namespace dimctl::controller::testing
