// StatePublisher: what readers see, and the buffer the control thread builds the next state in.
#include "dimctl/controller/state_publisher.h"

#include <gtest/gtest.h>

#include <memory>
#include <utility>

namespace dimctl::controller {
namespace {

TEST(StatePublisher, PublishesTheInitialStateUntilTheFirstPublish) {
  seam::ControllerState initial;
  initial.config_path = "/etc/dimctl/config.yaml";
  initial.default_mode = seam::Mode::kEnforce;
  StatePublisher p(initial);
  ASSERT_NE(p.state(), nullptr);
  EXPECT_EQ(p.state()->config_path, "/etc/dimctl/config.yaml");
  EXPECT_EQ(p.state()->default_mode, seam::Mode::kEnforce);
  EXPECT_EQ(p.state()->loops_total, 0u);
}

TEST(StatePublisher, ReadersKeepTheStateTheyGotAcrossPublishes) {
  StatePublisher p;
  auto st = p.acquire();
  st->loops_total = 1;
  p.publish(std::move(st));
  const auto held = p.state();
  auto next = p.acquire();
  next->loops_total = 2;
  p.publish(std::move(next));
  EXPECT_EQ(held->loops_total, 1u);
  EXPECT_EQ(p.state()->loops_total, 2u);
}

TEST(StatePublisher, ReusesTheBufferPublishedTwoPeriodsAgoOnlyWhenNoReaderHoldsIt) {
  StatePublisher p;
  auto first = p.acquire();
  const seam::ControllerState* first_buffer = first.get();
  p.publish(std::move(first));
  p.publish(p.acquire());  // the first buffer is now the spare
  auto reused = p.acquire();
  EXPECT_EQ(reused.get(), first_buffer);
  p.publish(std::move(reused));

  // A reader holds the buffer the next publish makes the spare: a new buffer instead.
  const auto held = p.state();
  p.publish(p.acquire());
  auto fresh = p.acquire();
  EXPECT_NE(fresh.get(), held.get());
}

TEST(StatePublisher, AcquireCopyHoldsThePublishedState) {
  StatePublisher p;
  auto st = p.acquire();
  st->loops_total = 7;
  st->config_path = "x.yaml";
  p.publish(std::move(st));
  auto copy = p.acquire_copy();
  EXPECT_EQ(copy->loops_total, 7u);
  EXPECT_EQ(copy->config_path, "x.yaml");
  EXPECT_NE(copy.get(), p.state().get());
}

}  // namespace
}  // namespace dimctl::controller
