// NapiWrites: one NAPI's record, its original before the first write, the write's read-back,
// drift and gone NAPIs found by reading back, and handing a device's NAPIs back.
#include "dimctl/controller/napi_writes.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "fakes/controller_fakes.h"
#include "fakes/fake_napi_actuator.h"

namespace dimctl::controller {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr uint32_t kIfindex = 7;
constexpr uint32_t kNapi = 8193;
const seam::QueueKey kKey{kIfindex, kNapi};

struct Rig {
  Rig()
      : writes(&napi, store, 60 * kSecond, kSecond,
               [this](const std::string& d, uint32_t id) { drifts.emplace_back(d, id); }) {
    napi.add_device(kIfindex);
    napi.add_napi(kIfindex, kNapi);
  }
  fakes::FakeNapiActuator napi;
  fakes::FakeOriginalsStore store;
  std::vector<std::pair<std::string, uint32_t>> drifts;
  NapiWrites writes;
};

const seam::SoftwareProfile kWant{2, 50'000};

TEST(NapiWrites, RecordsTheOriginalThenWritesAndKeepsTheReadBack) {
  Rig rig;
  NapiRecord& rec = rig.writes.record(kKey, "veth1");
  EXPECT_EQ(rec.device, "veth1");
  ASSERT_TRUE(rig.writes.record_original("veth1", kNapi, rec, "veth1 napi 8193"));
  EXPECT_EQ(rig.store.napis.count({"veth1", kNapi}), 1u);
  ASSERT_TRUE(rig.writes.write(kNapi, rec, kWant, 5, "veth1 napi 8193"));
  EXPECT_EQ(rec.target, kWant);
  EXPECT_EQ(rec.checked_ns, 5);
  ASSERT_TRUE(rig.writes.current(kNapi));
  EXPECT_EQ(rig.writes.current(kNapi)->defer_hard_irqs, 2u);
  EXPECT_TRUE(rig.writes.has_originals("veth1"));
  EXPECT_EQ(rig.writes.recorded_ifindex("veth1"), kIfindex);
}

TEST(NapiWrites, AFailedRecordIsTheDevicesErrorAndWritesNothing) {
  Rig rig;
  rig.store.fail_napi = true;
  NapiRecord& rec = rig.writes.record(kKey, "veth1");
  auto r = rig.writes.record_original("veth1", kNapi, rec, "veth1 napi 8193");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("not writing veth1 napi 8193: recording its original"),
            std::string::npos);
  EXPECT_FALSE(rec.original);
  EXPECT_TRUE(rig.napi.set_history.empty());
}

TEST(NapiWrites, AValueSomeoneElseWroteIsDriftOnce) {
  Rig rig;
  NapiRecord& rec = rig.writes.record(kKey, "veth1");
  ASSERT_TRUE(rig.writes.record_original("veth1", kNapi, rec, "w"));
  ASSERT_TRUE(rig.writes.write(kNapi, rec, kWant, 0, "w"));
  EXPECT_TRUE(rig.writes.check_due(0));  // never read back yet
  rig.writes.check_all(0);
  EXPECT_FALSE(rig.writes.check_due(kSecond / 2));
  EXPECT_TRUE(rig.writes.check_due(kSecond));
  rig.writes.check_all(kSecond);
  EXPECT_TRUE(rig.drifts.empty());
  rig.napi.external_set(kNapi, {5, 1000, std::nullopt});
  rig.writes.check_all(2 * kSecond);
  rig.writes.check_all(3 * kSecond);
  ASSERT_EQ(rig.drifts.size(), 1u);
  EXPECT_EQ(rig.drifts[0], std::make_pair(std::string("veth1"), kNapi));
}

TEST(NapiWrites, AGoneNapiIsForgottenAfterTheGrace) {
  Rig rig;
  NapiRecord& rec = rig.writes.record(kKey, "veth1");
  ASSERT_TRUE(rig.writes.record_original("veth1", kNapi, rec, "w"));
  ASSERT_TRUE(rig.writes.write(kNapi, rec, kWant, 0, "w"));
  rig.napi.remove_napi(kNapi);
  rig.writes.check_all(kSecond);
  EXPECT_TRUE(rig.writes.has_originals("veth1"));  // kept: it may come back with its id
  rig.writes.check_all(61 * kSecond);
  EXPECT_FALSE(rig.writes.has_originals("veth1"));
  EXPECT_EQ(rig.store.napis.count({"veth1", kNapi}), 0u);
  EXPECT_FALSE(rig.writes.check_due(62 * kSecond));  // no record left
}

TEST(NapiWrites, ReleasePutsTheOriginalBackAndForgetDropsTheRecord) {
  Rig rig;
  NapiRecord& rec = rig.writes.record(kKey, "veth1");
  ASSERT_TRUE(rig.writes.record_original("veth1", kNapi, rec, "w"));
  ASSERT_TRUE(rig.writes.write(kNapi, rec, kWant, 0, "w"));
  size_t failures = 0;
  ASSERT_TRUE(rig.writes.release("veth1", failures));
  EXPECT_EQ(failures, 0u);
  EXPECT_EQ(rig.writes.current(kNapi)->defer_hard_irqs, 0u);
  EXPECT_FALSE(rec.target);
  ASSERT_TRUE(rig.writes.forget("veth1"));
  EXPECT_FALSE(rig.writes.has_originals("veth1"));
  EXPECT_EQ(rig.store.napis.count({"veth1", kNapi}), 0u);
}

TEST(NapiWrites, RecordsFollowARename) {
  Rig rig;
  NapiRecord& rec = rig.writes.record(kKey, "veth1");
  ASSERT_TRUE(rig.writes.record_original("veth1", kNapi, rec, "w"));
  // Until the rename is followed, the record keeps the name its original is stored under.
  EXPECT_EQ(rig.writes.record(kKey, "veth9").device, "veth1");
  rig.writes.rename({{"veth1", "veth9"}});
  std::vector<std::string> names;
  rig.writes.add_names_with_originals(names);
  EXPECT_EQ(names, std::vector<std::string>{"veth9"});
}

TEST(NapiWrites, WithoutAnActuatorNothingIsAvailable) {
  fakes::FakeOriginalsStore store;
  NapiWrites writes(nullptr, store, kSecond, kSecond, [](const std::string&, uint32_t) {});
  EXPECT_FALSE(writes.available());
  EXPECT_EQ(writes.unavailable_reason(), "method napi: no netdev netlink; not written");
}

}  // namespace
}  // namespace dimctl::controller
