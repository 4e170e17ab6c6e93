// WishBudget: a trial goes only with its return in hand (where the bucket holds two changes), the
// return never waits, and no window shorter than a second holds more than b changes (property
// test over random wishes and period lengths).
#include "dimctl/controller/wish_budget.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>

namespace dimctl::controller {
namespace {

constexpr int64_t kMs = 1'000'000;

// A budget of `per_s` spent down to `changes` whole changes (and what a 20 ms step earned).
WishBudget spent_to(uint32_t per_s, int changes) {
  WishBudget w;
  w.refill(per_s, 20 * kMs);
  while (w.tokens() >= WishBudget::kOne * static_cast<uint32_t>(changes + 1)) w.take(false);
  return w;
}

TEST(WishBudget, ATrialGoesOnlyWithItsReturnInHand) {
  WishBudget one = spent_to(10, 1);
  EXPECT_FALSE(one.take(true));  // a trial would leave nothing for the way back
  EXPECT_TRUE(one.take(false));  // a return (or a move to the best) goes
  WishBudget two = spent_to(10, 2);
  EXPECT_TRUE(two.take(true));
  EXPECT_TRUE(two.take(false));  // ... and its return went with it
  EXPECT_FALSE(two.take(false));
}

TEST(WishBudget, ABucketOfOneChangeLetsATrialGo) {
  // b = 1 and 2 hold one change: requiring two would stop every trial for good.
  for (uint32_t b : {1u, 2u}) {
    WishBudget w;
    w.refill(b, 20 * kMs);
    EXPECT_TRUE(w.take(true)) << b;
    EXPECT_FALSE(w.take(false)) << b;
    w.refill(b, 1000 * kMs);
    EXPECT_TRUE(w.take(false)) << b;
  }
}

TEST(WishBudget, PropertyNoSecondHoldsMoreThanBChanges) {
  std::mt19937_64 rng(23);
  for (uint32_t b : {1u, 2u, 3u, 5u, 10u, 40u}) {
    WishBudget w;
    std::deque<int64_t> taken;  // times of the changes within the last second
    int64_t now = 0;
    int total = 0;
    for (int step = 0; step < 20'000; ++step) {
      const int64_t dt = std::uniform_int_distribution<int64_t>(1, 60)(rng) * kMs;
      now += dt;
      w.refill(b, dt);
      for (int k = 0; k < 3; ++k) {
        if (!w.take(rng() % 3 == 0)) break;
        taken.push_back(now);
        ++total;
      }
      while (!taken.empty() && taken.front() <= now - 1000 * kMs) taken.pop_front();
      ASSERT_LE(taken.size(), b) << "b " << b << " at " << now;
    }
    EXPECT_GT(total, 0) << b;
  }
}

}  // namespace
}  // namespace dimctl::controller
