// OriginalRecords: the controller's copy of the originals it recorded, drift and gone devices.
#include "dimctl/controller/original_records.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dimctl::controller {
namespace {

Original rec(uint32_t usecs, uint32_t ifindex) {
  Original o;
  o.values.rx_usecs = usecs;
  o.ifindex = ifindex;
  return o;
}

TEST(OriginalRecords, DeviceAndQueueRecordsAreApartAndTheFirstStays) {
  OriginalRecords r;
  EXPECT_EQ(r.find("eth0", std::nullopt), nullptr);
  r.add("eth0", std::nullopt, rec(8, 0));
  r.add("eth0", 3u, rec(16, 5));
  // A second record of the same target keeps the first: our own values are never the original.
  EXPECT_EQ(r.add("eth0", std::nullopt, rec(99, 0)).values.rx_usecs, 8u);
  ASSERT_NE(r.find("eth0", std::nullopt), nullptr);
  EXPECT_EQ(r.find("eth0", std::nullopt)->values.rx_usecs, 8u);
  EXPECT_EQ(r.find("eth0", 3u)->values.rx_usecs, 16u);
  EXPECT_EQ(r.find("eth0", 4u), nullptr);
  EXPECT_TRUE(r.has_net("eth0"));
  EXPECT_FALSE(r.has_net("eth"));  // a prefix is another device
  // The device-wide record has no ifindex: the queue's answers.
  EXPECT_EQ(r.recorded_ifindex("eth0"), 5u);
  EXPECT_EQ(r.recorded_ifindex("eth1"), 0u);
}

TEST(OriginalRecords, NamesAreSortedAndOnce) {
  OriginalRecords r;
  r.add("b", 1u, rec(1, 0));
  r.add("b", 2u, rec(1, 0));
  r.add("a", std::nullopt, rec(1, 0));
  r.add("c", 0u, rec(1, 0));
  r.add("b", std::nullopt, rec(1, 0));
  EXPECT_EQ(r.net_names(), (std::vector<std::string>{"a", "b", "c"}));
  std::vector<uint32_t> queues;
  r.for_each_queue("b", [&](uint32_t q, const Original&) { queues.push_back(q); });
  EXPECT_EQ(queues, (std::vector<uint32_t>{1, 2}));
}

TEST(OriginalRecords, ASwapOfTwoNamesLosesNothingAndDriftFollows) {
  OriginalRecords r;
  r.add("a", std::nullopt, rec(1, 10));
  r.add("a", 0u, rec(2, 10));
  r.add("b", std::nullopt, rec(3, 20));
  r.mark_drifted("a");
  r.gone_since("a", 100);
  const std::set<std::string> drifted = r.move({{"a", "b"}, {"b", "a"}});
  EXPECT_EQ(drifted, std::set<std::string>{"b"});
  EXPECT_EQ(r.find("b", std::nullopt)->values.rx_usecs, 1u);
  EXPECT_EQ(r.find("b", 0u)->values.rx_usecs, 2u);
  EXPECT_EQ(r.find("a", std::nullopt)->values.rx_usecs, 3u);
  EXPECT_EQ(r.find("a", 0u), nullptr);
  EXPECT_TRUE(r.drifted("b"));
  // A renamed device is not gone: its gone mark starts again.
  EXPECT_EQ(r.gone_since("a", 200), 200);
}

TEST(OriginalRecords, ForgettingANetDeviceDropsItsQueuesOnly) {
  OriginalRecords r;
  r.add("eth0", std::nullopt, rec(1, 0));
  r.add("eth0", 1u, rec(1, 0));
  r.add("eth01", 1u, rec(1, 0));
  r.add_rdma("eth0", true);
  r.forget_net("eth0");
  EXPECT_FALSE(r.has_net("eth0"));
  EXPECT_TRUE(r.has_net("eth01"));
  EXPECT_EQ(r.rdma("eth0"), std::optional<bool>(true));
}

TEST(OriginalRecords, RdmaRecordsKeepTheFirstSwitchState) {
  OriginalRecords r;
  EXPECT_FALSE(r.rdma("mlx5_0").has_value());
  r.add_rdma("mlx5_0", false);
  r.add_rdma("mlx5_0", true);
  EXPECT_EQ(r.rdma("mlx5_0"), std::optional<bool>(false));
  EXPECT_EQ(r.rdma_names(), std::vector<std::string>{"mlx5_0"});
  r.forget_rdma("mlx5_0");
  EXPECT_TRUE(r.rdma_names().empty());
}

TEST(OriginalRecords, GoneSinceIsTheFirstTimeUntilPresentAgain) {
  OriginalRecords r;
  EXPECT_EQ(r.gone_since("eth0", 100), 100);
  EXPECT_EQ(r.gone_since("eth0", 250), 100);
  r.present("eth0");
  EXPECT_EQ(r.gone_since("eth0", 300), 300);
  EXPECT_FALSE(r.drifted("eth0"));
  r.mark_drifted("rdma:eth0");
  EXPECT_FALSE(r.drifted("eth0"));  // RDMA drift is its own key
}

}  // namespace
}  // namespace dimctl::controller
