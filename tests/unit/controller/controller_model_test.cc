// algorithm model: the controller runs the cost-model policy per queue and per CQ exactly as
// the library alone does on the same period deltas, writes its pick in enforce mode, re-creates
// it on reload, keeps it within the profile bounds, and with compare runs both policies side by
// side (writing only the algorithm's picks).
#include <gtest/gtest.h>

#include <vector>

#include "controller_fixture.h"
#include "dim/model_policy.h"
#include "dim/net_dim.h"

namespace dimctl::controller::testing {
namespace {

const dim::NetProfiles& kEqe = dim::net_profiles(dim::CqPeriodMode::kEqe, dim::Direction::kRx);

// The table the controller builds for a net device on its EQE table with default settings.
dim::ModelTable eqe_model(uint8_t lo = 0, uint8_t hi = 255) {
  return dim::ModelTable(kEqe, dim::ProfileCount::kPackets, dim::ModelParams{}, lo, hi);
}

seam::DevicePolicy with(seam::DevicePolicy p, seam::Algorithm a, bool compare = false) {
  p.algorithm = a;
  p.compare = compare;
  return p;
}

// Deterministic noise.
struct Lcg {
  uint64_t x = 777;
  uint32_t next(uint32_t mod) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>((x >> 33) % mod);
  }
};

class ModelTest : public ControllerTest {
 protected:
  // A period of `rate` packets per second at `ppe` packets per event on one queue.
  void load(const seam::QueueKey& k, double rate, uint64_t ppe) {
    const auto packets = static_cast<uint64_t>(rate * static_cast<double>(kPeriod) / 1e9);
    traffic(k, ppe ? packets / ppe : 0, packets, packets * 100);
  }
};

TEST_F(ModelTest, JumpsToThePredictedProfileInOnePeriodAndEnforceWritesIt) {
  add_device("eth0", 2, 1, fakes::RecordingNetActuator::full_coalesce(3, 32));
  policy.by_name["eth0"] = with(enforce(), seam::Algorithm::kModel);
  const dim::ModelTable t = eqe_model();
  ASSERT_TRUE(step().ok());  // first snapshot: no deltas yet, so nothing measured or written
  EXPECT_TRUE(queue(key(2, 0))->dim.model);
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, t.latency_ix());
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, 3u);
  EXPECT_TRUE(net.sets.empty());

  // From idle to a load the model puts on its last reachable profile: one period.
  const uint8_t target = t.pick(1e12);
  const double rate = t.threshold(target) * 3;
  ASSERT_EQ(t.pick(rate), target);
  ASSERT_GT(target, 1);
  load(key(2, 0), rate, 16);
  ASSERT_TRUE(step().ok());
  const auto* q = queue(key(2, 0));
  EXPECT_EQ(q->dim.profile_ix, target);
  EXPECT_EQ(q->dim.applied_ix, target);
  EXPECT_EQ(q->dim.profile_changes_total, 1u);
  EXPECT_EQ(q->wanted_usecs, kEqe[target].usec);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[target].usec);
  EXPECT_EQ(device("eth0")->algorithm, seam::Algorithm::kModel);
  EXPECT_EQ(comparison(key(2, 0)), nullptr);  // no compare asked for

  // Back to idle: one period, written.
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, t.pick(0));
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[t.pick(0)].usec);
}

TEST_F(ModelTest, MatchesTheLibraryFedTheSameDeltas) {
  add_device("eth0", 2, 1, fakes::RecordingNetActuator::full_coalesce(3, 32));
  policy.by_name["eth0"] = with(enforce(), seam::Algorithm::kModel);
  const dim::ModelTable t = eqe_model();
  dim::ModelPolicy ref(t);
  Lcg rng;
  ASSERT_TRUE(step().ok());
  int changes = 0;
  for (int p = 0; p < 300; ++p) {
    // Regimes from idle to saturation, QD=1 stretches, ±10 % noise.
    const double base = std::vector<double>{1e3, 1e5, 3e5, 8e5, 2e6, 5e4}[(p / 25) % 6];
    const double rate = base * (90 + rng.next(21)) / 100;
    const uint64_t ppe = (p / 40) % 3 == 2 ? 1 : 8;
    const auto packets = static_cast<uint64_t>(rate * static_cast<double>(kPeriod) / 1e9);
    traffic(key(2, 0), packets / ppe, packets, packets * 100);
    ASSERT_TRUE(step().ok());
    if (ref.update(t, {kPeriod, packets / ppe, packets})) ++changes;
    const auto* q = queue(key(2, 0));
    ASSERT_EQ(q->dim.profile_ix, ref.profile_ix()) << "period " << p;
    ASSERT_EQ(q->dim.profile_changes_total, ref.changes()) << "period " << p;
    ASSERT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[ref.profile_ix()].usec) << "period " << p;
  }
  EXPECT_GE(changes, 6) << "the load must exercise the model";
}

TEST_F(ModelTest, QueueDepthOneStaysOnTheLatencyProfile) {
  add_device("eth0", 2, 1, fakes::RecordingNetActuator::full_coalesce(3, 32));
  policy.by_name["eth0"] = with(enforce(), seam::Algorithm::kModel);
  ASSERT_TRUE(step().ok());
  for (int p = 0; p < 50; ++p) {
    load(key(2, 0), 2e5 + 1e4 * p, 1);  // one packet per interrupt at any rate
    ASSERT_TRUE(step().ok());
    ASSERT_EQ(queue(key(2, 0))->dim.profile_ix, 0) << p;
  }
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[0].usec);
  EXPECT_EQ(queue(key(2, 0))->dim.profile_changes_total, 0u);
}

TEST_F(ModelTest, BoundsClampTheModelsOwnChoice) {
  add_device("eth0", 2, 1, fakes::RecordingNetActuator::full_coalesce(3, 32));
  auto p = with(enforce(), seam::Algorithm::kModel);
  p.min_profile = 1;
  p.max_profile = 3;
  policy.by_name["eth0"] = p;
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 1);  // the lowest allowed is its latency profile
  load(key(2, 0), 1e8, 64);
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 3);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[3].usec);
  ASSERT_TRUE(step().ok());  // idle
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 1);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[1].usec);
  // The model counts only real moves: 1 -> 3 -> 1.
  EXPECT_EQ(queue(key(2, 0))->dim.profile_changes_total, 2u);

  // New bounds on reload re-create the model within them.
  p.max_profile = 2;
  policy.by_name["eth0"] = p;
  ctl().reload_policies();
  load(key(2, 0), 1e8, 64);
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 2);
}

TEST_F(ModelTest, ReloadSwitchingDimAndModelRecreatesState) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = shadow();
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);
  ASSERT_EQ(queue(key(2, 0))->dim.profile_ix, 2);
  ASSERT_FALSE(queue(key(2, 0))->dim.model);

  policy.by_name["eth0"] = with(shadow(), seam::Algorithm::kModel);
  ctl().reload_policies();
  load(key(2, 0), 100, 8);  // light load: the model stays where it starts
  ASSERT_TRUE(step().ok());
  const auto* q = queue(key(2, 0));
  EXPECT_TRUE(q->dim.model);
  EXPECT_EQ(q->dim.profile_ix, 0);  // a fresh model at the latency profile, not DIM's 2
  EXPECT_EQ(q->dim.profile_changes_total, 0u);
  EXPECT_EQ(device("eth0")->algorithm, seam::Algorithm::kModel);
  load(key(2, 0), 1e8, 64);
  ASSERT_TRUE(step().ok());
  ASSERT_GT(queue(key(2, 0))->dim.profile_ix, 2);

  policy.by_name["eth0"] = shadow();
  ctl().reload_policies();
  ASSERT_TRUE(step().ok());
  q = queue(key(2, 0));
  EXPECT_FALSE(q->dim.model);
  EXPECT_EQ(q->dim.profile_ix, 0);  // a fresh DIM, not the model's index
  EXPECT_EQ(q->dim.tune_state, static_cast<uint8_t>(dim::TuneState::kParkingOnTop));
}

// The table the controller builds for the net CQE table: idle-gap semantics, default costs.
dim::ModelTable cqe_idle_gap_table() {
  dim::ModelParams params;
  params.timer = dim::TimerMode::kIdleGap;
  return dim::ModelTable(dim::net_profiles(dim::CqPeriodMode::kCqe, dim::Direction::kRx),
                         dim::ProfileCount::kPackets, params);
}

TEST_F(ModelTest, ModelCqeUsesTheCqeTableAndMode) {
  add_device("eth0", 2, 1);  // reports use_cqe_mode_rx
  policy.by_name["eth0"] = with(enforce(), seam::Algorithm::kModelCqe);
  const auto& cqe = dim::net_profiles(dim::CqPeriodMode::kCqe, dim::Direction::kRx);
  const dim::ModelTable t = cqe_idle_gap_table();
  ASSERT_TRUE(step().ok());
  load(key(2, 0), t.threshold(t.pick(1e12)) * 3, 16);
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, t.pick(1e12));
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, cqe[t.pick(1e12)].usec);
  EXPECT_EQ(net.devices["eth0"].state.use_cqe_mode_rx, true);
}

TEST_F(ModelTest, ModelKeepsTheCqeModeTheDeviceWasFoundIn) {
  // A NIC found in CQE mode: model runs the CQE table under idle-gap semantics and never sends
  // the mode (switching it changes the device's timer, and some drivers pause traffic to switch).
  auto found = fakes::RecordingNetActuator::full_coalesce();
  found.use_cqe_mode_rx = true;
  add_device("eth0", 2, 1, found);
  policy.by_name["eth0"] = with(enforce(), seam::Algorithm::kModel);
  const auto& cqe = dim::net_profiles(dim::CqPeriodMode::kCqe, dim::Direction::kRx);
  const auto& eqe = dim::net_profiles(dim::CqPeriodMode::kEqe, dim::Direction::kRx);
  const dim::ModelTable t = cqe_idle_gap_table();
  ASSERT_TRUE(step().ok());
  load(key(2, 0), t.threshold(t.pick(1e12)) * 3, 16);
  ASSERT_TRUE(step().ok());
  const uint8_t ix = t.pick(1e12);
  ASSERT_NE(cqe[ix].usec, eqe[ix].usec);  // the two tables differ where the model ends
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, ix);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, cqe[ix].usec);
  EXPECT_EQ(net.devices["eth0"].state.use_cqe_mode_rx, true);
  ASSERT_FALSE(net.sets.empty());
  for (const auto& s : net.sets) EXPECT_FALSE(s.req.use_cqe_mode_rx.has_value());

  // The same device found in EQE mode: the EQE table, the mode untouched.
  found.use_cqe_mode_rx = false;
  add_device("eth1", 3, 1, found);
  policy.by_name["eth1"] = with(enforce(), seam::Algorithm::kModel);
  ctl().reload_policies();
  ASSERT_TRUE(step().ok());
  load(key(3, 0), 1000, 1);  // QD~1: the latency profile
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(net.devices["eth1"].state.rx_usecs, eqe[0].usec);
  EXPECT_EQ(net.devices["eth1"].state.use_cqe_mode_rx, false);
}

TEST_F(ModelTest, ACounterResetDecidesNothing) {
  add_device("eth0", 2, 1);
  policy.by_name["eth0"] = with(shadow(), seam::Algorithm::kModel);
  ASSERT_TRUE(step().ok());
  load(key(2, 0), 1e8, 64);
  ASSERT_TRUE(step().ok());
  const uint8_t high = queue(key(2, 0))->dim.profile_ix;
  ASSERT_GT(high, 0);
  // The counters go back (queue reset): the period has no usable delta, so the model neither
  // reads it as absurd load nor as no load, and stays.
  auto* q = source.queue(key(2, 0));
  q->polls = 3;
  q->packets = 3;
  q->bytes = 300;
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, high);
  EXPECT_EQ(queue(key(2, 0))->dim.profile_changes_total, 1u);
  // The next period is one series again: idle, so down.
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 0);
}

TEST_F(ModelTest, PerQueueDevicesGetEachQueuesOwnPick) {
  add_device("eth0", 2, 2, fakes::RecordingNetActuator::full_coalesce(3, 32), /*per_queue=*/true);
  policy.by_name["eth0"] = with(enforce(), seam::Algorithm::kModel);
  const dim::ModelTable t = eqe_model();
  ASSERT_TRUE(step().ok());
  const double heavy = t.threshold(t.pick(1e12)) * 3;
  load(key(2, 0), heavy, 16);
  load(key(2, 1), 100, 8);
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(net.devices["eth0"].queues[0].rx_usecs, kEqe[t.pick(1e12)].usec);
  EXPECT_EQ(net.devices["eth0"].queues[1].rx_usecs, kEqe[0].usec);
}

// Taking over a busy device writes nothing blind: each queue keeps the device's setting until
// the model has measured a period of traffic on it (the latency profile written at start would
// take a saturated queue's moderation away for the periods the model needs to see its load).
// An idle queue is left alone; a measured one is written, and stays written when it goes idle.
TEST_F(ModelTest, TakeoverWritesNothingBeforeTheQueueCarriesTraffic) {
  add_device("eth0", 2, 2, fakes::RecordingNetActuator::full_coalesce(64, 32), /*per_queue=*/true);
  add_device("eth1", 3, 2, fakes::RecordingNetActuator::full_coalesce(64, 32));
  policy.by_name["eth0"] = with(enforce(), seam::Algorithm::kModel);
  policy.by_name["eth1"] = with(enforce(), seam::Algorithm::kModel);
  const dim::ModelTable t = eqe_model();
  // What a queue of eth0 holds, as the driver would report it.
  const auto held = [&](uint32_t q) { return net.get_queue("eth0", q)->rx_usecs; };
  for (int s = 0; s < 3; ++s) ASSERT_TRUE(step().ok());  // idle: no traffic anywhere
  EXPECT_TRUE(net.sets.empty());
  EXPECT_EQ(held(0), 64u);
  EXPECT_EQ(net.devices["eth1"].state.rx_usecs, 64u);
  EXPECT_EQ(queue(key(2, 0))->wanted_usecs, 0u);
  EXPECT_FALSE(queue(key(2, 0))->dim.active);  // no DIM series for it yet

  // Traffic on one queue of each: that queue is written at its pick, its idle sibling is not
  // (per-queue), and the device-wide device follows the busy queue.
  const double heavy = t.threshold(t.pick(1e12)) * 3;
  load(key(2, 0), heavy, 16);
  load(key(3, 1), heavy, 16);
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(held(0), kEqe[t.pick(1e12)].usec);
  EXPECT_EQ(held(1), 64u);
  EXPECT_EQ(net.devices["eth1"].state.rx_usecs, kEqe[t.pick(1e12)].usec);
  EXPECT_TRUE(queue(key(2, 0))->dim.active);
  EXPECT_FALSE(queue(key(2, 1))->dim.active);

  // Idle again: measured queues go down to the latency profile; the never-busy one stays put.
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(held(0), kEqe[t.latency_ix()].usec);
  EXPECT_EQ(held(1), 64u);
  EXPECT_EQ(net.devices["eth1"].state.rx_usecs, kEqe[t.latency_ix()].usec);
  for (const auto& set : net.sets) EXPECT_NE(set.queue, std::optional<uint32_t>(1));
}

// compare: model beside net DIM. DIM is the algorithm: its profile is written, exactly as without
// compare; the model's picks are exported beside it and match the library alone.
TEST_F(ModelTest, CompareModelBesideDimWritesOnlyDim) {
  add_device("eth0", 2, 1, fakes::RecordingNetActuator::full_coalesce(3, 32));
  policy.by_name["eth0"] = with(enforce(), seam::Algorithm::kNetEqe, /*compare=*/true);
  const dim::ModelTable t = eqe_model();
  dim::ModelPolicy model_ref(t);
  dim::NetDim dim_ref;
  uint64_t dim_changes = 0;
  int64_t prev_t = 0;
  uint64_t prev_events = 0, prev_packets = 0;
  Lcg rng;
  for (int p = 0; p < 120; ++p) {
    uint64_t packets = 1000;
    for (int i = 0; i < p % 30; ++i) packets = packets * 6 / 5;
    packets += rng.next(100);
    traffic(key(2, 0), 100 + rng.next(20), packets, packets * 1000);
    ASSERT_TRUE(step().ok());
    const auto& c = *source.queue(key(2, 0));
    if (dim_ref.on_sample(
            dim::Sample::from_counters(source.current.time_ns, c.events(), c.packets, c.bytes))) {
      ++dim_changes;
    }
    if (dim_ref.state() == dim::MeasureState::kApplyNewProfile) dim_ref.profile_applied();
    if (p > 0) {
      model_ref.update(
          t, {source.current.time_ns - prev_t, c.events() - prev_events, c.packets - prev_packets});
    }
    prev_t = source.current.time_ns;
    prev_events = c.events();
    prev_packets = c.packets;

    const auto* q = queue(key(2, 0));
    ASSERT_FALSE(q->dim.model);
    ASSERT_EQ(q->dim.profile_ix, dim_ref.profile_ix()) << p;
    const auto* cmp = comparison(key(2, 0));
    ASSERT_NE(cmp, nullptr);
    ASSERT_EQ(cmp->dim_ix, dim_ref.profile_ix()) << p;
    ASSERT_EQ(cmp->model_ix, model_ref.profile_ix()) << p;
    ASSERT_EQ(cmp->model_changes_total, model_ref.changes()) << p;
    ASSERT_EQ(cmp->dim_changes_total, dim_changes) << p;
    ASSERT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[dim_ref.profile_ix()].usec) << p;
  }
  EXPECT_GE(dim_changes, 4u);
  EXPECT_GE(model_ref.changes(), 2u);
  EXPECT_TRUE(device("eth0")->compare);
}

// compare: dim beside the model. The model is written; DIM runs as in shadow (applied at once)
// and matches the library alone.
TEST_F(ModelTest, CompareDimBesideModelWritesOnlyTheModel) {
  add_device("eth0", 2, 1, fakes::RecordingNetActuator::full_coalesce(3, 32));
  auto p = with(enforce(), seam::Algorithm::kModel, /*compare=*/true);
  p.max_profile = 3;
  policy.by_name["eth0"] = p;
  const dim::ModelTable t = eqe_model(0, 3);
  dim::ModelPolicy model_ref(t);
  dim::NetDim dim_ref;
  int64_t prev_t = 0;
  uint64_t prev_events = 0, prev_packets = 0;
  bool dim_clamped = false;
  for (int s = 0; s < 120; ++s) {
    uint64_t packets = 1000;
    for (int i = 0; i < s % 30; ++i) packets = packets * 6 / 5;
    traffic(key(2, 0), 100, packets, packets * 1000);
    ASSERT_TRUE(step().ok());
    const auto& c = *source.queue(key(2, 0));
    dim_ref.on_sample(
        dim::Sample::from_counters(source.current.time_ns, c.events(), c.packets, c.bytes));
    if (dim_ref.state() == dim::MeasureState::kApplyNewProfile) dim_ref.profile_applied();
    if (s > 0) {
      model_ref.update(
          t, {source.current.time_ns - prev_t, c.events() - prev_events, c.packets - prev_packets});
    }
    prev_t = source.current.time_ns;
    prev_events = c.events();
    prev_packets = c.packets;

    const auto* q = queue(key(2, 0));
    ASSERT_TRUE(q->dim.model);
    ASSERT_EQ(q->dim.profile_ix, model_ref.profile_ix()) << s;
    const auto* cmp = comparison(key(2, 0));
    ASSERT_NE(cmp, nullptr);
    // DIM's pick after the bounds: what it would write as the algorithm.
    ASSERT_EQ(cmp->dim_ix, std::min<uint8_t>(dim_ref.profile_ix(), 3)) << s;
    dim_clamped |= dim_ref.profile_ix() > 3;
    ASSERT_EQ(cmp->model_ix, model_ref.profile_ix()) << s;
    // The first step has no deltas: nothing is written before the queue's first measured period.
    ASSERT_EQ(net.devices["eth0"].state.rx_usecs, s > 0 ? kEqe[model_ref.profile_ix()].usec : 3u)
        << s;
  }
  EXPECT_TRUE(dim_clamped) << "the ramp must take DIM past the bound";
}

TEST_F(ModelTest, ObserveRunsNeitherPolicy) {
  add_device("eth0", 2, 1);
  auto p = with(shadow(), seam::Algorithm::kModel, /*compare=*/true);
  p.mode = seam::Mode::kObserve;
  policy.by_name["eth0"] = p;
  load(key(2, 0), 1e8, 64);
  ASSERT_TRUE(step().ok());
  ASSERT_TRUE(step().ok());
  EXPECT_FALSE(queue(key(2, 0))->dim.active);
  EXPECT_EQ(comparison(key(2, 0)), nullptr);
}

// RDMA CQs: the model on the 9-profile table, alone and compared with RDMA DIM.
class ModelRdmaTest : public ControllerTest {
 protected:
  void add_cq(uint32_t cq_id, int32_t comp_vector = -1,
              seam::PollContext ctx = seam::PollContext::kSoftirq) {
    seam::CqCounters c;
    c.key = {0, cq_id};
    c.ibdev = "mlx5_0";
    c.poll_ctx = ctx;
    c.comp_vector = comp_vector;
    source.current.cqs.push_back(c);
  }
  const seam::CqView* cq(uint32_t cq_id) {
    hold_ = st();
    for (const auto& c : hold_->cqs) {
      if (c.counters.key.cq_id == cq_id) return &c;
    }
    return nullptr;
  }
  std::shared_ptr<const seam::ControllerState> hold_;
};

TEST_F(ModelRdmaTest, CqModelMatchesTheLibraryAndComparesWithRdmaDim) {
  add_cq(7);
  auto p = shadow();
  p.algorithm = seam::Algorithm::kModel;
  p.compare = true;
  policy.by_name["mlx5_0"] = p;
  const dim::ModelTable t(dim::kRdmaProfiles, dim::ProfileCount::kCompletions, dim::ModelParams{});
  dim::ModelPolicy ref(t);
  dim::RdmaDim dim_ref;
  int64_t prev_t = 0;
  Lcg rng;
  ASSERT_TRUE(step().ok());
  prev_t = source.current.time_ns;
  int changes = 0;
  for (int s = 0; s < 200; ++s) {
    const double rate = std::vector<double>{2e3, 4e5, 9e5, 4e4}[(s / 30) % 4];
    const auto comps = static_cast<uint64_t>(rate * 0.05 * (90 + rng.next(21)) / 100);
    const uint64_t events = (s / 70) % 3 == 2 ? comps : comps / 4 + 1;
    auto* c = source.cq({0, 7});
    c->events += events;
    c->completions += comps;
    ASSERT_TRUE(step().ok());
    if (ref.update(t, {source.current.time_ns - prev_t, events, comps})) ++changes;
    dim_ref.on_events(prev_t, source.current.time_ns, events, comps);
    dim_ref.profile_applied();
    prev_t = source.current.time_ns;
    const auto* v = cq(7);
    ASSERT_NE(v, nullptr);
    ASSERT_TRUE(v->dim.model);
    ASSERT_EQ(v->dim.profile_ix, ref.profile_ix()) << s;
    ASSERT_EQ(v->wanted_comps, dim::kRdmaProfiles[ref.profile_ix()].comps) << s;
    const auto* cmp = seam::comparison_at(hold_->cq_comparisons, 0);
    ASSERT_NE(cmp, nullptr);
    ASSERT_EQ(cmp->model_ix, ref.profile_ix()) << s;
    ASSERT_EQ(cmp->dim_ix, dim_ref.profile_ix()) << s;
  }
  EXPECT_GE(changes, 4);
}

TEST_F(ModelRdmaTest, CqModelAloneHasNoComparison) {
  add_cq(7);
  auto p = shadow();
  p.algorithm = seam::Algorithm::kModel;
  policy.by_name["mlx5_0"] = p;
  ASSERT_TRUE(step().ok());
  // Before a period with completions: the model decided nothing, so no wish and not active.
  ASSERT_TRUE(step().ok());
  EXPECT_FALSE(cq(7)->dim.active);
  EXPECT_EQ(cq(7)->wanted_comps, 0u);
  auto* c = source.cq({0, 7});
  c->events += 10'000;
  c->completions += 200'000;
  ASSERT_TRUE(step().ok());
  EXPECT_TRUE(cq(7)->dim.model);
  EXPECT_TRUE(cq(7)->dim.active);
  EXPECT_GT(cq(7)->dim.profile_ix, 0);
  EXPECT_GT(cq(7)->wanted_comps, 0u);
  EXPECT_TRUE(hold_->cq_comparisons.empty());
}

// CQs of one device on one completion vector share a core: each one's load is judged as the
// vector's (sharers = the vector's completion rate / its own, rounded down to a level), so each
// decides exactly as the library's policy on a table built with that many sharers.
struct CqLoad {
  uint32_t cq_id;
  int32_t comp_vector;
  seam::PollContext ctx;
  double share;    // of the step's rate
  double sharers;  // the level the controller must judge it with
};

class ModelShareTest : public ModelRdmaTest {
 protected:
  void expect_shared_decisions(const std::vector<CqLoad>& cqs, bool shared_load);
};

void ModelShareTest::expect_shared_decisions(const std::vector<CqLoad>& cqs, bool shared_load) {
  ModelShareTest& t = *this;
  auto p = t.shadow();
  p.algorithm = seam::Algorithm::kModel;
  p.model.shared_load = shared_load;
  t.policy.by_name["mlx5_0"] = p;
  std::vector<dim::ModelTable> tables;
  std::vector<dim::ModelPolicy> refs;
  for (const CqLoad& c : cqs) {
    t.add_cq(c.cq_id, c.comp_vector, c.ctx);
    dim::ModelParams params;
    params.cost.sharers = c.sharers;
    tables.emplace_back(dim::kRdmaProfiles, dim::ProfileCount::kCompletions, params);
  }
  for (const auto& table : tables) refs.emplace_back(table);
  ASSERT_TRUE(t.step().ok());
  int64_t prev_t = t.source.current.time_ns;
  std::vector<int> moved(cqs.size(), 0);
  Lcg rng;
  for (int s = 0; s < 120; ++s) {
    // A ramp through the range where sharing matters (the vector's load, not one CQ's, decides).
    const double rate = std::vector<double>{1e4, 6e4, 1.5e5, 3e5}[(s / 30) % 4];
    std::vector<std::pair<uint64_t, uint64_t>> deltas;
    for (const CqLoad& c : cqs) {
      const auto comps = static_cast<uint64_t>(rate * c.share * 0.05 * (95 + rng.next(11)) / 100);
      deltas.emplace_back(comps / 8 + 1, comps);
      auto* counters = t.source.cq({0, c.cq_id});
      counters->events += deltas.back().first;
      counters->completions += comps;
    }
    ASSERT_TRUE(t.step().ok());
    for (size_t i = 0; i < cqs.size(); ++i) {
      refs[i].update(tables[i],
                     {t.source.current.time_ns - prev_t, deltas[i].first, deltas[i].second});
      const auto* v = t.cq(cqs[i].cq_id);
      ASSERT_NE(v, nullptr);
      ASSERT_EQ(v->dim.profile_ix, refs[i].profile_ix()) << "cq " << cqs[i].cq_id << " step " << s;
      ASSERT_EQ(v->model_sharers, cqs[i].sharers) << "cq " << cqs[i].cq_id << " step " << s;
      moved[i] = std::max<int>(moved[i], refs[i].profile_ix());
    }
    prev_t = t.source.current.time_ns;
  }
  for (size_t i = 0; i < cqs.size(); ++i) EXPECT_GT(moved[i], 0) << "cq " << cqs[i].cq_id;
}

using K = seam::PollContext;

TEST_F(ModelShareTest, CqsOnOneVectorAreJudgedByTheVectorsLoad) {
  // Four alike on vector 0, one alone on vector 1, one on an unbound workqueue (any core) and
  // one without a known vector: only the four share.
  expect_shared_decisions({{1, 0, K::kSoftirq, 1, 4},
                           {2, 0, K::kSoftirq, 1, 4},
                           {3, 0, K::kWorkqueue, 1, 4},
                           {4, 0, K::kSoftirq, 1, 4},
                           {5, 1, K::kSoftirq, 1, 1},
                           {6, 0, K::kUnboundWorkqueue, 1, 1},
                           {7, -1, K::kSoftirq, 1, 1}},
                          /*shared_load=*/true);
}

TEST_F(ModelShareTest, UnequalSharersRoundToTheNearestLevel) {
  // Of the vector's load, 5/8 is one CQ's (1.6 sharers: level 2) and 1/8 each of three others'
  // (8: level 8). The levels' boundaries are their geometric means (1.41 and 2.45 around 2,
  // 6.9 and 9.8 around 8), beyond the steps' noise.
  expect_shared_decisions({{1, 2, K::kSoftirq, 5, 2},
                           {2, 2, K::kSoftirq, 1, 8},
                           {3, 2, K::kSoftirq, 1, 8},
                           {4, 2, K::kSoftirq, 1, 8}},
                          /*shared_load=*/true);
}

TEST_F(ModelShareTest, SharedLoadOffJudgesEachCqAlone) {
  expect_shared_decisions({{1, 0, K::kSoftirq, 1, 1},
                           {2, 0, K::kSoftirq, 1, 1},
                           {3, 0, K::kSoftirq, 1, 1},
                           {4, 0, K::kSoftirq, 1, 1}},
                          /*shared_load=*/false);
}

// Net queues polled on one CPU share it as CQs share a vector: a model queue is judged with the
// packets of every queue on its CPU (QueueCounters::cpu), whatever runs them.
class ModelCpuShareTest : public ModelTest {
 protected:
  struct NetLoad {
    seam::QueueKey key;
    uint16_t cpu;
    double sharers;  // 0: not a model queue
  };
  void expect_cpu_sharing(bool shared_load) {
    add_device("eth0", 2, 4);
    add_device("eth1", 3, 1);
    auto p = shadow();
    p.algorithm = seam::Algorithm::kModel;
    p.model.shared_load = shared_load;
    policy.by_name["eth0"] = p;
    policy.by_name["eth1"] = shadow();  // net DIM: its packets still load CPU 2
    const double on_cpu2 = shared_load ? 3 : 1;
    const std::vector<NetLoad> loads = {{key(2, 0), 2, on_cpu2},
                                        {key(2, 1), 2, on_cpu2},
                                        {key(2, 2), 5, 1},
                                        {key(2, 3), seam::QueueCounters::kNoCpu, 1},
                                        {key(3, 0), 2, 0}};
    for (const NetLoad& l : loads) source.queue(l.key)->cpu = l.cpu;
    std::vector<dim::ModelTable> tables;
    std::vector<dim::ModelPolicy> refs;
    for (const NetLoad& l : loads) {
      dim::ModelParams params;
      params.cost.sharers = std::max(l.sharers, 1.0);
      tables.emplace_back(kEqe, dim::ProfileCount::kPackets, params);
    }
    for (const auto& t : tables) refs.emplace_back(t);
    ASSERT_TRUE(step().ok());
    Lcg rng;
    std::vector<int> moved(loads.size(), 0);
    for (int s = 0; s < 120; ++s) {
      const double rate = std::vector<double>{2e4, 1.2e5, 3e5, 6e5}[(s / 30) % 4];
      std::vector<uint64_t> packets;
      for (const NetLoad& l : loads) {
        packets.push_back(static_cast<uint64_t>(rate * (95 + rng.next(11)) / 100 * kPeriod / 1e9));
        traffic(l.key, packets.back() / 8, packets.back(), packets.back() * 100);
      }
      ASSERT_TRUE(step().ok());
      for (size_t i = 0; i < loads.size(); ++i) {
        if (loads[i].sharers == 0) continue;
        refs[i].update(tables[i], {kPeriod, packets[i] / 8, packets[i]});
        const auto* q = queue(loads[i].key);
        ASSERT_NE(q, nullptr);
        ASSERT_EQ(q->dim.profile_ix, refs[i].profile_ix()) << "queue " << i << " step " << s;
        ASSERT_EQ(q->model_sharers, loads[i].sharers) << "queue " << i << " step " << s;
        ASSERT_EQ(q->counters.cpu, loads[i].cpu) << "queue " << i;
        moved[i] = std::max<int>(moved[i], refs[i].profile_ix());
      }
      EXPECT_EQ(queue(key(3, 0))->model_sharers, 0);  // no model there
    }
    for (size_t i = 0; i < 4; ++i) EXPECT_GT(moved[i], 0) << "queue " << i;
  }
};

TEST_F(ModelCpuShareTest, QueuesOnOneCpuAreJudgedByTheCpusPackets) {
  expect_cpu_sharing(true);
}

TEST_F(ModelCpuShareTest, SharedLoadOffJudgesEachQueueAlone) {
  expect_cpu_sharing(false);
}

// What the latency budget buys: each model queue's view carries its table's objective and budget,
// and the model's predictions at the view's rate for its own pick and for the latency profile,
// from the table its load was judged with (here two queues on one CPU: the 2-sharer table).
seam::DevicePolicy efficiency(seam::DevicePolicy p, int64_t budget_ns) {
  p.algorithm = seam::Algorithm::kModel;
  p.model.objective = dim::Objective::kEfficiency;
  p.model.latency_budget_ns = budget_ns;
  return p;
}

void expect_trade(const seam::ModelTrade& trade, const dim::ModelTable& t, uint8_t chosen_ix,
                  double rate) {
  EXPECT_EQ(trade.objective, t.params().objective);
  EXPECT_EQ(trade.chosen_ix, chosen_ix);
  EXPECT_EQ(trade.none_ix, t.latency_ix());
  const dim::Prediction chosen = t.prediction(chosen_ix, rate);
  const dim::Prediction none = t.prediction(t.latency_ix(), rate);
  EXPECT_DOUBLE_EQ(trade.chosen_added_delay_ns, chosen.added_delay_ns);
  EXPECT_DOUBLE_EQ(trade.chosen_cpu_per_completion_ns, chosen.cpu_per_completion_ns);
  EXPECT_DOUBLE_EQ(trade.none_added_delay_ns, none.added_delay_ns);
  EXPECT_DOUBLE_EQ(trade.none_cpu_per_completion_ns, none.cpu_per_completion_ns);
}

TEST_F(ModelTest, ModelQueuesShowTheirObjectiveAndPredictedTrade) {
  add_device("eth0", 2, 2);
  add_device("eth1", 3, 1);
  policy.by_name["eth0"] = efficiency(shadow(), 50'000);
  policy.by_name["eth1"] = shadow();  // net DIM: no model, no trade
  for (int i = 0; i < 2; ++i) source.queue(key(2, i))->cpu = 2;
  dim::ModelParams params;
  params.objective = dim::Objective::kEfficiency;
  params.latency_budget_ns = 50'000;
  params.cost.sharers = 2;
  const dim::ModelTable t(kEqe, dim::ProfileCount::kPackets, params);
  // A load at which the budget buys a profile above the latency one.
  double rate = 0;
  for (double r = 1e4; r < 2e6 && rate == 0; r *= 1.25) {
    if (t.pick(r) > t.latency_ix()) rate = r;
  }
  ASSERT_GT(rate, 0) << "the budget buys nothing at any rate";
  rate *= 1.5;
  ASSERT_GT(t.pick(rate), t.latency_ix());
  ASSERT_TRUE(step().ok());
  EXPECT_FALSE(queue(key(2, 0))->model_trade) << "nothing measured yet";
  for (int p = 0; p < 10; ++p) {
    for (int i = 0; i < 2; ++i) load(key(2, i), rate, 8);
    load(key(3, 0), rate, 8);
    ASSERT_TRUE(step().ok());
  }
  const auto* q = queue(key(2, 0));
  ASSERT_TRUE(q->model_trade);
  ASSERT_EQ(q->model_sharers, 2);
  EXPECT_EQ(q->dim.profile_ix, t.pick(rate));
  EXPECT_EQ(q->model_trade->objective, dim::Objective::kEfficiency);
  EXPECT_EQ(q->model_trade->latency_budget_ns, 50'000);
  expect_trade(*q->model_trade, t, q->dim.profile_ix, q->packets_per_second);
  // The budget bought CPU with delay.
  EXPECT_GT(q->model_trade->chosen_added_delay_ns, q->model_trade->none_added_delay_ns);
  EXPECT_LT(q->model_trade->chosen_cpu_per_completion_ns,
            q->model_trade->none_cpu_per_completion_ns);
  EXPECT_FALSE(queue(key(3, 0))->model_trade);

  // Under the latency objective: no budget.
  policy.by_name["eth0"] = with(shadow(), seam::Algorithm::kModel);
  ctl().reload_policies();
  for (int p = 0; p < 3; ++p) {
    for (int i = 0; i < 2; ++i) load(key(2, i), rate, 8);
    ASSERT_TRUE(step().ok());
  }
  q = queue(key(2, 1));
  ASSERT_TRUE(q->model_trade);
  params.objective = dim::Objective::kLatency;
  params.latency_budget_ns = 0;
  const dim::ModelTable latency(kEqe, dim::ProfileCount::kPackets, params);
  EXPECT_EQ(q->model_trade->objective, dim::Objective::kLatency);
  EXPECT_EQ(q->model_trade->latency_budget_ns, 0);
  expect_trade(*q->model_trade, latency, q->dim.profile_ix, q->packets_per_second);
}

TEST_F(ModelRdmaTest, ModelCqsShowTheirObjectiveAndPredictedTrade) {
  add_cq(7);
  add_cq(8);
  policy.by_name["mlx5_0"] = efficiency(shadow(), 100'000);
  dim::ModelParams params;
  params.objective = dim::Objective::kEfficiency;
  params.latency_budget_ns = 100'000;
  const dim::ModelTable t(dim::kRdmaProfiles, dim::ProfileCount::kCompletions, params);
  double rate = 0;
  for (double r = 1e4; r < 2e6 && rate == 0; r *= 1.25) {
    if (t.pick(r) > t.latency_ix()) rate = r;
  }
  ASSERT_GT(rate, 0) << "the budget buys nothing at any rate";
  rate *= 1.5;
  ASSERT_TRUE(step().ok());
  for (int s = 0; s < 10; ++s) {
    auto* c = source.cq({0, 7});
    const auto comps = static_cast<uint64_t>(rate * static_cast<double>(kPeriod) / 1e9);
    c->events += comps / 8;
    c->completions += comps;
    ASSERT_TRUE(step().ok());
  }
  const auto* v = cq(7);
  ASSERT_TRUE(v->model_trade);
  EXPECT_EQ(v->dim.profile_ix, t.pick(rate));
  EXPECT_EQ(v->model_trade->latency_budget_ns, 100'000);
  expect_trade(*v->model_trade, t, v->dim.profile_ix, v->completions_per_second);
  EXPECT_GT(v->model_trade->chosen_added_delay_ns, v->model_trade->none_added_delay_ns);
  EXPECT_FALSE(cq(8)->model_trade) << "a CQ without completions has measured nothing";
}

}  // namespace
}  // namespace dimctl::controller::testing
