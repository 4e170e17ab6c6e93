#include "dimctl/controller/combine.h"

#include <gtest/gtest.h>

namespace dimctl::controller {
namespace {

using seam::CombinePolicy;
using seam::QueueKey;

TEST(ProfileCombiner, EmptyHasNoResult) {
  ProfileCombiner c;
  EXPECT_FALSE(c.result().has_value());
  EXPECT_FALSE(c.busiest().has_value());
}

TEST(ProfileCombiner, BusiestMaxMin) {
  for (auto policy :
       {CombinePolicy::kBusiestQueue, CombinePolicy::kMaxProfile, CombinePolicy::kMinProfile}) {
    ProfileCombiner c(policy);
    c.add({1, 1}, 2, 100);
    c.add({1, 2}, 4, 50);
    c.add({1, 3}, 1, 500);  // busiest
    c.add({1, 4}, 3, 10);
    const uint8_t expected = policy == CombinePolicy::kBusiestQueue ? 1
                             : policy == CombinePolicy::kMaxProfile ? 4
                                                                    : 1;
    EXPECT_EQ(c.result(), expected);
    EXPECT_EQ(c.busiest(), (QueueKey{1, 3}));
  }
}

TEST(ProfileCombiner, TiesGoToThePreviousBusiestThenTheSmallestKey) {
  ProfileCombiner idle(CombinePolicy::kBusiestQueue, QueueKey{1, 3});
  idle.add({1, 5}, 0, 0);
  idle.add({1, 3}, 4, 0);
  idle.add({1, 1}, 2, 0);
  EXPECT_EQ(idle.result(), 4);  // an idle device keeps following its last busiest queue

  ProfileCombiner fresh(CombinePolicy::kBusiestQueue);
  fresh.add({1, 5}, 0, 7);
  fresh.add({1, 1}, 2, 7);
  fresh.add({1, 3}, 4, 7);
  EXPECT_EQ(fresh.result(), 2);  // order-independent: smallest key
  EXPECT_EQ(fresh.busiest(), (QueueKey{1, 1}));
}

}  // namespace
}  // namespace dimctl::controller
