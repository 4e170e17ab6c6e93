// Controller decision paths: mode gate, allowlist, conflicts, originals, adaptive take-over,
// supported fields, rate limit, drift, devices coming and going, restore.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "controller_fixture.h"

namespace dimctl::controller::testing {
namespace {

using fakes::RecordingNetActuator;

const dim::NetProfiles& kEqe = dim::net_profiles(dim::CqPeriodMode::kEqe, dim::Direction::kRx);
const dim::NetProfiles& kCqe = dim::net_profiles(dim::CqPeriodMode::kCqe, dim::Direction::kRx);

seam::Coalesce initial() {
  return RecordingNetActuator::full_coalesce(3, 32);
}

TEST_F(ControllerTest, ShadowNeverWritesButExportsRequested) {
  add_device("eth0", 2, 2, initial());
  policy.by_name["eth0"] = shadow();
  for (int p = 0; p < 6; ++p) ramp_step(key(2, 0), p);

  EXPECT_TRUE(net.sets.empty());
  EXPECT_EQ(store.net_calls, 0);
  EXPECT_EQ(net.devices["eth0"].state, initial());
  const auto* q = queue(key(2, 0));
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(q->dim.active);
  EXPECT_EQ(q->dim.profile_ix, 3);  // the ramp climbed: DIM ran on virtual applies
  const auto* d = device("eth0");
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->requested.has_value());
  EXPECT_EQ(d->requested->rx_usecs, kEqe[3].usec);  // busiest queue's profile
  EXPECT_EQ(d->requested->rx_max_frames, kEqe[3].pkts);
  EXPECT_EQ(d->applied, initial());  // what the device really holds
  EXPECT_EQ(d->applies_ok_total, 0u);
}

TEST_F(ControllerTest, ObserveRunsNoDim) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].mode = seam::Mode::kObserve;
  for (int p = 0; p < 6; ++p) ramp_step(key(2, 0), p);

  EXPECT_TRUE(net.sets.empty());
  const auto* q = queue(key(2, 0));
  ASSERT_NE(q, nullptr);
  EXPECT_FALSE(q->dim.active);
  EXPECT_EQ(q->dim.verdicts_total[0] + q->dim.verdicts_total[1] + q->dim.verdicts_total[2], 0u);
  EXPECT_GT(q->events_per_second, 0.0);  // counters and rates still exported
  const auto* d = device("eth0");
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->requested.has_value());
  EXPECT_EQ(d->applied, initial());
}

TEST_F(ControllerTest, EnforceWritesOnlyAllowlistedDevices) {
  add_device("eth0", 2, 1, initial());
  add_device("eth1", 3, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth1"] = enforce("");  // enforce but named by no rule: never written
  for (int p = 0; p < 4; ++p) {
    traffic(key(3, 0), 100, 1000u << p, 1000000u << p);
    ramp_step(key(2, 0), p);
  }

  EXPECT_TRUE(net.sets_for("eth1").empty());
  EXPECT_EQ(net.devices["eth1"].state, initial());
  EXPECT_EQ(store.net.count("eth1"), 0u);
  ASSERT_FALSE(net.sets_for("eth0").empty());
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[2].usec);
  EXPECT_EQ(net.devices["eth0"].state.rx_max_frames, kEqe[2].pkts);
  const auto* d1 = device("eth1");
  ASSERT_NE(d1, nullptr);
  EXPECT_FALSE(d1->allowlisted);
  EXPECT_TRUE(d1->requested.has_value());  // still computed, like shadow
  const auto* d0 = device("eth0");
  ASSERT_NE(d0, nullptr);
  EXPECT_TRUE(d0->allowlisted);
  EXPECT_EQ(d0->applied, net.devices["eth0"].state);
}

TEST_F(ControllerTest, ConflictIsNeverWritten) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].conflict = "rules 'a' and 'b' disagree on mode";
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);

  EXPECT_TRUE(net.sets.empty());
  EXPECT_EQ(net.devices["eth0"].state, initial());
  const auto* d = device("eth0");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->last_error.find("rules 'a' and 'b'"), std::string::npos);
}

TEST_F(ControllerTest, OriginalRecordedBeforeFirstWrite) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  size_t sets_at_record = 99;
  store.on_record = [&](const std::string&) { sets_at_record = net.sets.size(); };
  ASSERT_TRUE(step().ok());

  ASSERT_EQ(net.sets.size(), 1u);  // profile 0 written in the first period
  EXPECT_EQ(sets_at_record, 0u);
  ASSERT_EQ(store.net.count("eth0"), 1u);
  EXPECT_EQ(store.net["eth0"], initial());
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[0].usec);
}

TEST_F(ControllerTest, WriteSkippedWhenRecordingFails) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  store.fail_net = true;
  for (int p = 0; p < 3; ++p) ramp_step(key(2, 0), p);

  EXPECT_TRUE(net.sets.empty());
  EXPECT_EQ(net.devices["eth0"].state, initial());
  const auto* d = device("eth0");
  ASSERT_NE(d, nullptr);
  EXPECT_GE(d->applies_failed_total, 1u);
  EXPECT_NE(d->last_error.find("recording"), std::string::npos);

  store.fail_net = false;  // the store recovers: the original is recorded, then written
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(store.net["eth0"], initial());
  EXPECT_EQ(net.sets.size(), 1u);
}

TEST_F(ControllerTest, AdaptiveTakenOverInTheSameWriteAndRestored) {
  seam::Coalesce adaptive = RecordingNetActuator::full_coalesce(3, 32, /*adaptive_rx=*/true);
  add_device("eth0", 2, 1, adaptive);
  policy.by_name["eth0"] = enforce();
  ASSERT_TRUE(step().ok());

  ASSERT_EQ(net.sets.size(), 1u);
  EXPECT_EQ(net.sets[0].req.use_adaptive_rx, false);
  EXPECT_EQ(net.sets[0].req.rx_usecs, kEqe[0].usec);
  EXPECT_FALSE(net.sets[0].req.use_adaptive_tx.has_value());  // TX is not ours
  EXPECT_EQ(store.net["eth0"].use_adaptive_rx, true);

  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(net.devices["eth0"].state.use_adaptive_rx, true);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, 3u);
  EXPECT_EQ(net.devices["eth0"].state.rx_max_frames, 32u);
  EXPECT_FALSE(net.sets.back().req.tx_usecs.has_value());  // only what we touched
}

TEST_F(ControllerTest, AdaptiveLeftAloneWithoutTakeOver) {
  seam::Coalesce adaptive = RecordingNetActuator::full_coalesce(3, 32, true);
  add_device("eth0", 2, 1, adaptive);
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].take_over_adaptive = false;
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);

  EXPECT_TRUE(net.sets.empty());
  EXPECT_EQ(store.net_calls, 0);
  EXPECT_EQ(net.devices["eth0"].state, adaptive);
  const auto* d = device("eth0");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->last_error.find("adaptive-rx"), std::string::npos);
  EXPECT_TRUE(d->requested.has_value());
}

TEST_F(ControllerTest, UnsupportedFieldsNeverSent) {
  seam::Coalesce usecs_only;
  usecs_only.rx_usecs = 3;
  usecs_only.tx_usecs = 3;
  add_device("eth0", 2, 1, usecs_only);
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].algorithm = seam::Algorithm::kNetCqe;  // no CQE mode reported
  for (int p = 0; p < 6; ++p) ramp_step(key(2, 0), p);

  ASSERT_GE(net.sets.size(), 2u);
  for (const auto& s : net.sets) {
    EXPECT_TRUE(s.req.rx_usecs.has_value());
    EXPECT_FALSE(s.req.rx_max_frames.has_value());
    EXPECT_FALSE(s.req.use_cqe_mode_rx.has_value());
    EXPECT_FALSE(s.req.use_adaptive_rx.has_value());
  }
  EXPECT_EQ(net.unsupported_sends, 0);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kCqe[3].usec);
}

TEST_F(ControllerTest, CqeModeSentOnceWhenTheDeviceReportsIt) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].algorithm = seam::Algorithm::kNetCqe;
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);

  ASSERT_GE(net.sets.size(), 2u);
  EXPECT_EQ(net.sets[0].req.use_cqe_mode_rx, true);
  EXPECT_EQ(net.sets[0].req.rx_usecs, kCqe[0].usec);
  EXPECT_EQ(net.sets[0].req.rx_max_frames, kCqe[0].pkts);
  EXPECT_FALSE(net.sets[1].req.use_cqe_mode_rx.has_value());  // already in CQE mode
  EXPECT_EQ(net.devices["eth0"].state.use_cqe_mode_rx, true);
}

TEST_F(ControllerTest, RateLimitSkipsWritesAndHoldsDimPending) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].rate_limit_ns = 10 * kPeriod;
  ramp_step(key(2, 0), 0);  // first write (profile 0): allowed
  ASSERT_EQ(net.sets.size(), 1u);
  ramp_step(key(2, 0), 1);  // DIM moves to 1: rate-limited
  EXPECT_EQ(net.sets.size(), 1u);
  const auto* d = device("eth0");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->applies_rate_limited_total, 1u);
  const auto* q = queue(key(2, 0));
  EXPECT_EQ(q->dim.profile_ix, 1);
  EXPECT_EQ(q->dim.measure_state, static_cast<uint8_t>(dim::MeasureState::kApplyNewProfile));

  for (int p = 2; p < 10; ++p) ramp_step(key(2, 0), p);  // still limited, DIM waits
  EXPECT_EQ(net.sets.size(), 1u);
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 1);
  ramp_step(key(2, 0), 10);  // 10 periods after the first write
  ASSERT_EQ(net.sets.size(), 2u);
  EXPECT_EQ(net.sets[1].req.rx_usecs, kEqe[1].usec);
  EXPECT_EQ(queue(key(2, 0))->dim.measure_state,
            static_cast<uint8_t>(dim::MeasureState::kStartMeasure));
  EXPECT_EQ(device("eth0")->applies_rate_limited_total, 9u);
}

TEST_F(ControllerTest, WritesOnlyWhenTheWantedValueChanges) {
  add_device("eth0", 2, 1, initial());
  net.devices["eth0"].quantize_usecs = [](uint32_t v) { return v < 10 ? 10 : v; };  // ENA-like
  policy.by_name["eth0"] = enforce();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(step().ok());  // no traffic: DIM stays at 0

  ASSERT_EQ(net.sets.size(), 1u);  // quantized read-back (10 != 1) does not cause rewrites
  const auto* d = device("eth0");
  EXPECT_EQ(d->applied->rx_usecs, 10u);
  EXPECT_EQ(d->requested->rx_usecs, kEqe[0].usec);
  EXPECT_EQ(d->drift_total, 0u);  // our own notifications are not drift
}

TEST_F(ControllerTest, DriftStopsWritesButDimKeepsRunning) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);
  const size_t writes = net.sets.size();
  ASSERT_GE(writes, 2u);
  EXPECT_EQ(device("eth0")->drift_total, 0u);

  seam::Coalesce theirs;
  theirs.rx_usecs = 99;
  net.external_set("eth0", theirs);  // e.g. tuned or an operator's ethtool -C
  for (int p = 4; p < 10; ++p) ramp_step(key(2, 0), p);

  EXPECT_EQ(net.sets.size(), writes);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, 99u);
  const auto* d = device("eth0");
  EXPECT_TRUE(d->drifted);
  EXPECT_EQ(d->drift_total, 1u);
  EXPECT_EQ(d->applied->rx_usecs, 99u);
  EXPECT_EQ(queue(key(2, 0))->dim.profile_ix, 4);  // DIM kept going

  ASSERT_TRUE(ctl().restore().ok());  // someone else owns it now: not restored
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, 99u);
}

TEST_F(ControllerTest, RestorePutsBackOriginalsAndStopsWriting) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);
  ASSERT_NE(net.devices["eth0"].state, initial());
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(net.devices["eth0"].state, initial());
  const size_t writes = net.sets.size();
  for (int p = 4; p < 8; ++p) ramp_step(key(2, 0), p);
  EXPECT_EQ(net.sets.size(), writes);
}

TEST_F(ControllerTest, RestoreForgetsWhatItPutBackAndKeepsWhatFailed) {
  add_device("eth0", 2, 1, initial());
  add_device("eth1", 3, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth1"] = enforce();
  for (int p = 0; p < 4; ++p) {
    traffic(key(3, 0), 100, 1000, 1000);
    ramp_step(key(2, 0), p);
  }
  ASSERT_EQ(store.net.size(), 2u);
  net.devices["eth1"].set_errno = EBUSY;
  EXPECT_FALSE(ctl().restore().ok());
  EXPECT_EQ(net.devices["eth0"].state, initial());
  // Put back: forgotten, so the daemon's store pass after restore() does not write it again.
  EXPECT_EQ(store.net.count("eth0"), 0u);
  // Not put back: the record stays for the store pass / `dimctl restore`.
  EXPECT_EQ(store.net.count("eth1"), 1u);
}

// Found by the churn soak: a written device deleted before SIGTERM made restore() fail, and
// `dimctl run` exit 1, although there is nothing to put back.
TEST_F(ControllerTest, RestoreOfAVanishedDeviceIsNotAFailure) {
  add_device("eth0", 2, 1, initial());
  add_device("eth1", 3, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth1"] = enforce();
  for (int p = 0; p < 4; ++p) {
    traffic(key(3, 0), 100, 1000, 1000);
    ramp_step(key(2, 0), p);
  }
  ASSERT_EQ(store.net.size(), 2u);
  remove_device("eth1");
  net.devices.erase("eth1");  // deleted: the kernel answers ENODEV
  ASSERT_TRUE(step().ok());

  EXPECT_TRUE(ctl().restore().ok());
  EXPECT_EQ(net.devices["eth0"].state, initial());
  EXPECT_EQ(store.net.count("eth0"), 0u);
  // Left for the daemon's exit pass over the store, which reports it gone and drops it.
  EXPECT_EQ(store.net.count("eth1"), 1u);
}

TEST_F(ControllerTest, ReloadOutOfEnforceHandsTheDeviceBackAtOnce) {
  add_device("eth0", 2, 1, initial());
  add_device("eth1", 3, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth1"] = enforce("rule-2");
  int p = 0;
  for (; p < 4; ++p) {
    traffic(key(3, 0), 100, 1000, 1000);
    ramp_step(key(2, 0), p);
  }
  ASSERT_NE(net.devices["eth0"].state, initial());
  ASSERT_NE(net.devices["eth1"].state, initial());
  const seam::Coalesce eth1_written = net.devices["eth1"].state;

  policy.by_name["eth0"] = shadow();  // eth1 stays enforced
  ctl().reload_policies();
  EXPECT_EQ(net.devices["eth0"].state, initial());
  EXPECT_EQ(store.net.count("eth0"), 0u);
  EXPECT_EQ(store.net.count("eth1"), 1u);
  EXPECT_EQ(net.devices["eth1"].state, eth1_written);
  const size_t eth0_writes = net.sets_for("eth0").size();
  for (; p < 8; ++p) ramp_step(key(2, 0), p);
  EXPECT_EQ(net.sets_for("eth0").size(), eth0_writes) << "shadow after the reload";
  EXPECT_FALSE(device("eth0")->drifted) << "our own restore is not drift";
  EXPECT_EQ(queue(key(2, 0))->dim.profile_changes_total > 0, true);

  // Enforced again: a fresh original (what the device holds now) is recorded, then written.
  net.devices["eth0"].state = RecordingNetActuator::full_coalesce(5, 40);
  policy.by_name["eth0"] = enforce();
  ctl().reload_policies();
  for (; p < 14; ++p) ramp_step(key(2, 0), p);
  EXPECT_GT(net.sets_for("eth0").size(), eth0_writes);
  EXPECT_EQ(store.net.at("eth0"), RecordingNetActuator::full_coalesce(5, 40));
}

TEST_F(ControllerTest, ReloadHandBackThatFailsKeepsTheRecordForExit) {
  add_device("eth0", 2, 1, initial(), /*per_queue=*/true);
  policy.by_name["eth0"] = enforce();
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);
  ASSERT_EQ(store.queues.size(), 1u);
  net.devices["eth0"].set_errno = EIO;
  policy.by_name["eth0"].rule.clear();  // no longer named by a rule
  ctl().reload_policies();
  EXPECT_EQ(store.queues.size(), 1u);
  ASSERT_TRUE(step().ok());
  EXPECT_NE(device("eth0")->last_error.find("reload: restoring eth0 queue 0"), std::string::npos)
      << device("eth0")->last_error;
  net.devices["eth0"].set_errno.reset();
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(net.devices["eth0"].queues.at(0), initial());
  EXPECT_TRUE(store.queues.empty());
}

TEST_F(ControllerTest, DeviceDisappearsAndReappearsWithItsPolicy) {
  add_device("eth0", 2, 1, initial());
  add_device("eth1", 3, 2, initial());
  policy.by_name["eth1"] = enforce();
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(st()->queues.size(), 3u);
  ASSERT_NE(device("eth1"), nullptr);
  const auto asked_before = std::count_if(policy.asked.begin(), policy.asked.end(),
                                          [](const auto& i) { return i.name == "eth1"; });

  remove_device("eth1");
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(st()->queues.size(), 1u);
  EXPECT_EQ(device("eth1"), nullptr);
  EXPECT_NE(device("eth0"), nullptr);

  // Comes back (ifup): new series, policy asked again, original not re-recorded with our values.
  add_device("eth1", 3, 2, net.devices["eth1"].state);
  ASSERT_TRUE(step().ok());
  ASSERT_NE(device("eth1"), nullptr);
  EXPECT_EQ(st()->queues.size(), 3u);
  const auto asked_after = std::count_if(policy.asked.begin(), policy.asked.end(),
                                         [](const auto& i) { return i.name == "eth1"; });
  EXPECT_EQ(asked_after, asked_before + 1);
  EXPECT_EQ(store.net["eth1"], initial());
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(net.devices["eth1"].state, initial());
}

TEST_F(ControllerTest, DeviceAppearingMidRunGetsItsPolicy) {
  add_device("eth0", 2, 1, initial());
  ASSERT_TRUE(step().ok());
  add_device("eth9", 9, 1, initial());
  policy.by_name["eth9"] = enforce();
  ASSERT_TRUE(step().ok());
  const auto* d = device("eth9");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->mode, seam::Mode::kEnforce);
  EXPECT_EQ(net.sets_for("eth9").size(), 1u);
  EXPECT_TRUE(net.sets_for("eth0").empty());
}

TEST_F(ControllerTest, ProfileBoundsClampWhatIsApplied) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].min_profile = 1;
  policy.by_name["eth0"].max_profile = 2;
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[1].usec);  // DIM at 0, clamped up to 1
  for (int p = 1; p < 10; ++p) ramp_step(key(2, 0), p);
  const auto* q = queue(key(2, 0));
  EXPECT_EQ(q->dim.profile_ix, 4);  // DIM itself is unmodified
  EXPECT_EQ(q->dim.applied_ix, 2);
  EXPECT_EQ(q->wanted_usecs, kEqe[4].usec);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[2].usec);
  for (const auto& s : net.sets) {
    EXPECT_GE(*s.req.rx_usecs, kEqe[1].usec);
    EXPECT_LE(*s.req.rx_usecs, kEqe[2].usec);
  }
}

TEST_F(ControllerTest, StaticAlgorithmWritesTheStaticProfile) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].algorithm = seam::Algorithm::kStatic;
  policy.by_name["eth0"].static_index = 3;
  for (int p = 0; p < 6; ++p) ramp_step(key(2, 0), p);
  ASSERT_EQ(net.sets.size(), 1u);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, kEqe[3].usec);
  EXPECT_FALSE(queue(key(2, 0))->dim.active);
}

TEST_F(ControllerTest, AlgorithmOffNeverWrites) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth0"].algorithm = seam::Algorithm::kOff;
  for (int p = 0; p < 6; ++p) ramp_step(key(2, 0), p);
  EXPECT_TRUE(net.sets.empty());
  EXPECT_FALSE(queue(key(2, 0))->dim.active);
}

TEST_F(ControllerTest, CustomRxProfilesAreUsed) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  dim::NetProfiles custom{{{2, 16, 0}, {4, 32, 0}, {6, 48, 0}, {10, 64, 0}, {20, 128, 0}}};
  policy.by_name["eth0"].rx_profiles = custom;
  for (int p = 0; p < 4; ++p) ramp_step(key(2, 0), p);
  EXPECT_EQ(net.devices["eth0"].state.rx_usecs, custom[2].usec);
  EXPECT_EQ(net.devices["eth0"].state.rx_max_frames, custom[2].pkts);
}

TEST_F(ControllerTest, PerQueueApplyWritesEachQueueItsOwnProfile) {
  add_device("eth0", 2, 2, initial(), /*per_queue=*/true);
  policy.by_name["eth0"] = enforce();
  for (int p = 0; p < 6; ++p) ramp_step(key(2, 0), p);  // only queue 0 has traffic

  for (const auto& s : net.sets) EXPECT_TRUE(s.queue.has_value()) << "no device-wide write";
  const auto& d = net.devices["eth0"];
  EXPECT_EQ(d.queues.at(0).rx_usecs, kEqe[3].usec);
  EXPECT_EQ(d.queues.at(1).rx_usecs, kEqe[0].usec);
  EXPECT_EQ(d.state, initial());
  EXPECT_EQ(store.queues.size(), 2u);
  EXPECT_EQ(store.queues[std::make_pair(std::string("eth0"), 0u)], initial());
  EXPECT_EQ(store.net_calls, 0);
  EXPECT_EQ(queue(key(2, 0))->dim.applied_ix, 3);
  EXPECT_EQ(queue(key(2, 1))->dim.applied_ix, 0);
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(net.devices["eth0"].queues.at(0), initial());
  EXPECT_EQ(net.devices["eth0"].queues.at(1), initial());
}

TEST_F(ControllerTest, PerQueueOriginalFailureSkipsOnlyThatWrite) {
  add_device("eth0", 2, 1, initial(), true);
  policy.by_name["eth0"] = enforce();
  store.fail_queue = true;
  ASSERT_TRUE(step().ok());
  EXPECT_TRUE(net.sets.empty());
  EXPECT_EQ(device("eth0")->applies_failed_total, 1u);
}

TEST_F(ControllerTest, WriteFailureIsCountedAndRetried) {
  add_device("eth0", 2, 1, initial());
  policy.by_name["eth0"] = enforce();
  net.devices["eth0"].set_errno = EBUSY;
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(device("eth0")->applies_failed_total, 1u);
  EXPECT_NE(device("eth0")->last_error.find("writing eth0"), std::string::npos);
  net.devices["eth0"].set_errno.reset();
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(device("eth0")->applies_ok_total, 1u);
  EXPECT_EQ(device("eth0")->last_error, "");
}

TEST_F(ControllerTest, SampleFailureIsCountedAndStatePublished) {
  add_device("eth0", 2, 1, initial());
  ASSERT_TRUE(step().ok());
  source.fail_next = true;
  auto r = step();
  EXPECT_FALSE(r.ok());
  auto s = st();
  EXPECT_EQ(s->sample_errors_total, 1u);
  EXPECT_EQ(s->loops_total, 2u);
  EXPECT_EQ(s->queues.size(), 1u);  // last known view kept
  EXPECT_TRUE(s->ready);
}

// A broken source: a queue whose device_ix is past the snapshot's name table. The snapshot is
// refused like a failed sample (counted, the last view kept, nothing decided or written), and
// the error names the queue.
TEST_F(ControllerTest, AQueueOutsideTheNameTableIsASampleError) {
  add_device("eth0", 2, 2, initial());
  add_device("eth1", 3, 2, initial());
  policy.by_name["eth0"] = enforce();
  policy.by_name["eth1"] = enforce();
  ASSERT_TRUE(step().ok());
  const size_t sets = net.sets.size();
  const uint32_t eth1 = source.queue(key(3, 1))->device_ix;
  source.queue(key(3, 1))->device_ix = 7;  // two names in the table
  for (int p = 0; p < 4; ++p) {
    traffic(key(2, 0), 100, 100'000, 1'000'000);
    auto r = step();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("napi 301 of ifindex 3: device index 7 outside the "
                                       "snapshot's 2 device name(s)"),
              std::string::npos)
        << r.error().message();
  }
  auto s = st();
  EXPECT_EQ(s->sample_errors_total, 4u);
  EXPECT_EQ(s->loops_total, 5u);
  EXPECT_EQ(s->queues.size(), 4u);  // last known view kept
  EXPECT_EQ(queue(key(2, 0))->counters.polls, 0u);
  EXPECT_EQ(net.sets.size(), sets);

  // Mended: used again.
  source.queue(key(3, 1))->device_ix = eth1;
  traffic(key(2, 0), 100, 100'000, 1'000'000);
  ASSERT_TRUE(step().ok());
  s = st();
  EXPECT_EQ(s->sample_errors_total, 4u);
  EXPECT_EQ(queue(key(3, 1))->device, "eth1");
  EXPECT_EQ(queue(key(2, 0))->counters.polls, 500u);
  EXPECT_GT(net.sets.size(), sets);  // what DIM decided meanwhile is written now
}

// The same on the first snapshot, where the first queue is already outside the table: no device
// is looked up, and the controller is not ready.
TEST_F(ControllerTest, AFirstSnapshotWithoutNamesLeavesTheControllerNotReady) {
  add_device("eth0", 2, 1, initial());
  source.current.devices.clear();
  EXPECT_FALSE(step().ok());
  EXPECT_FALSE(st()->ready);
  EXPECT_TRUE(st()->queues.empty());
  EXPECT_EQ(net.gets, 0);
}

TEST_F(ControllerTest, PublishedStateIsImmutableForReaders) {
  add_device("eth0", 2, 1, initial());
  ASSERT_TRUE(step().ok());
  auto held = st();
  const auto loops = held->loops_total;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(step().ok());
  EXPECT_EQ(held->loops_total, loops);  // a reader's copy is never reused under it
  EXPECT_EQ(st()->loops_total, loops + 5);
}

// One device-wide queue (eth0, napi 200, queue 0) behind fakes, with a publish interval.
struct OneQueueRig : FakeRig {
  explicit OneQueueRig(int64_t publish_interval_ns,
                       std::optional<seam::DevicePolicy> fallback = {}) {
    net.devices["eth0"].state = initial();
    seam::QueueCounters q;
    q.key = {2, 200};
    q.device_ix = fakes::device_ix(source.current, "eth0");
    q.queue = 0;
    source.current.queues.push_back(q);
    if (fallback) policy.fallback = *fallback;
    ControllerOptions opts;
    opts.publish_interval_ns = publish_interval_ns;
    ctl = std::make_unique<Controller>(source, net, nullptr, store, policy, clock, opts);
  }
  // One period: time moves on, the queue gets `packets` and `events`.
  Result<void> period(uint64_t packets = 0, uint64_t events = 0) {
    clock.advance(kPeriod);
    source.current.time_ns = clock.now;
    source.current.queues[0].packets += packets;
    source.current.queues[0].polls += events;
    return ctl->step();
  }
  const seam::QueueView& view() const { return ctl->state()->queues.at(0); }
};

TEST(ControllerPublish, PublishIntervalDecimatesTheViewNotTheDecisions) {
  seam::DevicePolicy enforce;
  enforce.mode = seam::Mode::kEnforce;
  enforce.rule = "r";
  enforce.rate_limit_ns = 0;
  OneQueueRig rig(3 * kPeriod, enforce);
  std::vector<uint64_t> loops;
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(rig.period().ok());
    loops.push_back(rig.ctl->state()->loops_total);
  }
  EXPECT_EQ(loops, (std::vector<uint64_t>{1, 1, 1, 4, 4, 4, 7}));
  EXPECT_EQ(rig.net.sets.size(), 1u);  // decisions and writes ran in every step regardless
}

// With a publish interval the view's rates average over it (no per-period delta is kept), and a
// discontinuity inside an interval leaves the next view without a rate rather than a wrong one.
TEST(ControllerPublish, RatesAverageOverThePublishInterval) {
  OneQueueRig rig(3 * kPeriod);
  ASSERT_TRUE(rig.period().ok());  // published: the first sample, no rate
  EXPECT_EQ(rig.view().packets_per_second, 0.0);
  ASSERT_TRUE(rig.period(10, 1).ok());
  ASSERT_TRUE(rig.period(20, 2).ok());
  ASSERT_TRUE(rig.period(30, 3).ok());  // published: 60 packets and 6 events over 150 ms
  EXPECT_DOUBLE_EQ(rig.view().packets_per_second, 400.0);
  EXPECT_DOUBLE_EQ(rig.view().events_per_second, 40.0);
  ASSERT_TRUE(rig.period(10, 1).ok());
  rig.source.current.queues[0].packets = 5;  // the queue was reset
  ASSERT_TRUE(rig.period().ok());
  ASSERT_TRUE(rig.period(30, 3).ok());  // published: the interval is not one series
  EXPECT_EQ(rig.view().packets_per_second, 0.0);
  EXPECT_EQ(rig.view().counters.packets, 35u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(rig.period(15, 1).ok());  // published: clean again
  EXPECT_DOUBLE_EQ(rig.view().packets_per_second, 300.0);
}

// A source that updates the snapshot in place (CounterSource::sample_into) gets back exactly what
// it wrote: the controller neither moves from it nor changes it, publishing or not.
class InPlaceSource final : public seam::CounterSource {
 public:
  Result<seam::Snapshot> sample() override { return DIMCTL_FAIL(ENOTSUP, "in place only"); }
  Result<void> sample_into(seam::Snapshot& out) override {
    if (calls++ > 0 && !(out.queues.size() == last.queues.size() && same(out, last))) {
      ++tampered;
    }
    if (out.queues.empty()) {
      out.queues.resize(3);
      out.devices = {"eth0"};
      for (uint32_t i = 0; i < 3; ++i) {
        out.queues[i].key = {2, 200 + i};
        out.queues[i].device_ix = 0;
        out.queues[i].queue = static_cast<int32_t>(i);
      }
    }
    out.time_ns += kPeriod;
    for (auto& q : out.queues) {
      q.polls += 100;
      q.packets += 1000;
    }
    last = out;
    return ok();
  }
  static bool same(const seam::Snapshot& a, const seam::Snapshot& b) {
    for (size_t i = 0; i < a.queues.size(); ++i) {
      const auto& x = a.queues[i];
      const auto& y = b.queues[i];
      if (x.key != y.key || x.device_ix != y.device_ix || x.queue != y.queue ||
          x.polls != y.polls || x.packets != y.packets) {
        return false;
      }
    }
    return a.devices == b.devices && a.time_ns == b.time_ns;
  }
  int calls = 0;
  int tampered = 0;
  seam::Snapshot last;
};

TEST(ControllerSource, AnInPlaceSourceGetsItsSnapshotBackUntouched) {
  InPlaceSource source;
  fakes::RecordingNetActuator net;
  fakes::FakeOriginalsStore store;
  fakes::FakePolicySource policy;
  fakes::FakeClock clock;
  net.devices["eth0"].state = initial();
  ControllerOptions opts;
  opts.publish_interval_ns = 2 * kPeriod;
  Controller ctl(source, net, nullptr, store, policy, clock, opts);
  for (int i = 0; i < 6; ++i) {
    clock.advance(kPeriod);
    ASSERT_TRUE(ctl.step().ok());
  }
  EXPECT_EQ(source.calls, 6);
  EXPECT_EQ(source.tampered, 0);
  const auto st = ctl.state();
  ASSERT_EQ(st->queues.size(), 3u);
  EXPECT_EQ(st->queues[2].device, "eth0");
  EXPECT_EQ(st->queues[2].counters.polls, 500u);  // published at the 5th sample
  EXPECT_GT(st->queues[2].dim.verdicts_total[0] + st->queues[2].dim.verdicts_total[1] +
                st->queues[2].dim.verdicts_total[2],
            0u);
}

}  // namespace
}  // namespace dimctl::controller::testing
