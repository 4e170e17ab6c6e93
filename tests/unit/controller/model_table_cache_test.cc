// ModelTableCache: one cost-model table per set of inputs, shared by the devices that have them.
#include "dimctl/controller/model_table_cache.h"

#include <gtest/gtest.h>

#include "dim/profile.h"

namespace dimctl::controller {
namespace {

TEST(ModelTableCache, SameInputsShareOneTable) {
  ModelTableCache cache;
  seam::DevicePolicy p;
  auto a = cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                     dim::TimerMode::kRateLimit, p, 1);
  auto b = cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                     dim::TimerMode::kRateLimit, p, 1);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(a->params().cost.completion_cost_ns, 1000);
  EXPECT_EQ(a->params().cost.interrupt_cost_ns, 2000);
}

TEST(ModelTableCache, EachInputMakesItsOwnTable) {
  ModelTableCache cache;
  seam::DevicePolicy p;
  const auto base = cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                              dim::TimerMode::kRateLimit, p, 1);
  EXPECT_NE(cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                      dim::TimerMode::kRateLimit, p, 2),
            base);
  EXPECT_NE(
      cache.get(dim::kRdmaProfiles, dim::ProfileCount::kPackets, dim::TimerMode::kRateLimit, p, 1),
      base);
  EXPECT_NE(cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions, dim::TimerMode::kIdleGap,
                      p, 1),
            base);
  seam::DevicePolicy costly = p;
  costly.model.interrupt_cost_ns = 8000;
  const auto c = cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                           dim::TimerMode::kRateLimit, costly, 1);
  EXPECT_NE(c, base);
  EXPECT_EQ(c->params().cost.interrupt_cost_ns, 8000);
  seam::DevicePolicy bounded = p;
  bounded.max_profile = 2;
  EXPECT_NE(cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                      dim::TimerMode::kRateLimit, bounded, 1),
            base);
  EXPECT_EQ(cache.size(), 6u);
}

TEST(ModelTableCache, TheSettingsTimerWinsOverTheTables) {
  ModelTableCache cache;
  seam::DevicePolicy p;
  p.model.timer = dim::TimerMode::kIdleGap;
  const auto a = cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                           dim::TimerMode::kRateLimit, p, 1);
  EXPECT_EQ(a->params().timer, dim::TimerMode::kIdleGap);
  // The same effective timer: the same table.
  EXPECT_EQ(cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions, dim::TimerMode::kIdleGap,
                      p, 1),
            a);
}

TEST(ModelTableCache, ClearedTablesLiveOnWithTheirHolders) {
  ModelTableCache cache;
  seam::DevicePolicy p;
  const auto held = cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                              dim::TimerMode::kRateLimit, p, 1);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  const auto fresh = cache.get(dim::kRdmaProfiles, dim::ProfileCount::kCompletions,
                               dim::TimerMode::kRateLimit, p, 1);
  EXPECT_NE(fresh, held);
  EXPECT_EQ(held->size(), fresh->size());
}

}  // namespace
}  // namespace dimctl::controller
