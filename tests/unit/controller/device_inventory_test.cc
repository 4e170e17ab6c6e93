// DeviceInventory: the namespace's net devices, listed again once per interval.
#include "dimctl/controller/device_inventory.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dimctl::controller {
namespace {

TEST(DeviceInventory, WithoutAListingFunctionItIsOff) {
  DeviceInventory inv({}, 1000);
  EXPECT_FALSE(inv.enabled());
  EXPECT_TRUE(inv.names().empty());
}

TEST(DeviceInventory, ListsAtTheFirstRefreshThenOncePerInterval) {
  int calls = 0;
  std::vector<std::string> devices{"eth0"};
  DeviceInventory inv(
      [&] {
        ++calls;
        return devices;
      },
      1000);
  EXPECT_TRUE(inv.enabled());
  EXPECT_TRUE(inv.refresh(5));
  EXPECT_EQ(inv.names(), std::vector<std::string>{"eth0"});
  devices.push_back("eth1");
  EXPECT_FALSE(inv.refresh(1004));  // the interval has not passed
  EXPECT_EQ(inv.names(), std::vector<std::string>{"eth0"});
  EXPECT_TRUE(inv.refresh(1005));
  EXPECT_EQ(inv.names(), (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace dimctl::controller
