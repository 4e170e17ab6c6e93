// The reusable fakes behave like the real actuators where callers depend on it.
#include <gtest/gtest.h>

#include <cerrno>

#include "fakes/fake_actuators.h"

namespace dimctl::fakes {
namespace {

seam::Coalesce frames(uint32_t n) {
  seam::Coalesce c;
  c.rx_max_frames = n;
  return c;
}

TEST(FakeNetActuator, RefusesUnsupportedClampsAndNotifies) {
  FakeNetActuator net;
  net.add_device("tun0", frames(0));  // like tun: rx-frames only
  net.set_limits("tun0", frames(64));
  seam::Coalesce usecs;
  usecs.rx_usecs = 5;
  auto refused = net.set("tun0", usecs);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), EOPNOTSUPP);
  EXPECT_TRUE(net.drain_changes().empty());

  auto r = net.set("tun0", frames(100));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rx_max_frames, 64u);  // clamped, like tun
  EXPECT_FALSE(r->rx_usecs.has_value());
  net.external_change("tun0", frames(7));
  auto changes = net.drain_changes();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].device, "tun0");
  EXPECT_EQ(changes[0].values.rx_max_frames, 64u);
  EXPECT_EQ(changes[1].values.rx_max_frames, 7u);
  EXPECT_TRUE(net.drain_changes().empty());
}

TEST(FakeNetActuator, PerQueueFailuresAndRemoval) {
  FakeNetActuator net;
  net.add_device("eth0", frames(1), 4);
  net.add_device("eth1", frames(1));
  EXPECT_TRUE(net.supports_per_queue("eth0"));
  EXPECT_FALSE(net.supports_per_queue("eth1"));
  EXPECT_EQ(net.set_queue("eth1", 0, frames(2)).error().code(), EOPNOTSUPP);
  ASSERT_TRUE(net.set_queue("eth0", 3, frames(9)).ok());
  EXPECT_EQ(net.queue_values("eth0", 3).rx_max_frames, 9u);
  EXPECT_EQ(net.queue_values("eth0", 2).rx_max_frames, 1u);

  net.fail_next_set("eth0", DIMCTL_ERR(EBUSY, "busy"));
  EXPECT_EQ(net.set("eth0", frames(5)).error().code(), EBUSY);
  EXPECT_TRUE(net.set("eth0", frames(5)).ok());
  net.remove_device("eth0");
  EXPECT_EQ(net.get("eth0").error().code(), ENODEV);
}

TEST(FakeRdmaDimSwitch, SetReadBackAndStuck) {
  FakeRdmaDimSwitch rdma;
  rdma.add_device("rxe0", false);
  EXPECT_EQ(*rdma.set_dim("rxe0", true), true);
  rdma.stuck("rxe0", true);
  EXPECT_EQ(*rdma.set_dim("rxe0", false), true);  // read-back shows the refusal
  EXPECT_EQ(rdma.get_dim("nope").error().code(), ENODEV);
  ASSERT_EQ(rdma.list()->size(), 1u);
}

}  // namespace
}  // namespace dimctl::fakes
