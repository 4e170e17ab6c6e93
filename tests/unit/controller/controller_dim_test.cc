// The controller runs net DIM exactly as the library alone does on the same samples, combines
// per-queue decisions by policy, and restarts windows on counter discontinuities.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <set>
#include <vector>

#include "controller_fixture.h"
#include "dim/net_dim.h"

namespace dimctl::controller::testing {
namespace {

const dim::NetProfiles& kEqe = dim::net_profiles(dim::CqPeriodMode::kEqe, dim::Direction::kRx);

// A standalone NetDim fed what the controller is fed, with the profile applied at once (what
// the controller does in shadow mode and in enforce mode without a rate limit).
struct Reference {
  dim::NetDim dim;
  uint64_t verdicts[3] = {0, 0, 0};
  void feed(int64_t t, const seam::QueueCounters& q) {
    const uint64_t before = dim.windows_evaluated();
    dim.on_sample(dim::Sample::from_counters(t, q.events(), q.packets, q.bytes));
    if (dim.windows_evaluated() != before) ++verdicts[static_cast<size_t>(*dim.last_verdict())];
    if (dim.state() == dim::MeasureState::kApplyNewProfile) dim.profile_applied();
  }
};

void expect_same(const seam::DimView& v, const Reference& ref, int step) {
  EXPECT_EQ(v.profile_ix, ref.dim.profile_ix()) << "step " << step;
  EXPECT_EQ(v.tune_state, static_cast<uint8_t>(ref.dim.tune_state())) << "step " << step;
  EXPECT_EQ(v.measure_state, static_cast<uint8_t>(ref.dim.state())) << "step " << step;
  EXPECT_EQ(v.tired, ref.dim.tired()) << "step " << step;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(v.verdicts_total[i], ref.verdicts[i]) << "step " << step;
  const auto& s = ref.dim.last_stats();
  EXPECT_EQ(v.bpms, s ? s->bpms : 0) << "step " << step;
  EXPECT_EQ(v.ppms, s ? s->ppms : 0) << "step " << step;
}

// Deterministic noise.
struct Lcg {
  uint64_t x = 12345;
  uint32_t next(uint32_t mod) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>((x >> 33) % mod);
  }
};

class RampTest : public ControllerTest, public ::testing::WithParamInterface<seam::Mode> {};

// A realistic ramp: load rises from idle to ~150k pps with noise, plateaus, falls back; events
// per period follow the packet rate (interrupt coalescing merges packets), some periods have
// fewer than 64 events, packet sizes vary.
TEST_P(RampTest, MovesTheProfileExactlyAsTheLibraryAlone) {
  add_device("eth0", 2, 1, fakes::RecordingNetActuator::full_coalesce(3, 32));
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].mode = GetParam();
  Reference ref;
  Lcg rng;
  int changes = 0;
  uint8_t last_ix = 0;
  for (int step_no = 0; step_no < 200; ++step_no) {
    const int phase = step_no < 80 ? step_no : (step_no < 120 ? 80 : 200 - step_no);
    const uint64_t pps_base = 200 + static_cast<uint64_t>(phase) * phase * 25;
    const uint64_t packets = pps_base / 20 + rng.next(static_cast<uint32_t>(pps_base / 40 + 1));
    const uint64_t events = std::clamp<uint64_t>(packets / 8, 3, 4000) + rng.next(7);
    const uint64_t bytes = packets * (64 + rng.next(1400));
    traffic(key(2, 0), events, packets, bytes);
    ASSERT_TRUE(step().ok());
    ref.feed(source.current.time_ns, *source.queue(key(2, 0)));
    const auto* q = queue(key(2, 0));
    ASSERT_NE(q, nullptr);
    expect_same(q->dim, ref, step_no);
    if (ref.dim.profile_ix() != last_ix) ++changes;
    last_ix = ref.dim.profile_ix();
    if (GetParam() == seam::Mode::kEnforce) {
      EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[ref.dim.profile_ix()].usec)
          << "step " << step_no;
    }
  }
  EXPECT_GE(changes, 4) << "the ramp must exercise DIM";
  if (GetParam() == seam::Mode::kShadow) {
    EXPECT_TRUE(net.sets.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, RampTest,
                         ::testing::Values(seam::Mode::kShadow, seam::Mode::kEnforce));

class CombineTest : public ControllerTest,
                    public ::testing::WithParamInterface<seam::CombinePolicy> {};

// Three queues with different traffic hold different indices; the device gets the combination
// the policy names, checked against three standalone NetDims.
TEST_P(CombineTest, DeviceGetsThePolicysCombinationOfPerQueueDecisions) {
  add_device("eth0", 2, 3, fakes::RecordingNetActuator::full_coalesce(3, 32));
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].combine = GetParam();
  std::vector<Reference> refs(3);
  std::vector<uint64_t> prev_events(3, 0);
  std::optional<size_t> busiest;
  std::set<uint8_t> seen_device_ix;
  for (int p = 0; p < 40; ++p) {
    uint64_t ramp = 1000;
    for (int i = 0; i < p % 12; ++i) ramp = ramp * 6 / 5;
    traffic(key(2, 0), p < 20 ? 100 : 400, ramp, ramp * 1000);                          // ramps
    traffic(key(2, 1), 300, (p % 3 == 0) ? 900 : 500, (p % 3 == 0) ? 900000 : 500000);  // noisy
    traffic(key(2, 2), 70, 200 + 10 * static_cast<uint64_t>(p), 200000);                // slow
    ASSERT_TRUE(step().ok());

    std::vector<uint8_t> ix(3);
    std::vector<uint64_t> ev(3);
    for (size_t i = 0; i < 3; ++i) {
      const auto* q = source.queue(key(2, static_cast<int>(i)));
      refs[i].feed(source.current.time_ns, *q);
      ix[i] = refs[i].dim.profile_ix();
      ev[i] = p == 0 ? 0 : q->events() - prev_events[i];
      prev_events[i] = q->events();
    }
    // Busiest: most events; ties to the previous busiest, then the smallest key.
    size_t b = busiest.value_or(0);
    for (size_t i = 0; i < 3; ++i) {
      if (ev[i] > ev[b]) b = i;
    }
    busiest = b;
    uint8_t expected = 0;
    switch (GetParam()) {
      case seam::CombinePolicy::kBusiestQueue:
        expected = ix[b];
        break;
      case seam::CombinePolicy::kMaxProfile:
        expected = *std::max_element(ix.begin(), ix.end());
        break;
      case seam::CombinePolicy::kMinProfile:
        expected = *std::min_element(ix.begin(), ix.end());
        break;
    }
    seen_device_ix.insert(expected);
    const auto* d = device("eth0");
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(d->requested.has_value());
    EXPECT_EQ(d->requested->rx_usecs, kEqe[expected].usec) << "period " << p;
    EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[expected].usec) << "period " << p;
    for (size_t i = 0; i < 3; ++i) {
      const auto* q = queue(key(2, static_cast<int>(i)));
      EXPECT_EQ(q->dim.profile_ix, ix[i]) << "period " << p << " queue " << i;
      EXPECT_EQ(q->dim.applied_ix, expected) << "period " << p << " queue " << i;
    }
  }
  EXPECT_GE(seen_device_ix.size(), 2u) << "the scenario must move the device";
}

INSTANTIATE_TEST_SUITE_P(Policies, CombineTest,
                         ::testing::Values(seam::CombinePolicy::kBusiestQueue,
                                           seam::CombinePolicy::kMaxProfile,
                                           seam::CombinePolicy::kMinProfile));

TEST_F(ControllerTest, CombinePoliciesDisagreeOnTheSameQueues) {
  // Sanity for the parameterised test: the three policies really pick different queues here.
  add_device("eth0", 2, 2, fakes::RecordingNetActuator::full_coalesce(3, 32));
  policy.by_name["eth0"] = shadow();
  for (int p = 0; p < 6; ++p) {
    traffic(key(2, 1), 1000, 100, 100000);  // busiest by events, constant load
    ramp_step(key(2, 0), p);                // climbs to index 3
  }
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 3);
  const uint8_t busy_ix = queue(key(2, 1))->dim.profile_ix;
  EXPECT_NE(busy_ix, 3);
  EXPECT_EQ(device("eth0")->requested->rx_usecs, kEqe[busy_ix].usec);
}

TEST_F(ControllerTest, CounterResetRestartsTheWindow) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = shadow();
  traffic(key(2, 0), 1000, 50000, 50000000);
  ASSERT_TRUE(step().ok());  // window start

  // The queue is reset (driver reload, collector restart): every counter goes backwards. DIM's
  // wrap arithmetic would read 64,546 events and a huge rate and decide (dim-spec N12).
  auto* q = source.queue(key(2, 0));
  q->polls = 10;
  q->packets = 100;
  q->bytes = 100000;
  ASSERT_TRUE(step().ok());
  const auto* v = queue(key(2, 0));
  EXPECT_EQ(v->dim.profile_ix, 0);
  EXPECT_EQ(v->dim.verdicts_total[0] + v->dim.verdicts_total[1] + v->dim.verdicts_total[2], 0u);
  EXPECT_EQ(v->packets_per_second, 0.0);  // no rate from a negative delta

  // The reset sample started a new window: the next real window decides normally.
  traffic(key(2, 0), 100, 1000, 1000000);
  ASSERT_TRUE(step().ok());
  v = queue(key(2, 0));
  EXPECT_EQ(v->dim.verdicts_total[2], 1u);
  EXPECT_EQ(v->dim.profile_ix, 1);
  EXPECT_EQ(v->dim.bpms, 20000);  // 1e6 bytes over 50 ms, not over the reset
}

TEST_F(ControllerTest, QueueRecreatedUnderTheSameKeyRestartsTheWindow) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = shadow();
  ASSERT_TRUE(step().ok());
  traffic(key(2, 0), 100, 1000, 1000000);
  source.queue(key(2, 0))->queue = 7;  // same NAPI id, now serving another queue
  ASSERT_TRUE(step().ok());
  const auto* v = queue(key(2, 0));
  EXPECT_EQ(v->dim.verdicts_total[0] + v->dim.verdicts_total[1] + v->dim.verdicts_total[2], 0u);
}

// A discontinuity inside an open window (here the NAPI now serves another queue; its counters
// go on) starts a new window at that sample, even when the window would not have closed yet.
TEST_F(ControllerTest, AnIdentityChangeInsideAWindowStartsANewOne) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = shadow();
  ASSERT_TRUE(step().ok());  // window starts
  traffic(key(2, 0), 40, 4000, 4000000);
  source.queue(key(2, 0))->irq = 99;
  ASSERT_TRUE(step().ok());  // 40 events: the window stays open, but the series changed
  traffic(key(2, 0), 30, 3000, 3000000);
  ASSERT_TRUE(step().ok());  // 70 since the first window's start, 30 since the change
  const auto* v = queue(key(2, 0));
  EXPECT_EQ(v->dim.verdicts_total[0] + v->dim.verdicts_total[1] + v->dim.verdicts_total[2], 0u);
  traffic(key(2, 0), 34, 3400, 3400000);
  ASSERT_TRUE(step().ok());  // 64 since the change: decides
  v = queue(key(2, 0));
  EXPECT_EQ(v->dim.verdicts_total[0] + v->dim.verdicts_total[1] + v->dim.verdicts_total[2], 1u);
}

TEST_F(ControllerTest, FewerThan64EventsNeverDecide) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = shadow();
  ASSERT_TRUE(step().ok());  // window starts at 0 events
  for (int p = 0; p < 10; ++p) {
    traffic(key(2, 0), 6, 60000, 60000000);  // 60 events after 10 periods
    ASSERT_TRUE(step().ok());
  }
  const auto* v = queue(key(2, 0));
  EXPECT_EQ(v->dim.verdicts_total[0] + v->dim.verdicts_total[1] + v->dim.verdicts_total[2], 0u);
  traffic(key(2, 0), 6, 60000, 60000000);  // 66 events in the window: decides
  ASSERT_TRUE(step().ok());
  v = queue(key(2, 0));
  EXPECT_EQ(v->dim.verdicts_total[2], 1u);
}

TEST_F(ControllerTest, QueuesReorderedInTheSnapshotKeepTheirDim) {
  add_device("eth0", 2, 3);
  policy.by_name["eth0"] = shadow();
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 1), p);
  ASSERT_EQ(queue(key(2, 1))->dim.profile_ix, 2);
  std::reverse(source.current.queues.begin(), source.current.queues.end());
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 1))->dim.profile_ix, 2);
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 0);
  EXPECT_EQ(st()->queues.front().counters.key, key(2, 2));
}

TEST_F(ControllerTest, RatesComeFromSnapshotDeltas) {
  add_device("eth0", 2, 1);
  ASSERT_TRUE(step().ok());
  traffic(key(2, 0), 50, 5000, 5000000);
  source.queue(key(2, 0))->budget_exhausted += 10;  // 60 polls, 50 re-armed
  source.queue(key(2, 0))->polls += 10;
  ASSERT_TRUE(step(100'000'000).ok());
  const auto* v = queue(key(2, 0));
  EXPECT_DOUBLE_EQ(v->packets_per_second, 50000.0);
  EXPECT_DOUBLE_EQ(v->events_per_second, 500.0);
  EXPECT_DOUBLE_EQ(v->polls_per_second, 600.0);
}

TEST_F(ControllerTest, RenamedDeviceTakesItsQueuesWithAFreshDim) {
  add_device("eth0", 2, 2);
  policy.by_name["eth0"] = shadow();
  policy.by_name["wan0"] = shadow("rule-2");
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 1), p);
  ASSERT_EQ(queue(key(2, 1))->dim.profile_ix, 2);
  // `ip link set eth0 name wan0`: same ifindex and NAPIs, another name (and another rule).
  net.devices["wan0"] = net.devices["eth0"];
  for (auto& q : source.current.queues) q.device_ix = fakes::device_ix(source.current, "wan0");
  ASSERT_TRUE(step().ok());
  for (int i = 0; i < 2; ++i) {
    const auto* v = queue(key(2, i));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->device, "wan0");
    EXPECT_EQ(v->dim.profile_ix, 0);  // the old device's DIM does not carry over
  }
  ASSERT_NE(device("wan0"), nullptr);
  EXPECT_EQ(device("wan0")->rule, "rule-2");
  EXPECT_EQ(device("eth0"), nullptr);  // retired: no queue and not listed
}

TEST_F(ControllerTest, ANewQueueHasNoRateAndNoWindowInItsFirstPeriod) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = shadow();
  traffic(key(2, 0), 5000, 500000, 500000000);  // counters from before dimctl started
  ASSERT_TRUE(step().ok());
  const auto* v = queue(key(2, 0));
  EXPECT_EQ(v->events_per_second, 0.0);
  EXPECT_EQ(v->dim.verdicts_total[0] + v->dim.verdicts_total[1] + v->dim.verdicts_total[2], 0u);
  EXPECT_EQ(device("eth0")->requested->rx_usecs, kEqe[0].usec);
  // 64 events after the first sample close the first window.
  traffic(key(2, 0), 64, 6400, 6400000);
  ASSERT_TRUE(step().ok());
  v = queue(key(2, 0));
  EXPECT_DOUBLE_EQ(v->events_per_second, 64 / 0.05);
  EXPECT_EQ(v->dim.verdicts_total[2], 1u);
}

TEST_F(ControllerTest, ANewQueueIsNotTheBusiestOnItsPastCounters) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = shadow();
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);
  ASSERT_EQ(device("eth0")->requested->rx_usecs, kEqe[2].usec);
  // A second NAPI appears with counters from before (a queue enabled by ethtool -L, a collector
  // that saw it earlier): in this period it did nothing, queue 0 had 100 events.
  seam::QueueCounters late = *source.queue(key(2, 0));
  late.key = key(2, 1);
  late.queue = -1;  // like veth: no queue index, no IRQ, no byte counter
  late.irq = -1;
  late.has_bytes = false;
  late.polls = 1'000'000;
  late.packets = 50'000'000;
  source.current.queues.push_back(late);
  traffic(key(2, 0), 100, 3000, 3000000);
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 1))->events_per_second, 0.0);
  EXPECT_EQ(device("eth0")->requested->rx_usecs, kEqe[2].usec);  // still queue 0's profile
}

TEST_F(ControllerTest, ReloadRecreatesDimWhenTheAlgorithmChanges) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = shadow();
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);
  ASSERT_EQ(queue(key(2, 0))->dim.profile_ix, 2);
  policy.by_name["eth0"].algorithm = seam::Algorithm::kNetCqe;
  ctl().reload_policies();
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 0);  // fresh instance on the CQE table
  EXPECT_EQ(device("eth0")->algorithm, seam::Algorithm::kNetCqe);
}

// The exported verdict and change totals are counters: they go on from the queue's earlier
// instances when DIM is re-created (a reload here), and stay while DIM is off.
TEST_F(ControllerTest, DecisionTotalsCarryOverWhenDimIsRecreated) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = shadow();
  for (int p = 0; p < 6; ++p) ramp_step(key(2, 0), p);
  const seam::DimView before = queue(key(2, 0))->dim;
  ASSERT_GE(before.profile_changes_total, 2u);
  ASSERT_GE(before.verdicts_total[2], 2u);  // better, climbing
  policy.by_name["eth0"].algorithm = seam::Algorithm::kNetCqe;
  ctl().reload_policies();
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 0))->dim.profile_changes_total, before.profile_changes_total);
  for (int v = 0; v < 3; ++v) {
    EXPECT_EQ(queue(key(2, 0))->dim.verdicts_total[v], before.verdicts_total[v]) << v;
  }
  for (int p = 6; p < 10; ++p) ramp_step(key(2, 0), p);
  const seam::DimView after = queue(key(2, 0))->dim;
  EXPECT_GT(after.profile_changes_total, before.profile_changes_total);
  EXPECT_GT(after.verdicts_total[0] + after.verdicts_total[1] + after.verdicts_total[2],
            before.verdicts_total[0] + before.verdicts_total[1] + before.verdicts_total[2]);
  // DIM off (a static profile): the totals stay as they were.
  policy.by_name["eth0"].algorithm = seam::Algorithm::kStatic;
  ctl().reload_policies();
  ASSERT_TRUE(step().ok());
  EXPECT_FALSE(queue(key(2, 0))->dim.active);
  EXPECT_EQ(queue(key(2, 0))->dim.profile_changes_total, after.profile_changes_total);
  EXPECT_EQ(queue(key(2, 0))->dim.verdicts_total[2], after.verdicts_total[2]);
}

}  // namespace
}  // namespace dimctl::controller::testing

namespace dimctl::controller::testing {
namespace {

// One controller with its own fakes, publishing every `publish_interval_ns`.
struct Rig : FakeRig {
  explicit Rig(int64_t publish_interval_ns) {
    source.current.time_ns = clock.now;
    auto add = [&](const std::string& name, uint32_t ifindex, int nqueues) {
      net.devices[name].state = fakes::RecordingNetActuator::full_coalesce(3, 32);
      for (int i = 0; i < nqueues; ++i) {
        seam::QueueCounters q;
        q.key = {ifindex, 100 * ifindex + static_cast<uint32_t>(i)};
        q.device_ix = fakes::device_ix(source.current, name);
        q.queue = i;
        q.has_bytes = true;
        source.current.queues.push_back(q);
      }
    };
    add("eth0", 2, 3);
    add("eth1", 3, 2);
    seam::DevicePolicy enforce;
    enforce.mode = seam::Mode::kEnforce;
    enforce.rule = "rule-1";
    enforce.rate_limit_ns = 3 * kPeriod;  // holds some changes pending
    policy.by_name["eth0"] = enforce;
    seam::DevicePolicy shadow = enforce;
    shadow.mode = seam::Mode::kShadow;
    shadow.rate_limit_ns = 0;
    shadow.compare = true;  // the cost model beside DIM: its queues take the model's path
    policy.by_name["eth1"] = shadow;
    ControllerOptions opts;
    opts.publish_interval_ns = publish_interval_ns;
    ctl = std::make_unique<Controller>(source, net, nullptr, store, policy, clock, opts);
  }
};

// A DIM instance that decided waits for its profile until the device's decision in the same step
// releases it (or a rate limit holds it). The controller carries the release out where the queue
// is next touched: at the step's view when it publishes, else at the queue's next feed (and, in a
// step the source breaks, for the queues not fed). All three must be what a release right after
// the decisions gives: a controller publishing every step (every release in the view) and one
// publishing once a second, fed the same noisy ramps with rate-limited writes and broken
// snapshots, write the same values in the same steps and show the same DIM state whenever both
// publish. And the shadow device's queues (every release granted, except in a broken step, which
// decides nothing; the cost model compared beside DIM) against standalone instances.
TEST(PendingRelease, IsTheSameWhetherAViewOrTheNextFeedCarriesItOut) {
  Rig every_step(0), every_second(20 * kPeriod);
  std::array<dim::NetDim, 2> eth1;  // queues 3 and 4
  Lcg rng;
  int broken = 0;
  for (int step_no = 0; step_no < 400; ++step_no) {
    const bool breaks = step_no % 7 == 6;  // the last queue's device index leaves the table
    for (size_t i = 0; i < every_step.source.current.queues.size(); ++i) {
      const int phase = (step_no + 29 * static_cast<int>(i)) % 160;
      const int level = phase < 80 ? phase : 160 - phase;
      const uint64_t pps = 200 + static_cast<uint64_t>(level) * level * 25;
      const uint64_t packets = pps / 20 + rng.next(static_cast<uint32_t>(pps / 40 + 1));
      const uint64_t events = std::clamp<uint64_t>(packets / 8, 3, 4000) + rng.next(7);
      const uint64_t bytes = packets * (64 + rng.next(1400));
      for (Rig* r : {&every_step, &every_second}) {
        seam::QueueCounters& q = r->source.current.queues[i];
        q.polls += events;
        q.packets += packets;
        q.bytes += bytes;
      }
    }
    std::array<bool, 2> ok{};
    int k = 0;
    for (Rig* r : {&every_step, &every_second}) {
      r->clock.advance(kPeriod);
      r->source.current.time_ns = r->clock.now;
      seam::QueueCounters& last = r->source.current.queues.back();
      const uint32_t ix = last.device_ix;
      if (breaks) last.device_ix = 99;
      ok[k++] = r->ctl->step().ok();
      last.device_ix = ix;
    }
    ASSERT_EQ(ok[0], !breaks) << "step " << step_no;
    ASSERT_EQ(ok[1], !breaks) << "step " << step_no;
    broken += breaks;
    // Queue 3 comes before the break, so it is fed in every step; queue 4 only in whole ones.
    for (size_t r = 0; r < eth1.size(); ++r) {
      const seam::QueueCounters& q = every_step.source.current.queues[3 + r];
      if (r == 0 || !breaks) {
        eth1[r].on_sample(
            dim::Sample::from_counters(every_step.clock.now, q.events(), q.packets, q.bytes));
      }
      if (!breaks) eth1[r].profile_applied();
    }
    if (!breaks) {
      for (const Rig* rig : {&every_step, &every_second}) {
        const auto st = rig->ctl->state();
        if (st->loops_total != static_cast<uint64_t>(step_no) + 1) continue;  // not published
        for (size_t r = 0; r < eth1.size(); ++r) {
          const seam::DimView& v = st->queues[3 + r].dim;
          EXPECT_EQ(v.measure_state, static_cast<uint8_t>(eth1[r].state()))
              << "step " << step_no << " queue " << 3 + r;
          EXPECT_EQ(v.profile_ix, eth1[r].profile_ix()) << "step " << step_no << " queue " << 3 + r;
          EXPECT_EQ(v.tune_state, static_cast<uint8_t>(eth1[r].tune_state()))
              << "step " << step_no << " queue " << 3 + r;
        }
      }
    }
    const auto& a = every_step.net.sets;
    const auto& b = every_second.net.sets;
    ASSERT_EQ(a.size(), b.size()) << "step " << step_no;
    if (!a.empty()) {
      EXPECT_EQ(a.back().dev, b.back().dev) << "step " << step_no;
      EXPECT_EQ(a.back().req, b.back().req) << "step " << step_no;
    }
    const auto sa = every_step.ctl->state(), sb = every_second.ctl->state();
    if (sb->loops_total != sa->loops_total || breaks) continue;  // b did not publish
    ASSERT_EQ(sa->queues.size(), sb->queues.size());
    for (size_t i = 0; i < sa->queues.size(); ++i) {
      const seam::DimView& va = sa->queues[i].dim;
      const seam::DimView& vb = sb->queues[i].dim;
      EXPECT_EQ(va.measure_state, vb.measure_state) << "step " << step_no << " queue " << i;
      EXPECT_EQ(va.profile_ix, vb.profile_ix) << "step " << step_no << " queue " << i;
      EXPECT_EQ(va.tune_state, vb.tune_state) << "step " << step_no << " queue " << i;
      EXPECT_EQ(va.profile_changes_total, vb.profile_changes_total)
          << "step " << step_no << " queue " << i;
      for (int v = 0; v < 3; ++v) {
        EXPECT_EQ(va.verdicts_total[v], vb.verdicts_total[v]) << "step " << step_no;
      }
    }
  }
  // The run exercised what it is about.
  EXPECT_EQ(broken, 57);
  EXPECT_GE(eth1[0].windows_evaluated(), 100u);
  EXPECT_GE(eth1[1].windows_evaluated(), 100u);
  const auto s = every_step.ctl->state();
  uint64_t changes = 0;
  for (const auto& q : s->queues) changes += q.dim.profile_changes_total;
  EXPECT_GE(changes, 40u);
  const auto eth0 = std::find_if(s->devices.begin(), s->devices.end(),
                                 [](const seam::DeviceView& d) { return d.name == "eth0"; });
  ASSERT_NE(eth0, s->devices.end());
  EXPECT_GE(eth0->applies_rate_limited_total, 5u);
  EXPECT_GE(every_step.net.sets.size(), 10u);
}

}  // namespace
}  // namespace dimctl::controller::testing
