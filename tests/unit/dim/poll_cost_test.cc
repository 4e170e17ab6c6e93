// PollCostProbe (dim/poll_cost.h): the host's cost of a poll from pairs of windows at two
// moderation settings, against the line busy = c + w · polls per packet.
#include "dim/poll_cost.h"

#include <gtest/gtest.h>

namespace dim {
namespace {

// A window of `packets` packets at `polls_per_packet`, on a host that spends c per packet and
// w per poll, plus `other` ns of unrelated work.
PollCostPeriod window(double c, double w, uint64_t packets, double polls_per_packet,
                      double other = 0) {
  const auto polls = static_cast<uint64_t>(static_cast<double>(packets) * polls_per_packet);
  return {c * static_cast<double>(packets) + w * static_cast<double>(polls) + other, polls,
          packets};
}

TEST(PollCostProbe, ThreePairsOnTheLineGiveItsCosts) {
  PollCostProbe p;
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(p.costs()) << i;
    p.base(window(7000, 15000, 1000, 1.0));
    p.probe(window(7000, 15000, 1000, 0.5));
    EXPECT_TRUE(p.close_pair());
  }
  ASSERT_TRUE(p.costs());
  EXPECT_NEAR(p.costs()->poll_ns, 15000, 1e-6);
  EXPECT_NEAR(p.costs()->completion_ns, 7000, 1e-6);
  EXPECT_EQ(p.pairs(), 3);
}

// Windows are summed over their periods: the pair is judged on the totals, not per period.
TEST(PollCostProbe, PeriodsOfAWindowAreSummed) {
  PollCostProbe p;
  for (int i = 0; i < 3; ++i) {
    p.base(window(2000, 8000, 150, 1.0));
    p.base(window(2000, 8000, 150, 1.0));
    p.probe(window(2000, 8000, 120, 0.25));
    p.probe(window(2000, 8000, 120, 0.25));
    EXPECT_TRUE(p.close_pair());
  }
  ASSERT_TRUE(p.costs());
  EXPECT_NEAR(p.costs()->poll_ns, 8000, 1e-6);
}

// One pair disturbed by other work on the host: the median keeps the other two.
TEST(PollCostProbe, TheMedianOutvotesOneDisturbedPair) {
  PollCostProbe p;
  p.base(window(5000, 10000, 1000, 1.0, 50e6));  // 50 ms of someone else's work
  p.probe(window(5000, 10000, 1000, 0.4));
  ASSERT_TRUE(p.close_pair());
  for (int i = 0; i < 2; ++i) {
    p.base(window(5000, 10000, 1000, 1.0));
    p.probe(window(5000, 10000, 1000, 0.4));
    ASSERT_TRUE(p.close_pair());
  }
  EXPECT_NEAR(p.costs()->poll_ns, 10000, 1e-6);
}

TEST(PollCostProbe, PairsThatCannotSeparateTheCostsDoNotCount) {
  PollCostProbe p;
  // Too few packets in a window.
  p.base(window(5000, 10000, PollCostProbe::kMinPackets - 1, 1.0));
  p.probe(window(5000, 10000, 1000, 0.5));
  EXPECT_FALSE(p.close_pair());
  // Polls per packet too close.
  p.base(window(5000, 10000, 1000, 1.0));
  p.probe(window(5000, 10000, 1000, 0.95));
  EXPECT_FALSE(p.close_pair());
  // A probe that polled more per packet than the base (empty timer polls, no batching).
  p.base(window(5000, 10000, 1000, 0.5));
  p.probe(window(5000, 10000, 1000, 1.0));
  EXPECT_FALSE(p.close_pair());
  // Nothing in the windows at all.
  EXPECT_FALSE(p.close_pair());
  EXPECT_EQ(p.pairs(), 0);
  EXPECT_FALSE(p.costs());
}

// close_pair() starts both windows again: a pair never mixes two probes' periods.
TEST(PollCostProbe, EachPairStartsEmpty) {
  PollCostProbe p;
  p.base(window(5000, 10000, 1000, 1.0));
  EXPECT_FALSE(p.close_pair());  // no probe window
  p.probe(window(5000, 10000, 1000, 0.5));
  EXPECT_FALSE(p.close_pair());  // its base was consumed by the failed pair
}

// Busier at the probe than at the base (noise): no negative cost, and the packet keeps at least
// kMinCompletionNs.
TEST(PollCostProbe, CostsAreNeverNegative) {
  PollCostProbe p;
  for (int i = 0; i < 3; ++i) {
    p.base(window(1000, 0, 1000, 1.0));
    p.probe(window(1000, 0, 1000, 0.5, 2e6));
    ASSERT_TRUE(p.close_pair());
  }
  EXPECT_EQ(p.costs()->poll_ns, 0);
  EXPECT_GE(p.costs()->completion_ns, PollCostProbe::kMinCompletionNs);
}

}  // namespace
}  // namespace dim
