#include <gtest/gtest.h>

#include "dimctl/trace/device_filter.h"

namespace dimctl::trace {
namespace {

seam::QueueCounters queue(uint32_t ifindex, uint32_t napi, uint32_t dev, uint64_t packets) {
  seam::QueueCounters q;
  q.key = {ifindex, napi};
  q.device_ix = dev;
  q.packets = packets;
  return q;
}

TEST(DeviceFilter, KeepsMatchingQueuesAndCqsAndRenumbersTheDeviceTable) {
  seam::Snapshot in;
  in.time_ns = 42;
  in.devices = {"eth0", "dimdemo0", "lo", "dimdemo1"};
  in.queues = {queue(2, 1, 0, 10), queue(5, 2, 1, 20), queue(7, 3, 3, 30), queue(7, 4, 3, 40)};
  seam::CqCounters c1, c2;
  c1.ibdev = "rxe0";
  c2.ibdev = "mlx5_0";
  in.cqs = {c1, c2};
  in.cpus.resize(2);
  in.cpus[1].hardirq_ns = 7;
  in.irqs = {{40, 1, 2, 1}, {41, 3, 4, 4}};

  seam::Snapshot out;
  out.devices = {"stale", "stale", "stale", "stale", "stale"};  // storage reused, resized
  keep_devices(in, {"dimdemo*", "rxe?"}, out);
  EXPECT_EQ(out.time_ns, 42);
  EXPECT_EQ(out.devices, (std::vector<std::string>{"dimdemo0", "dimdemo1"}));
  ASSERT_EQ(out.queues.size(), 3u);
  EXPECT_EQ(out.queues[0].packets, 20u);
  EXPECT_EQ(out.queues[0].device_ix, 0u);
  EXPECT_EQ(out.queues[1].packets, 30u);
  EXPECT_EQ(out.queues[1].device_ix, 1u);
  EXPECT_EQ(out.queues[2].device_ix, 1u);
  EXPECT_EQ(out.device_of(out.queues[2]), "dimdemo1");
  ASSERT_EQ(out.cqs.size(), 1u);
  EXPECT_EQ(out.cqs[0].ibdev, "rxe0");
  // CPU times are per CPU, not per device: all of them stay.
  EXPECT_EQ(out.cpus, in.cpus);
  EXPECT_EQ(out.irqs, in.irqs);

  // Anchored globs: "dimdemo" alone matches nothing.
  keep_devices(in, {"dimdemo"}, out);
  EXPECT_TRUE(out.queues.empty());
  EXPECT_TRUE(out.devices.empty());
  EXPECT_TRUE(out.cqs.empty());
}

}  // namespace
}  // namespace dimctl::trace
