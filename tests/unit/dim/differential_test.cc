// Differential test: NetDim / RdmaDim against the independent C reference (ref/ref_dim.c,
// written from the spec pseudo-code in kernel style) on random streams, compared after every
// call: return value, measurement state, index, tune state, tired, steps, reference stats and
// window start.
#include <gtest/gtest.h>

#include "dim/net_dim.h"
#include "dim/rdma_dim.h"
#include "random_streams.h"
#include "ref_dim.h"

namespace dim {
namespace {

using testing::NetStream;
using testing::RdmaStream;

Stats to_stats(const ref_dim_stats& s) {
  return {s.ppms, s.bpms, s.epms, s.cpms, s.cpe_ratio};
}

template <typename Dim>
::testing::AssertionResult same_as_ref(const Dim& d, const ref_dim& r) {
  if (static_cast<int>(d.state()) != r.state) return ::testing::AssertionFailure() << "state";
  if (d.profile_ix() != r.profile_ix) return ::testing::AssertionFailure() << "profile_ix";
  if (static_cast<int>(d.tune_state()) != r.tune_state) {
    return ::testing::AssertionFailure() << "tune_state";
  }
  if (d.tired() != r.tired) return ::testing::AssertionFailure() << "tired";
  if (d.steps_right() != r.steps_right) return ::testing::AssertionFailure() << "steps_right";
  if (d.steps_left() != r.steps_left) return ::testing::AssertionFailure() << "steps_left";
  if (d.prev_stats() != to_stats(r.prev_stats)) return ::testing::AssertionFailure() << "prev";
  const Sample& s = d.window_start();
  if (s.time_ns != r.start_sample.time || s.pkt_ctr != r.start_sample.pkt_ctr ||
      s.byte_ctr != r.start_sample.byte_ctr || s.event_ctr != r.start_sample.event_ctr) {
    return ::testing::AssertionFailure() << "window start";
  }
  return ::testing::AssertionSuccess();
}

class Differential : public ::testing::TestWithParam<int> {};

TEST_P(Differential, NetDimMatchesReference) {
  NetStream gen(7000 + GetParam());
  const auto ix = static_cast<uint8_t>(gen.pick(0, 4));
  NetDim d(CqPeriodMode::kEqe, Direction::kRx, ix);
  ref_dim r;
  ref_net_dim_init(&r, ix);
  int hold = 0;
  uint64_t changes = 0;
  for (int i = 0; i < 50'000; ++i) {
    const auto raw = gen.next();
    const Sample s = Sample::from_counters(raw.time_ns, raw.events, raw.packets, raw.bytes);
    const ref_dim_sample rs{s.time_ns, s.pkt_ctr, s.byte_ctr, s.event_ctr, s.comp_ctr};
    const bool a = d.on_sample(s);
    const bool b = ref_net_dim(&r, &rs) != 0;
    ASSERT_EQ(a, b) << "sample " << i;
    ASSERT_TRUE(same_as_ref(d, r)) << "sample " << i;
    if (a) {
      ++changes;
      hold = static_cast<int>(gen.pick(0, 3));
    }
    if (d.state() == MeasureState::kApplyNewProfile && hold-- <= 0) {
      d.profile_applied();
      ref_dim_work_done(&r);
    }
  }
  EXPECT_GT(changes, 200u);
}

// The way the controller feeds its instances: close_window() for a window it knows may close,
// start_window() inline, feed() otherwise, with one RateDivider shared by every instance (two here,
// on streams with different window lengths, fed alternately, so the divider's cached length keeps
// changing), instead of on_sample().
TEST_P(Differential, NetDimFedLikeTheControllerMatchesReference) {
  RateDivider div;
  NetStream gens[2] = {NetStream(7100 + GetParam()), NetStream(7200 + GetParam())};
  NetDim dims[2];
  ref_dim refs[2];
  int holds[2] = {0, 0};
  uint64_t changes = 0, starts = 0, closes = 0;
  for (int k = 0; k < 2; ++k) ref_net_dim_init(&refs[k], 0);
  for (int i = 0; i < 100'000; ++i) {
    const int k = i % 2;
    NetDim& d = dims[k];
    ref_dim& r = refs[k];
    const auto raw = gens[k].next();
    const Sample s = Sample::from_counters(raw.time_ns, raw.events, raw.packets, raw.bytes);
    const ref_dim_sample rs{s.time_ns, s.pkt_ctr, s.byte_ctr, s.event_ctr, s.comp_ctr};
    bool a = false;
    if (d.state() == MeasureState::kMeasureInProgress && !d.keeps_measuring(s)) {
      const NetDim::Outcome o = d.close_window(s.time_ns, s.pkt_ctr, s.byte_ctr, s.event_ctr, div);
      a = o.changed();
      ++closes;
      // What the outcome says is what the instance shows.
      ASSERT_EQ(o.profile_ix(), d.profile_ix()) << "sample " << i;
      ASSERT_EQ(o.changed(), d.state() == MeasureState::kApplyNewProfile) << "sample " << i;
      if (o.new_window()) {
        ASSERT_EQ(d.window_start().event_ctr, s.event_ctr) << "sample " << i;
      }
      if (o.has_verdict()) {
        ASSERT_TRUE(d.last_verdict().has_value()) << "sample " << i;
        ASSERT_EQ(o.verdict(), *d.last_verdict()) << "sample " << i;
      }
    } else if (d.start_window(s)) {
      ++starts;
    } else {
      a = d.feed(s, &div).changed();
    }
    const bool b = ref_net_dim(&r, &rs) != 0;
    ASSERT_EQ(a, b) << "sample " << i;
    ASSERT_TRUE(same_as_ref(d, r)) << "sample " << i;
    if (a) {
      ++changes;
      holds[k] = static_cast<int>(gens[k].pick(0, 3));
    }
    if (d.state() == MeasureState::kApplyNewProfile && holds[k]-- <= 0) {
      d.profile_applied();
      ref_dim_work_done(&r);
    }
  }
  EXPECT_GT(changes, 400u);
  EXPECT_GT(closes, changes);  // every change comes from a closing window, most windows stay
  // Every applied change, and each instance's first sample, starts a window through
  // start_window() (the last change of each may still be pending).
  EXPECT_LE(starts, changes + 2);
  EXPECT_GE(starts, changes);
}

TEST_P(Differential, RdmaDimMatchesReference) {
  RdmaStream gen(8000 + GetParam());
  RdmaDim d;
  ref_dim r;
  ref_rdma_dim_init(&r);
  int hold = 0;
  uint64_t changes = 0;
  // > 2 * 65,536 events: the u16 quirk fires at least twice per stream.
  for (int i = 0; i < 150'000; ++i) {
    const auto e = gen.next();
    const bool a = d.on_event(e.time_ns, e.completions);
    const bool b = ref_rdma_dim(&r, e.completions, e.time_ns) != 0;
    ASSERT_EQ(a, b) << "event " << i;
    ASSERT_TRUE(same_as_ref(d, r)) << "event " << i;
    ASSERT_EQ(d.measuring_sample().event_ctr, r.measuring_sample.event_ctr);
    ASSERT_EQ(d.measuring_sample().comp_ctr, r.measuring_sample.comp_ctr);
    ASSERT_EQ(d.window_start().comp_ctr, r.start_sample.comp_ctr);
    if (a) {
      ++changes;
      hold = static_cast<int>(gen.pick(0, 70));
    }
    if (d.state() == MeasureState::kApplyNewProfile && hold-- <= 0) {
      d.profile_applied();
      ref_dim_work_done(&r);
    }
  }
  EXPECT_GT(changes, 100u);
}

// on_events() must equal per-event rdma_dim() calls with the documented spreading, including
// the bulk path taken once a change is pending.
TEST_P(Differential, RdmaOnEventsMatchesPerEventReference) {
  RdmaStream gen(9000 + GetParam());
  RdmaDim d;
  ref_dim r;
  ref_rdma_dim_init(&r);
  int64_t t = static_cast<int64_t>(gen.pick(0, 1ULL << 40));
  uint64_t changes = 0;
  for (int period = 0; period < 3'000; ++period) {
    const int64_t t_end = t + static_cast<int64_t>(gen.pick(0, 40'000'000));
    const uint64_t events = gen.pick(0, 4) == 0 ? gen.pick(0, 63) : gen.pick(0, 3'000);
    const uint64_t comps = events * gen.pick(0, 40) + gen.pick(0, events);
    const bool a = d.on_events(t, t_end, events, comps);
    bool b = false;
    const auto span = static_cast<uint64_t>(t_end - t);
    for (uint64_t i = 0; i < events; ++i) {
      const int64_t ti = t + static_cast<int64_t>(span * (i + 1) / events);
      const uint64_t ci = comps / events + (i < comps % events ? 1 : 0);
      b |= ref_rdma_dim(&r, ci, ti) != 0;
    }
    ASSERT_EQ(a, b) << "period " << period;
    ASSERT_TRUE(same_as_ref(d, r)) << "period " << period;
    ASSERT_EQ(d.measuring_sample().event_ctr, r.measuring_sample.event_ctr);
    ASSERT_EQ(d.measuring_sample().comp_ctr, r.measuring_sample.comp_ctr);
    if (events > 0) {
      ASSERT_EQ(d.measuring_sample().time_ns, r.measuring_sample.time);
    }
    if (a) ++changes;
    if (d.state() == MeasureState::kApplyNewProfile) {  // the controller applies per period
      d.profile_applied();
      ref_dim_work_done(&r);
    }
    t = t_end;
  }
  EXPECT_GT(changes, 50u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, Differential, ::testing::Range(0, 8));

}  // namespace
}  // namespace dim
