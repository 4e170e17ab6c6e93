// The device inventory (ControllerOptions::list_net_devices): devices without NAPI traffic are
// still known, get a static profile when their policy says so, export their settings, and are
// retired once they leave the inventory.
#include <gtest/gtest.h>

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

class InventoryTest : public ::testing::Test {
 protected:
  Controller& ctl() {
    if (!controller_) {
      ControllerOptions o;
      o.list_net_devices = [this] {
        ++inventory_calls;
        return inventory;
      };
      o.inventory_interval_ns = 1'000'000'000;
      controller_ = std::make_unique<Controller>(source, net, nullptr, store, policy, clock, o);
    }
    return *controller_;
  }
  void step() {
    clock.advance(kPeriod);
    source.current.time_ns = clock.now;
    ASSERT_TRUE(ctl().step().ok());
  }
  const seam::DeviceView* device(const std::string& name) {
    hold_ = ctl().state();
    for (const auto& d : hold_->devices) {
      if (d.name == name) return &d;
    }
    return nullptr;
  }
  static seam::DevicePolicy static_enforce(uint8_t ix) {
    seam::DevicePolicy p;
    p.mode = seam::Mode::kEnforce;
    p.rule = "lab";
    p.rate_limit_ns = 0;
    p.algorithm = seam::Algorithm::kStatic;
    p.static_index = ix;
    return p;
  }

  fakes::FakeCounterSource source;
  RecordingNetActuator net;
  fakes::FakeOriginalsStore store;
  fakes::FakePolicySource policy;
  fakes::FakeClock clock;
  std::vector<std::string> inventory;
  int inventory_calls = 0;

 private:
  std::unique_ptr<Controller> controller_;
  std::shared_ptr<const seam::ControllerState> hold_;
};

TEST_F(InventoryTest, StaticProfileReachesADeviceWithoutTraffic) {
  net.devices["tap0"].state = RecordingNetActuator::full_coalesce(3, 32);
  net.devices["tap1"].state = RecordingNetActuator::full_coalesce(3, 32);
  inventory = {"tap0", "tap1"};
  policy.by_name["tap0"] = static_enforce(3);  // tap1: no rule, shadow cap

  step();
  const auto& eqe = dim::net_profiles(dim::CqPeriodMode::kEqe, dim::Direction::kRx);
  ASSERT_EQ(net.sets.size(), 1u);
  EXPECT_EQ(net.sets[0].dev, "tap0");
  EXPECT_EQ(net.devices["tap0"].state.rx_usecs, eqe[3].usec);
  EXPECT_EQ(net.devices["tap0"].state.rx_max_frames, eqe[3].pkts);
  EXPECT_EQ(net.devices["tap1"].state, RecordingNetActuator::full_coalesce(3, 32));
  EXPECT_EQ(store.net_calls, 1) << "the original is recorded before the first write";

  // Known and exported although neither has a queue.
  ASSERT_NE(device("tap1"), nullptr);
  ASSERT_NE(device("tap0"), nullptr);
  EXPECT_EQ(device("tap0")->applied->rx_usecs, eqe[3].usec);

  step();  // unchanged wanted value: no second write
  EXPECT_EQ(net.sets.size(), 1u);
}

TEST_F(InventoryTest, DimAlgorithmsNeedTrafficToDecide) {
  net.devices["tap0"].state = RecordingNetActuator::full_coalesce(3, 32);
  inventory = {"tap0"};
  auto p = static_enforce(0);
  p.algorithm = seam::Algorithm::kNetEqe;
  policy.by_name["tap0"] = p;
  for (int i = 0; i < 5; ++i) step();
  EXPECT_TRUE(net.sets.empty());
  ASSERT_NE(device("tap0"), nullptr);
}

TEST_F(InventoryTest, RefreshedAtItsIntervalAndDevicesRetiredWhenGone) {
  net.devices["tap0"].state = RecordingNetActuator::full_coalesce(3, 32);
  inventory = {"tap0"};
  step();
  EXPECT_EQ(inventory_calls, 1);
  for (int i = 0; i < 10; ++i) step();  // 0.5 s: the cached list is used
  EXPECT_EQ(inventory_calls, 1);
  ASSERT_NE(device("tap0"), nullptr);

  inventory.clear();
  for (int i = 0; i < 12; ++i) step();  // past one interval: re-listed, tap0 gone
  EXPECT_EQ(inventory_calls, 2);
  EXPECT_EQ(device("tap0"), nullptr);
}

}  // namespace
}  // namespace dimctl::controller::testing
