// The ziggurat variates against their distributions' moments and tails: a wrong table or slow
// path shows up as a shifted mean, a wrong variance or a missing tail.
#include <gtest/gtest.h>

#include <cmath>

#include "dimctl/sim/rng.h"

namespace dimctl::sim {
namespace {

constexpr int kN = 2'000'000;

TEST(SimRng, ExponentialHasItsMeanVarianceAndTail) {
  Rng rng(42);
  double sum = 0, sum2 = 0;
  int beyond5 = 0, beyond8 = 0;
  for (int i = 0; i < kN; ++i) {
    const double x = rng.exponential(1.0);
    ASSERT_GE(x, 0.0);
    sum += x;
    sum2 += x * x;
    beyond5 += x > 5;
    beyond8 += x > 8;  // past the ziggurat's base layer (7.697): the tail path
  }
  const double mean = sum / kN, var = sum2 / kN - mean * mean;
  EXPECT_NEAR(mean, 1.0, 0.003);
  EXPECT_NEAR(var, 1.0, 0.01);
  EXPECT_NEAR(beyond5 / static_cast<double>(kN), std::exp(-5.0), 0.0006);
  EXPECT_NEAR(beyond8 / static_cast<double>(kN), std::exp(-8.0), 0.00006);
  EXPECT_GT(beyond8, 0);
}

TEST(SimRng, NormalHasItsMomentsAndBothTails) {
  Rng rng(7);
  double sum = 0, sum2 = 0, sum4 = 0;
  int above3 = 0, below3 = 0, beyond4 = 0;
  for (int i = 0; i < kN; ++i) {
    const double x = rng.normal();
    sum += x;
    sum2 += x * x;
    sum4 += x * x * x * x;
    above3 += x > 3;
    below3 += x < -3;
    beyond4 += std::abs(x) > 4;  // past the base layer (3.44): the tail path
  }
  EXPECT_NEAR(sum / kN, 0.0, 0.003);
  EXPECT_NEAR(sum2 / kN, 1.0, 0.005);
  EXPECT_NEAR(sum4 / kN, 3.0, 0.05);
  const double p3 = 0.0013498980316301;  // P(X > 3)
  EXPECT_NEAR(above3 / static_cast<double>(kN), p3, 0.0002);
  EXPECT_NEAR(below3 / static_cast<double>(kN), p3, 0.0002);
  EXPECT_NEAR(beyond4 / static_cast<double>(kN), 6.334e-5, 2.5e-5);
}

TEST(SimRng, LogNormalSamplerHasTheRequestedMeanAndCv) {
  Rng rng(3);
  const Dist::Sampler s(Dist::lognormal(10'000, 0.5));
  double sum = 0, sum2 = 0;
  for (int i = 0; i < kN; ++i) {
    const double x = s.draw(rng);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / kN, sd = std::sqrt(sum2 / kN - mean * mean);
  EXPECT_NEAR(mean, 10'000, 20);
  EXPECT_NEAR(sd / mean, 0.5, 0.005);
}

TEST(SimRng, StreamsAreReproducibleAndIndependent) {
  Rng a = Rng::stream(1, 2, 3), b = Rng::stream(1, 2, 3), c = Rng::stream(1, 2, 4);
  int same = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    same += x == c.next();
  }
  EXPECT_EQ(same, 0);
}

}  // namespace
}  // namespace dimctl::sim
