// Method napi: every NAPI of the device is its own write target, written with napi-set under
// the same contract as the ethtool path (gate, rate limit, original recorded first, read-back,
// drift, restore), against FakeNapiActuator.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "controller_fixture.h"

namespace dimctl::controller::testing {
namespace {

using seam::NapiConfig;
using seam::SoftwareProfile;

class NapiControllerTest : public ControllerTest {
 protected:
  static seam::DevicePolicy napi_static(uint8_t ix, seam::Mode mode = seam::Mode::kEnforce) {
    seam::DevicePolicy p = enforce();
    p.mode = mode;
    p.method = seam::Method::kNapi;
    p.algorithm = seam::Algorithm::kStatic;
    p.static_index = ix;
    return p;
  }
  // The NAPIs of dnc1 (ifindex 5) see traffic, then one period passes.
  void busy_step(int64_t dt = kPeriod) {
    for (int q = 0; q < 2; ++q) {
      if (source.queue(key(5, q)) != nullptr) traffic(key(5, q), 100, 1000, 100000);
    }
    ASSERT_TRUE(step(dt).ok());
  }
  static NapiConfig expect(uint32_t defer, uint64_t timeout_ns) { return {defer, timeout_ns, 0}; }
};

// The net EQE table's profile 3 is 128 us: software profile {defer 1, 128 us}.
TEST_F(NapiControllerTest, EnforceWritesEveryNapiAndExportsTheReadBack) {
  add_napi_device("dnc1", 5, 2);
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  for (int q = 0; q < 2; ++q) {
    const uint32_t id = key(5, q).napi_id;
    EXPECT_EQ(napi.config(id), expect(1, 128'000)) << id;
    // The two fields written, as they were before: that is what a restore puts back.
    ASSERT_EQ(store.napis.count({"dnc1", id}), 1u);
    EXPECT_EQ(store.napis.at({"dnc1", id}), (NapiConfig{0, 0, std::nullopt}));
    const seam::QueueView* v = queue(key(5, q));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->wanted_software, (SoftwareProfile{1, 128'000}));
    EXPECT_EQ(v->napi_config, expect(1, 128'000));
    EXPECT_EQ(v->dim.applied_ix, 3);
  }
  EXPECT_EQ(napi.set_calls, 2);
  EXPECT_TRUE(net.sets.empty());  // no ethtool write: the driver has no coalescing
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->method, seam::Method::kNapi);
  EXPECT_EQ(d->applies_ok_total, 2u);
  EXPECT_EQ(d->last_error, "");
  // Unchanged wish: nothing written again.
  busy_step();
  EXPECT_EQ(napi.set_calls, 2);
}

TEST_F(NapiControllerTest, RuleSoftwareProfilesReplaceTheDefaults) {
  add_napi_device("dnc1", 5, 1);
  seam::DevicePolicy p = napi_static(2);
  p.software_profiles = {{{0, 0}, {1, 8'000}, {2, 50'000}, {2, 100'000}, {3, 200'000}}};
  policy.by_name["dnc1"] = p;
  busy_step();
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(2, 50'000));
}

// A profile of 0 usec (here from the rule's rx_profile) is no moderation: both fields 0.
TEST_F(NapiControllerTest, AZeroUsecProfileClearsModeration) {
  add_napi_device("dnc1", 5, 1, {3, 20'000, 0});
  seam::DevicePolicy p = napi_static(0);
  p.rx_profiles = {{{0, 256, 0}, {8, 128, 0}, {16, 64, 0}, {32, 64, 0}, {64, 64, 0}}};
  policy.by_name["dnc1"] = p;
  busy_step();
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(0, 0));
  EXPECT_EQ(store.napis.at({"dnc1", key(5, 0).napi_id}), (NapiConfig{3, 20'000, std::nullopt}));
}

TEST_F(NapiControllerTest, ShadowObserveAndUnnamedDevicesNeverWrite) {
  add_napi_device("dnc1", 5, 2);
  add_napi_device("dnc2", 6, 1);
  add_napi_device("dnc3", 7, 1);
  policy.by_name["dnc1"] = napi_static(3, seam::Mode::kShadow);
  policy.by_name["dnc2"] = napi_static(3, seam::Mode::kObserve);
  seam::DevicePolicy unnamed = napi_static(3);
  unnamed.rule.clear();  // enforce, but not allowlisted
  policy.by_name["dnc3"] = unnamed;
  for (int i = 0; i < 3; ++i) {
    traffic(key(6, 0), 100, 1000, 1000);
    traffic(key(7, 0), 100, 1000, 1000);
    busy_step();
  }
  EXPECT_EQ(napi.set_calls, 0);
  EXPECT_TRUE(store.napis.empty());
  EXPECT_EQ(store.napi_calls, 0);
  // Shadow exports the software profile enforce would apply, and what the NAPI holds.
  const seam::QueueView* v = queue(key(5, 0));
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->wanted_software, (SoftwareProfile{1, 128'000}));
  EXPECT_EQ(v->napi_config, expect(0, 0));
}

TEST_F(NapiControllerTest, OriginalIsRecordedBeforeTheWrite) {
  add_napi_device("dnc1", 5, 1);
  policy.by_name["dnc1"] = napi_static(3);
  size_t sets_at_record = 99;
  store.on_record = [&](const std::string&) { sets_at_record = napi.set_history.size(); };
  busy_step();
  EXPECT_EQ(sets_at_record, 0u);
  EXPECT_EQ(napi.set_history.size(), 1u);
}

TEST_F(NapiControllerTest, RecordFailureMeansNoWrite) {
  add_napi_device("dnc1", 5, 1);
  policy.by_name["dnc1"] = napi_static(3);
  store.fail_napi = true;
  busy_step();
  EXPECT_EQ(napi.set_calls, 0);
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(0, 0));
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->applies_failed_total, 1u);
  EXPECT_NE(d->last_error.find("recording its original settings failed"), std::string::npos)
      << d->last_error;
  // Once the store works again the write happens.
  store.fail_napi = false;
  busy_step();
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(1, 128'000));
}

TEST_F(NapiControllerTest, WritesAreRateLimitedPerDevice) {
  add_napi_device("dnc1", 5, 1);
  seam::DevicePolicy p = napi_static(3);
  p.rate_limit_ns = 1'000'000'000;
  policy.by_name["dnc1"] = p;
  busy_step();
  ASSERT_EQ(napi.set_calls, 1);
  p.static_index = 2;
  policy.by_name["dnc1"] = p;
  ctl().reload_policies();
  busy_step();  // 50 ms after the first write
  EXPECT_EQ(napi.set_calls, 1);
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_GE(d->applies_rate_limited_total, 1u);
  for (int i = 0; i < 20; ++i) busy_step();
  EXPECT_EQ(napi.set_calls, 2);
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(1, 64'000));
}

// Nothing notifies a napi-set: the controller reads back at most once per inventory interval,
// and a value it did not write stops writes to the device, as ethtool drift does.
TEST_F(NapiControllerTest, AnOutsideNapiSetIsDriftAndIsNotOverwritten) {
  add_napi_device("dnc1", 5, 2);
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  const uint32_t id = key(5, 0).napi_id;
  napi.external_set(id, {5, 7'000, std::nullopt});
  const int sets_before = napi.set_calls;
  for (int i = 0; i < 25; ++i) busy_step();  // > 1 s: one check
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->drifted);
  EXPECT_EQ(d->drift_total, 1u);  // one change, counted once however often it is read back
  EXPECT_NE(d->last_error.find("drift"), std::string::npos) << d->last_error;
  // A new wish is not written: the device belongs to the other writer now.
  seam::DevicePolicy p = napi_static(1);
  policy.by_name["dnc1"] = p;
  ctl().reload_policies();
  for (int i = 0; i < 3; ++i) busy_step();
  EXPECT_EQ(napi.set_calls, sets_before);
  EXPECT_EQ(napi.config(id), expect(5, 7'000));
  // restore() leaves a drifted device alone and forgets its records.
  EXPECT_TRUE(ctl().restore().ok());
  EXPECT_EQ(napi.config(id), expect(5, 7'000));
  EXPECT_TRUE(store.napis.empty());
}

// After a quiet period (the wish unchanged for longer than the inventory interval), the NAPI is
// read back before a new write: an outside change is seen before it would be overwritten.
TEST_F(NapiControllerTest, AWriteAfterAQuietPeriodChecksFirst) {
  add_napi_device("dnc1", 5, 1);
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  const uint32_t id = key(5, 0).napi_id;
  napi.external_set(id, {5, 7'000, std::nullopt});
  clock.advance(2'000'000'000);  // quiet: no step for 2 s, then a new wish in the same step
  policy.by_name["dnc1"] = napi_static(1);
  ctl().reload_policies();
  busy_step();
  EXPECT_EQ(napi.config(id), expect(5, 7'000));
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->drifted);
}

// veth turns GRO off and on: the NAPI is replaced by one with a new id and the defaults. The new
// one is a new target (recorded, written); the old one's record is kept while it might come
// back with its id (forget_gone_ns) and forgotten after that.
TEST_F(NapiControllerTest, ARecreatedNapiIsANewTargetAndTheOldRecordIsForgotten) {
  add_napi_device("dnc1", 5, 1);
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  const uint32_t old_id = key(5, 0).napi_id;
  ASSERT_EQ(store.napis.count({"dnc1", old_id}), 1u);
  napi.recreate(old_id, 9001);
  source.queue(key(5, 0))->key.napi_id = 9001;
  traffic({5, 9001}, 100, 1000, 1000);
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(napi.config(9001), expect(1, 128'000));
  EXPECT_EQ(store.napis.count({"dnc1", 9001}), 1u);
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(step().ok());  // > 1 s: seen gone
  EXPECT_EQ(store.napis.count({"dnc1", old_id}), 1u);
  ASSERT_TRUE(step(61'000'000'000).ok());  // past forget_gone_ns (60 s)
  ASSERT_TRUE(step(2'000'000'000).ok());   // the next check
  EXPECT_EQ(store.napis.count({"dnc1", old_id}), 0u);
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->drifted);
  EXPECT_EQ(d->last_error, "");
  // Exit: the live NAPI is put back, nothing is left in the store.
  EXPECT_TRUE(ctl().restore().ok());
  EXPECT_EQ(napi.config(9001), expect(0, 0));
  EXPECT_TRUE(store.napis.empty());
}

// igb after link down/up (Linux >= 6.13, per-NAPI config): the NAPI is gone for a while, then back
// with its id and with dimctl's settings. Its record is the same one: no new original (that
// would record our own values), no drift, and the exit puts the true original back.
TEST_F(NapiControllerTest, ANapiBackWithItsIdAndSettingsKeepsItsOriginal) {
  add_napi_device("dnc1", 5, 1, {2, 30'000, 0});
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  const uint32_t id = key(5, 0).napi_id;
  ASSERT_EQ(napi.config(id), expect(1, 128'000));
  napi.remove_napi(id);
  for (int i = 0; i < 25; ++i) busy_step();  // seen gone; not written while gone
  const int sets = napi.set_calls;
  napi.add_napi(5, id, expect(1, 128'000));
  for (int i = 0; i < 25; ++i) busy_step();  // seen back
  EXPECT_EQ(napi.set_calls, sets);           // its settings are ours: nothing to write
  ASSERT_EQ(store.napis.count({"dnc1", id}), 1u);
  EXPECT_EQ(store.napis.at({"dnc1", id}), (NapiConfig{2, 30'000, std::nullopt}));
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->drifted);
  EXPECT_TRUE(ctl().restore().ok());
  EXPECT_EQ(napi.config(id), expect(2, 30'000));
  EXPECT_TRUE(store.napis.empty());
}

// Back with its id but from the driver's defaults: written again, not drift, original kept.
TEST_F(NapiControllerTest, ANapiBackWithItsIdButDefaultsIsWrittenAgain) {
  add_napi_device("dnc1", 5, 1, {2, 30'000, 0});
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  const uint32_t id = key(5, 0).napi_id;
  napi.remove_napi(id);
  for (int i = 0; i < 25; ++i) busy_step();
  napi.add_napi(5, id, expect(0, 0));
  for (int i = 0; i < 50; ++i) busy_step();
  EXPECT_EQ(napi.config(id), expect(1, 128'000));
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->drifted);
  EXPECT_EQ(d->drift_total, 0u);
  EXPECT_EQ(store.napis.at({"dnc1", id}), (NapiConfig{2, 30'000, std::nullopt}));
  EXPECT_TRUE(ctl().restore().ok());
  EXPECT_EQ(napi.config(id), expect(2, 30'000));
}

TEST_F(NapiControllerTest, RestorePutsBackEveryNapiAndSkipsGoneOnes) {
  add_napi_device("dnc1", 5, 2, {2, 30'000, 0});
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  ASSERT_EQ(store.napis.size(), 2u);
  napi.remove_napi(key(5, 1).napi_id);  // gone before the check saw it
  EXPECT_TRUE(ctl().restore().ok());
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(2, 30'000));
  EXPECT_TRUE(store.napis.empty());
  // Nothing more is written afterwards.
  const int sets = napi.set_calls;
  busy_step();
  EXPECT_EQ(napi.set_calls, sets);
}

TEST_F(NapiControllerTest, AFailedRestoreKeepsTheRecord) {
  add_napi_device("dnc1", 5, 1);
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  napi.fail_sets(key(5, 0).napi_id, EBUSY);
  EXPECT_FALSE(ctl().restore().ok());
  EXPECT_EQ(store.napis.size(), 1u);  // for the daemon's store pass / `dimctl restore`
}

TEST_F(NapiControllerTest, ReloadHandsBackANapiDeviceNoLongerEnforced) {
  add_napi_device("dnc1", 5, 1, {2, 30'000, 0});
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  policy.by_name["dnc1"] = napi_static(3, seam::Mode::kShadow);
  ctl().reload_policies();
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(2, 30'000));
  EXPECT_TRUE(store.napis.empty());
  busy_step();
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(2, 30'000));
  // Enforced again: recorded afresh and written.
  policy.by_name["dnc1"] = napi_static(3);
  ctl().reload_policies();
  busy_step();
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(1, 128'000));
  EXPECT_EQ(store.napis.size(), 1u);
}

TEST_F(NapiControllerTest, ReloadToEthtoolHandsTheNapisBack) {
  add_napi_device("dnc1", 5, 1);
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  seam::DevicePolicy p = napi_static(3);
  p.method = seam::Method::kEthtool;
  policy.by_name["dnc1"] = p;
  ctl().reload_policies();
  EXPECT_EQ(napi.config(key(5, 0).napi_id), expect(0, 0));
  EXPECT_TRUE(store.napis.empty());
}

// auto: ethtool where the driver answers COALESCE_GET, napi where it has no coalescing.
TEST_F(NapiControllerTest, AutoPicksEthtoolOrNapiByTheDriver) {
  add_device("eth1", 4, 1, fakes::RecordingNetActuator::full_coalesce());
  add_napi_device("dnc1", 5, 1);
  seam::DevicePolicy p = napi_static(3);
  p.method = seam::Method::kAuto;
  policy.by_name["eth1"] = p;
  policy.by_name["dnc1"] = p;
  traffic(key(4, 0), 100, 1000, 1000);
  busy_step();
  EXPECT_EQ(device("eth1")->method, seam::Method::kEthtool);
  EXPECT_EQ(device("dnc1")->method, seam::Method::kNapi);
  EXPECT_EQ(net.sets_for("eth1").size(), 1u);
  EXPECT_EQ(napi.set_history.size(), 1u);
  EXPECT_EQ(napi.set_history[0].first, key(5, 0).napi_id);
}

TEST_F(NapiControllerTest, AutoFallsBackToEthtoolWithoutNapiSet) {
  napi.unavailable(DIMCTL_ERR(EOPNOTSUPP, "needs Linux >= 6.13"));
  add_napi_device("dnc1", 5, 1);
  seam::DevicePolicy p = napi_static(3);
  p.method = seam::Method::kAuto;
  policy.by_name["dnc1"] = p;
  busy_step();
  EXPECT_EQ(device("dnc1")->method, seam::Method::kEthtool);
  EXPECT_EQ(napi.set_calls, 0);
}

TEST_F(NapiControllerTest, MethodNapiWithoutNapiSetWritesNothingAndSaysWhy) {
  napi.unavailable(DIMCTL_ERR(EOPNOTSUPP, "needs Linux >= 6.13"));
  add_napi_device("dnc1", 5, 1);
  policy.by_name["dnc1"] = napi_static(3);
  busy_step();
  EXPECT_EQ(napi.set_calls, 0);
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->last_error.find("needs Linux >= 6.13"), std::string::npos) << d->last_error;
}

// A device without coalescing (veth, ifb) that is only watched is no error: a default shadow
// daemon on a host full of veths must not flag every one of them.
TEST_F(NapiControllerTest, ADeviceWithoutCoalescingIsNoErrorWhenNotWritten) {
  add_napi_device("dnc1", 5, 1);
  for (const seam::Mode mode : {seam::Mode::kShadow, seam::Mode::kObserve}) {
    seam::DevicePolicy p = shadow();
    p.mode = mode;
    p.algorithm = seam::Algorithm::kStatic;
    p.static_index = 3;
    policy.by_name["dnc1"] = p;
    ctl().reload_policies();
    busy_step();
    const seam::DeviceView* d = device("dnc1");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->last_error, "") << static_cast<int>(mode);
    EXPECT_EQ(d->coalescing, std::optional<bool>(false));
    EXPECT_EQ(d->applies_failed_total, 0u);
  }
  EXPECT_TRUE(net.sets_for("dnc1").empty());
  EXPECT_EQ(napi.set_calls, 0);
}

// Enforced with method ethtool, it is not written, not asked every period, and the error says
// what would moderate it; the error goes when the config stops enforcing it.
TEST_F(NapiControllerTest, ADeviceWithoutCoalescingEnforcedWithEthtoolSaysWhy) {
  add_napi_device("dnc1", 5, 1);
  add_device("eth1", 4, 1, fakes::RecordingNetActuator::full_coalesce());
  seam::DevicePolicy p = napi_static(3);
  p.method = seam::Method::kEthtool;
  policy.by_name["dnc1"] = p;
  policy.by_name["eth1"] = p;
  busy_step();
  const int gets_after_first = net.gets;
  for (int i = 0; i < 3; ++i) busy_step();
  const seam::DeviceView* d = device("dnc1");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->last_error.find("has no interrupt coalescing"), std::string::npos) << d->last_error;
  EXPECT_NE(d->last_error.find("method napi or auto"), std::string::npos) << d->last_error;
  EXPECT_EQ(d->applies_failed_total, 0u);
  EXPECT_TRUE(net.sets_for("dnc1").empty());
  EXPECT_EQ(net.gets, gets_after_first);  // no COALESCE_GET per period
  // The device beside it, with coalescing, is written as before and says nothing.
  EXPECT_EQ(net.sets_for("eth1").size(), 1u);
  EXPECT_EQ(device("eth1")->last_error, "");
  EXPECT_EQ(device("eth1")->coalescing, std::optional<bool>(true));

  p.mode = seam::Mode::kShadow;
  policy.by_name["dnc1"] = p;
  ctl().reload_policies();
  busy_step();
  EXPECT_EQ(device("dnc1")->last_error, "");
}

// A driver that answers COALESCE_GET with no rx parameter has nothing to write either.
TEST_F(NapiControllerTest, ADeviceReportingNoRxParameterIsRefusedAlike) {
  seam::Coalesce tx_only;
  tx_only.tx_usecs = 8;
  add_device("tx1", 6, 1, tx_only);
  seam::DevicePolicy p = napi_static(3);
  p.method = seam::Method::kEthtool;
  policy.by_name["tx1"] = p;
  for (int i = 0; i < 3; ++i) {
    traffic(key(6, 0), 100, 1000, 1000);
    ASSERT_TRUE(step().ok());
  }
  const seam::DeviceView* d = device("tx1");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->last_error.find("neither rx-usecs nor rx-frames"), std::string::npos)
      << d->last_error;
  EXPECT_EQ(d->coalescing, std::optional<bool>(false));
  EXPECT_TRUE(net.sets_for("tx1").empty());
}

// Any other failure to read the settings says nothing about the driver: it stays an error.
TEST_F(NapiControllerTest, AFailedReadOfAnotherKindIsStillAnError) {
  add_device("eth1", 4, 1, fakes::RecordingNetActuator::full_coalesce());
  net.devices["eth1"].get_errno = EPERM;
  policy.by_name["eth1"] = shadow();
  traffic(key(4, 0), 100, 1000, 1000);
  ASSERT_TRUE(step().ok());
  const seam::DeviceView* d = device("eth1");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->last_error.find("reading coalesce settings"), std::string::npos) << d->last_error;
  EXPECT_EQ(d->coalescing, std::optional<bool>(true));
}

// DIM as the algorithm: each NAPI follows its own instance, no combining.
TEST_F(NapiControllerTest, DimPicksPerNapiWithoutCombining) {
  add_napi_device("dnc1", 5, 2);
  seam::DevicePolicy p = enforce();
  p.method = seam::Method::kNapi;
  policy.by_name["dnc1"] = p;
  for (int period = 0; period < 8; ++period) {
    traffic(key(5, 1), 100, 1000, 1000);  // steady
    ramp_step(key(5, 0), period);         // climbing
  }
  const seam::QueueView* a = queue(key(5, 0));
  const seam::QueueView* b = queue(key(5, 1));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const uint8_t ia = a->dim.applied_ix;
  const uint8_t ib = queue(key(5, 1))->dim.applied_ix;
  EXPECT_NE(ia, ib);
  EXPECT_EQ(napi.config(key(5, 0).napi_id).gro_flush_timeout_ns,
            seam::default_software_profile(ia).gro_flush_timeout_ns);
}

// A renamed device keeps its NAPI records (they carry its ifindex): restore finds them under
// the new name, and one renamed to a name no rule enforces is handed back at once.
TEST_F(NapiControllerTest, NapiRecordsFollowARenamedDevice) {
  std::map<std::string, uint32_t> ifindex{{"dnc1", 5}};
  ControllerOptions o;
  o.list_net_devices = [&] {
    std::vector<std::string> names;
    for (const auto& [name, ix] : ifindex) names.push_back(name);
    return names;
  };
  o.net_ifindex = [&](const std::string& name) -> uint32_t {
    auto it = ifindex.find(name);
    return it == ifindex.end() ? 0 : it->second;
  };
  o.net_name = [&](uint32_t ix) -> std::string {
    for (const auto& [name, i] : ifindex) {
      if (i == ix) return name;
    }
    return "";
  };
  Controller c(source, net, nullptr, &napi, store, policy, clock, o);
  add_napi_device("dnc1", 5, 1, {2, 30'000, 0});
  policy.by_name["dnc1"] = napi_static(3);
  policy.by_name["dnc2"] = napi_static(3);
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i) {
      traffic(key(5, 0), 100, 1000, 1000);
      clock.advance(kPeriod);
      source.current.time_ns = clock.now;
      ASSERT_TRUE(c.step().ok());
    }
  };
  run(1);
  const uint32_t id = key(5, 0).napi_id;
  ASSERT_EQ(napi.config(id), expect(1, 128'000));
  // ip link set dnc1 name dnc2
  ifindex = {{"dnc2", 5}};
  std::replace(source.current.devices.begin(), source.current.devices.end(), std::string("dnc1"),
               std::string("dnc2"));
  net.devices["dnc2"] = net.devices["dnc1"];
  net.devices.erase("dnc1");
  run(25);
  EXPECT_EQ(store.napis.count({"dnc1", id}), 0u);
  EXPECT_EQ(store.napis.count({"dnc2", id}), 1u);
  EXPECT_EQ(napi.config(id), expect(1, 128'000));  // not re-recorded with our own value
  // Renamed again, to a name no rule enforces: handed back at once.
  ifindex = {{"other", 5}};
  std::replace(source.current.devices.begin(), source.current.devices.end(), std::string("dnc2"),
               std::string("other"));
  net.devices["other"] = net.devices["dnc2"];
  net.devices.erase("dnc2");
  run(25);
  EXPECT_EQ(napi.config(id), expect(2, 30'000));
  EXPECT_TRUE(store.napis.empty());
  EXPECT_TRUE(c.restore().ok());
}

}  // namespace
}  // namespace dimctl::controller::testing
