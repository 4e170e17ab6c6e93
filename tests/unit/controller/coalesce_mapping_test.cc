#include "dimctl/controller/coalesce_mapping.h"

#include <gtest/gtest.h>

#include "dimctl/controller/discontinuity.h"

namespace dimctl::controller {
namespace {

TEST(ClampProfile, BoundsAndTableEnd) {
  seam::DevicePolicy p;
  EXPECT_EQ(clamp_profile(7, p, 5), 4);  // max 255 capped at the last index
  p.min_profile = 1;
  p.max_profile = 3;
  EXPECT_EQ(clamp_profile(0, p, 5), 1);
  EXPECT_EQ(clamp_profile(2, p, 5), 2);
  EXPECT_EQ(clamp_profile(4, p, 5), 3);
  p.min_profile = 8;  // crossed bounds: the cap wins
  EXPECT_EQ(clamp_profile(0, p, 5), 3);
  p = {};
  p.max_profile = 6;
  EXPECT_EQ(clamp_profile(8, p, 9), 6);
}

TEST(NetTarget, OnlyReportedFields) {
  seam::Coalesce reported;
  reported.rx_usecs = 5;
  const dim::Profile prof{64, 256, 0};
  auto t = net_target(prof, true, reported);
  EXPECT_EQ(t.rx_usecs, 64u);
  EXPECT_FALSE(t.rx_max_frames.has_value());
  EXPECT_FALSE(t.use_cqe_mode_rx.has_value());
  reported.rx_max_frames = 1;
  reported.use_cqe_mode_rx = false;
  t = net_target(prof, true, reported);
  EXPECT_EQ(t.rx_max_frames, 256u);
  EXPECT_EQ(t.use_cqe_mode_rx, true);
}

// igb's rx-usecs 1..9 are modes or refused: a profile's time never lands on one of them.
TEST(NetTarget, IgbNeverGetsADynamicModeOrARefusedValue) {
  for (uint32_t usec = 0; usec <= 300; ++usec) {
    const uint32_t v = driver_rx_usecs(usec, "igb");
    EXPECT_TRUE(v == 0 || v >= 10) << usec << " -> " << v;
    if (usec == 0 || usec >= 10) {
      EXPECT_EQ(v, usec);
    }
  }
  EXPECT_EQ(driver_rx_usecs(1, "igb"), 0u);  // the default tables' 1 us: no throttling
  EXPECT_EQ(driver_rx_usecs(4, "igb"), 0u);
  EXPECT_EQ(driver_rx_usecs(5, "igb"), 10u);  // a tie goes to the fixed interval
  EXPECT_EQ(driver_rx_usecs(8, "igb"), 10u);  // the EQE table's 8 us: the shortest fixed one
  // Other drivers take the time as is, igb look-alikes included.
  EXPECT_EQ(driver_rx_usecs(1, "igbvf"), 1u);
  EXPECT_EQ(driver_rx_usecs(8, "mlx5_core"), 8u);
  EXPECT_EQ(driver_rx_usecs(3, ""), 3u);
  seam::Coalesce reported;
  reported.rx_usecs = 3;
  EXPECT_EQ(net_target({8, 256, 0}, false, reported, "igb").rx_usecs, 10u);
  EXPECT_EQ(net_target({8, 256, 0}, false, reported).rx_usecs, 8u);
}

TEST(NetRequest, ModeOnlyWhenChangingAdaptiveOnlyOnTakeOver) {
  seam::Coalesce target;
  target.rx_usecs = 8;
  target.rx_max_frames = 256;
  target.use_cqe_mode_rx = false;
  seam::Coalesce current = target;
  current.use_adaptive_rx = true;
  auto r = net_request(target, current, true);
  EXPECT_EQ(r.rx_usecs, 8u);
  EXPECT_FALSE(r.use_cqe_mode_rx.has_value());
  EXPECT_EQ(r.use_adaptive_rx, false);
  r = net_request(target, current, false);
  EXPECT_FALSE(r.use_adaptive_rx.has_value());
  current.use_cqe_mode_rx = true;
  EXPECT_EQ(net_request(target, current, true).use_cqe_mode_rx, false);
}

TEST(FieldHelpers, MarkOnlyAgreeOverlay) {
  seam::Coalesce mask;
  seam::Coalesce sent;
  sent.rx_usecs = 1;
  sent.use_adaptive_rx = false;
  mark_fields(mask, sent);
  seam::Coalesce orig;
  orig.rx_usecs = 3;
  orig.rx_max_frames = 32;
  orig.use_adaptive_rx = true;
  auto back = only_fields(orig, mask);
  EXPECT_EQ(back.rx_usecs, 3u);
  EXPECT_EQ(back.use_adaptive_rx, true);
  EXPECT_FALSE(back.rx_max_frames.has_value());

  seam::Coalesce a = orig, b = orig;
  b.rx_max_frames = 64;  // not in the mask
  EXPECT_TRUE(agrees(a, b, mask));
  b.rx_usecs = 4;
  EXPECT_FALSE(agrees(a, b, mask));

  seam::Coalesce into = orig;
  seam::Coalesce ntf;
  ntf.rx_usecs = 99;
  overlay(into, ntf);
  EXPECT_EQ(into.rx_usecs, 99u);
  EXPECT_EQ(into.rx_max_frames, 32u);
}

TEST(Discontinuity, BackwardsAndIdentityChanges) {
  seam::QueueCounters a;
  a.polls = 100;
  a.packets = 1000;
  a.bytes = 100000;
  a.has_bytes = true;
  a.queue = 1;
  // What advance() says of `b` after `a`, leaving the record of `a` as it is.
  const auto is_discontinuity_after_a = [&](const seam::QueueCounters& b) {
    QueueCounts prev = QueueCounts::of(a);
    return advance(prev, a.has_bytes, b).discontinuity;
  };
  seam::QueueCounters b = a;
  EXPECT_FALSE(is_discontinuity_after_a(b));
  b.polls = 150;
  EXPECT_FALSE(is_discontinuity_after_a(b));
  b.packets = 999;
  EXPECT_TRUE(is_discontinuity_after_a(b));
  b = a;
  b.budget_exhausted = 5;  // more budget-exhausted polls than new polls: events went back
  EXPECT_TRUE(is_discontinuity_after_a(b));
  b = a;
  b.irq = 77;
  EXPECT_TRUE(is_discontinuity_after_a(b));
  b = a;
  b.has_bytes = false;
  EXPECT_TRUE(is_discontinuity_after_a(b));

  seam::CqCounters c;
  c.events = 10;
  c.completions = 40;
  seam::CqCounters d = c;
  d.completions = 39;
  EXPECT_TRUE(is_discontinuity(c, d));
  d = c;
  d.nr_cqe = 256;
  EXPECT_TRUE(is_discontinuity(c, d));
}

}  // namespace
}  // namespace dimctl::controller
