// Renamed and re-created devices (ControllerOptions::net_ifindex / net_name): what dimctl
// recorded follows the device, not the name. Found by the churn soak (tests/kernel/soak): a tap
// dimctl had written and that was renamed within the allowlist was recorded again under its new
// name with dimctl's own value as its "original", and restored to that at exit; one renamed out
// of the allowlist kept dimctl's value for good; a drifted one renamed was written again; a tap
// re-created under a deleted one's name got the deleted one's original at exit (and the records
// of every deleted device were kept for the life of the process, in the state file too).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dim/profile.h"
#include "dimctl/controller/controller.h"
#include "fakes/controller_fakes.h"

namespace dimctl::controller::testing {
namespace {

using fakes::RecordingNetActuator;
constexpr int64_t kPeriod = 50'000'000;

class RenameTest : public ::testing::Test {
 protected:
  Controller& ctl() {
    if (!controller_) {
      ControllerOptions o;
      o.list_net_devices = [this] { return inventory; };
      o.inventory_interval_ns = 1'000'000'000;
      o.net_ifindex = [this](const std::string& name) -> uint32_t {
        auto it = ifindex.find(name);
        return it == ifindex.end() ? 0 : it->second;
      };
      o.net_name = [this](uint32_t ix) -> std::string {
        for (const auto& [name, i] : ifindex) {
          if (i == ix) return name;
        }
        return "";
      };
      o.forget_gone_ns = 5'000'000'000;
      controller_ = std::make_unique<Controller>(source, net, nullptr, store, policy, clock, o);
    }
    return *controller_;
  }
  void step(int n = 1) {
    for (int i = 0; i < n; ++i) {
      clock.advance(kPeriod);
      source.current.time_ns = clock.now;
      ASSERT_TRUE(ctl().step().ok());
    }
  }
  // Past the next inventory refresh.
  void second() { step(21); }

  // A tap-like device, known through the inventory, with a NAPI in the snapshot or without.
  void add_tap(const std::string& name, uint32_t ix, uint32_t frames, bool with_queue = false) {
    net.devices[name].state = RecordingNetActuator::full_coalesce(3, frames);
    ifindex[name] = ix;
    inventory.push_back(name);
    if (with_queue) {
      seam::QueueCounters q;
      q.key = {ix, 100 * ix};
      q.device_ix = fakes::device_ix(source.current, name);
      source.current.queues.push_back(q);
    }
  }
  // `ip link set FROM name TO`: the same device (ifindex, settings, NAPIs) under another name.
  // The collector names queues by ifindex at every sample; the inventory is re-read once a second.
  void rename(const std::string& from, const std::string& to) {
    auto node = net.devices.extract(from);
    node.key() = to;
    net.devices.insert(std::move(node));
    ifindex[to] = ifindex.at(from);
    ifindex.erase(from);
    std::replace(inventory.begin(), inventory.end(), from, to);
    std::replace(source.current.devices.begin(), source.current.devices.end(), from, to);
  }
  // `ip link del NAME`.
  void remove(const std::string& name) {
    net.devices.erase(name);
    ifindex.erase(name);
    std::erase(inventory, name);
    std::erase_if(source.current.queues, [&](const seam::QueueCounters& q) {
      return source.current.device_of(q) == name;
    });
  }
  uint32_t frames(const std::string& name) { return *net.devices.at(name).state.rx_max_frames; }
  size_t writes(const std::string& name) { return net.sets_for(name).size(); }

  static seam::DevicePolicy static_enforce(uint8_t ix) {
    seam::DevicePolicy p;
    p.mode = seam::Mode::kEnforce;
    p.rule = "taps";
    p.rate_limit_ns = 0;
    p.algorithm = seam::Algorithm::kStatic;
    p.static_index = ix;
    return p;
  }
  void SetUp() override {
    for (const char* name : {"tap0", "tap1", "tap2"}) policy.by_name[name] = static_enforce(3);
    written_ = dim::net_profiles(dim::CqPeriodMode::kEqe, dim::Direction::kRx)[3].pkts;
  }

  fakes::FakeCounterSource source;
  RecordingNetActuator net;
  fakes::FakeOriginalsStore store;
  fakes::FakePolicySource policy;  // fallback: shadow, no rule
  fakes::FakeClock clock;
  std::vector<std::string> inventory;
  std::map<std::string, uint32_t> ifindex;
  uint32_t written_ = 0;  // rx-frames of static profile 3

 private:
  std::unique_ptr<Controller> controller_;
};

TEST_F(RenameTest, RenamedWithinTheAllowlistTheOriginalFollows) {
  add_tap("tap0", 7, 11, /*with_queue=*/true);
  step();
  ASSERT_EQ(frames("tap0"), written_);
  ASSERT_EQ(store.net.count("tap0"), 1u);

  rename("tap0", "tap1");
  step();  // the snapshot names tap1 before the inventory does: its first write finds the record
  EXPECT_EQ(store.net_calls, 1) << "dimctl's own value recorded as the renamed device's original";
  EXPECT_EQ(store.net.count("tap0"), 0u);
  ASSERT_EQ(store.net.count("tap1"), 1u);
  EXPECT_EQ(store.net.at("tap1").rx_max_frames, 11u);

  second();
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(frames("tap1"), 11u);
  EXPECT_TRUE(store.net.empty());
}

TEST_F(RenameTest, RenamedOutOfTheAllowlistHandedBackAtOnce) {
  add_tap("tap0", 7, 11);
  step();
  ASSERT_EQ(frames("tap0"), written_);

  rename("tap0", "other0");  // named by no rule: shadow
  second();
  EXPECT_EQ(frames("other0"), 11u) << "renamed out of the allowlist, dimctl's value stays";
  EXPECT_EQ(writes("other0"), 1u) << "one write: the hand-back";
  EXPECT_TRUE(store.net.empty());
  second();
  EXPECT_EQ(writes("other0"), 1u);
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(writes("other0"), 1u);
}

TEST_F(RenameTest, DriftStaysWithARenamedDevice) {
  add_tap("tap0", 7, 11);
  step();
  seam::Coalesce theirs;
  theirs.rx_max_frames = 50;
  net.external_set("tap0", theirs);
  step();

  rename("tap0", "tap1");
  policy.by_name["tap1"] = static_enforce(4);  // tap1 would want another value
  step();
  second();
  EXPECT_EQ(writes("tap1"), 0u) << "a drifted device written again under its new name";
  EXPECT_EQ(frames("tap1"), 50u);
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(frames("tap1"), 50u);
  EXPECT_TRUE(store.net.empty()) << "no later pass may put our original over theirs";
}

TEST_F(RenameTest, SwappedNamesRestoreEachDeviceToItsOwnOriginal) {
  add_tap("tap0", 7, 11);
  add_tap("tap1", 8, 13);
  step();
  ASSERT_EQ(store.net.size(), 2u);

  rename("tap0", "tmp");
  rename("tap1", "tap0");
  rename("tmp", "tap1");
  second();
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(frames("tap1"), 11u);  // ifindex 7
  EXPECT_EQ(frames("tap0"), 13u);  // ifindex 8
}

TEST_F(RenameTest, RenamedJustBeforeRestoreIsRestoredUnderItsNewName) {
  add_tap("tap0", 7, 11);
  step();
  rename("tap0", "other0");  // no step, no inventory refresh in between
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(frames("other0"), 11u);
  EXPECT_TRUE(store.net.empty());
}

TEST_F(RenameTest, RenamedWithinTheAllowlistWithoutTrafficFollowsAtTheNextInventory) {
  add_tap("tap0", 7, 11);
  step();
  rename("tap0", "tap1");
  second();
  EXPECT_EQ(store.net_calls, 1);
  EXPECT_EQ(store.net.at("tap1").rx_max_frames, 11u);
  EXPECT_EQ(frames("tap1"), written_);
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(frames("tap1"), 11u);
}

TEST_F(RenameTest, ANewDeviceUnderAnOldNameIsRecordedAfresh) {
  add_tap("tap0", 7, 11);
  step();
  rename("tap0", "tap2");
  add_tap("tap0", 9, 5);  // another device takes the name
  second();
  ASSERT_EQ(store.net.count("tap0"), 1u);
  EXPECT_EQ(store.net.at("tap0").rx_max_frames, 5u);
  EXPECT_EQ(store.net.at("tap2").rx_max_frames, 11u);
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(frames("tap0"), 5u);
  EXPECT_EQ(frames("tap2"), 11u);
}

TEST_F(RenameTest, ADeletedDevicesRecordsAreForgottenAfterTheGrace) {
  add_tap("tap0", 7, 11);
  step();
  ASSERT_EQ(store.net.count("tap0"), 1u);
  remove("tap0");
  for (int i = 0; i < 4; ++i) second();  // 4 s: it may still come back
  EXPECT_EQ(store.net.count("tap0"), 1u);
  for (int i = 0; i < 2; ++i) second();  // past forget_gone_ns (5 s in this fixture)
  EXPECT_EQ(store.net.count("tap0"), 0u) << "a deleted device's records kept for good";
  ASSERT_TRUE(ctl().restore().ok());
}

TEST_F(RenameTest, ADeviceReCreatedUnderTheNameIsRecordedAfresh) {
  add_tap("tap0", 7, 11);
  step();
  remove("tap0");
  add_tap("tap0", 9, 5);  // within one inventory interval: the controller still knows "tap0"
  second();
  ASSERT_EQ(store.net.count("tap0"), 1u);
  EXPECT_EQ(store.net.at("tap0").rx_max_frames, 5u) << "the deleted device's original";
  EXPECT_EQ(frames("tap0"), written_) << "the new device under the old name was never written";
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(frames("tap0"), 5u);
}

TEST_F(RenameTest, AStaleRecordIsCaughtAtTheWriteBeforeTheInventorySeesIt) {
  add_tap("tap0", 7, 11, /*with_queue=*/true);
  step();
  remove("tap0");
  add_tap("tap0", 9, 5, /*with_queue=*/true);
  policy.by_name["tap0"] = static_enforce(4);  // a reload: tap0 wants another value at once
  ctl().reload_policies();
  step();
  ASSERT_EQ(store.net.count("tap0"), 1u);
  EXPECT_EQ(store.net.at("tap0").rx_max_frames, 5u);
  ASSERT_TRUE(ctl().restore().ok());
  EXPECT_EQ(frames("tap0"), 5u);
}

}  // namespace
}  // namespace dimctl::controller::testing
