// StepClock: the snapshots' periods, step and error counts, the publish cadence.
#include "dimctl/controller/step_clock.h"

#include <gtest/gtest.h>

namespace dimctl::controller {
namespace {

TEST(StepClock, TheFirstSnapshotHasNoPeriod) {
  StepClock c;
  EXPECT_EQ(c.start(), 1u);
  const auto p = c.measure(5'000'000'000);
  EXPECT_FALSE(p.time_backwards);
  EXPECT_EQ(p.dt_s, 0);
  EXPECT_EQ(p.prev_time_ns, 5'000'000'000);
  EXPECT_EQ(c.step_dt_ns(), 0);
  EXPECT_FALSE(c.have_prev());
}

TEST(StepClock, APeriodIsAgainstTheLastAcceptedSnapshot) {
  StepClock c;
  c.measure(1'000'000'000);
  c.accept(1'000'000'000);
  // A snapshot measured but not accepted (a rejected sample) is no base.
  c.measure(1'020'000'000);
  const auto p = c.measure(1'050'000'000);
  EXPECT_FALSE(p.time_backwards);
  EXPECT_DOUBLE_EQ(p.dt_s, 0.05);
  EXPECT_EQ(p.prev_time_ns, 1'000'000'000);
  EXPECT_EQ(c.step_dt_ns(), 50'000'000);
}

TEST(StepClock, TimeGoingBackwardsGivesNoPeriod) {
  StepClock c;
  c.accept(2'000'000'000);
  const auto p = c.measure(1'000'000'000);
  EXPECT_TRUE(p.time_backwards);
  EXPECT_EQ(p.dt_s, 0);
  EXPECT_EQ(p.prev_time_ns, 1'000'000'000);
  EXPECT_EQ(c.step_dt_ns(), 0);
}

TEST(StepClock, CountsStepsErrorsAndReadiness) {
  StepClock c;
  c.start();
  c.start();
  c.sample_failed();
  EXPECT_EQ(c.count(), 2u);
  EXPECT_EQ(c.sample_errors(), 1u);
  EXPECT_FALSE(c.ready());
  c.set_ready();
  EXPECT_TRUE(c.ready());
}

TEST(StepClock, PublishesFirstThenOncePerInterval) {
  StepClock c;
  EXPECT_TRUE(c.publish_due(100, 50));
  c.published(100);
  EXPECT_FALSE(c.publish_due(149, 50));
  EXPECT_TRUE(c.publish_due(150, 50));
  EXPECT_TRUE(c.publish_due(101, 0));  // no interval: every step
}

}  // namespace
}  // namespace dimctl::controller
