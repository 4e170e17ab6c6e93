// RdmaDim: one RDMA DIM instance (lib/dim/rdma_dim.c driven by ib_core cq.c), bit-for-bit
// the kernel's decisions for the same event stream (dim-spec section 5).
//
// Contract:
//  - on_event() is one rdma_dim() call: one poll pass of the CQ with its completion count.
//    The instance keeps its own running counters (measuring_sample), like the kernel.
//  - Starts at index 0 GOING_RIGHT and never parks. A SAME window resets the index to 0 when
//    cpe_ratio <= 50 * index; a WORSE window turns and steps; at an edge a step only turns.
//  - When on_event() returns true the index changed and state() is kApplyNewProfile; the
//    caller applies profile() (cq_count = comps, cq_period = usec) and calls
//    profile_applied(). Events arriving meanwhile still advance the running counters.
//  - Kernel quirk kept on purpose (dim-spec 5.1, vector R6): the window length is measured as
//    (u32)((int)event_ctr - (int)start.event_ctr) on u16 counters, not with BIT_GAP. When the
//    u16 event counter wraps (every 65,536 events) the distance becomes huge and the current
//    window closes after only 65,536 - start events; epms still assumes 64 events, so that
//    short window usually reads WORSE and moves the index.
// Not thread-safe; one instance per CQ, driven by one thread.
#pragma once

#include <cstdint>
#include <optional>

#include "dim/profile.h"
#include "dim/sample.h"
#include "dim/state.h"
#include "dim/stats.h"
#include "dim/tune.h"

namespace dim {

class RdmaDim {
 public:
  RdmaDim();

  bool on_event(int64_t time_ns, uint32_t completions);
  // Approximation of per-event input for a caller that samples periodically: `events` calls
  // to on_event() for the events seen in (t_begin_ns, t_end_ns], completions spread evenly
  // (the remainder to the first events), event i of n at t_begin + floor((t_end - t_begin) *
  // (i + 1) / n). The real per-event spacing and completion counts are unknown, so decisions
  // can differ from the kernel's where a window boundary falls inside the period. Once a
  // change is pending the remaining events only advance the running counters (exactly what
  // the kernel does with them). Returns true if a change became pending during this call.
  // A period with t_end_ns < t_begin_ns places every event at t_begin_ns.
  bool on_events(int64_t t_begin_ns, int64_t t_end_ns, uint64_t events, uint64_t completions);

  // ib_cq_rdma_dim_work ran: the next event starts a new window. No-op when nothing is pending.
  void profile_applied();
  void restart_window();

  Profile profile() const { return kRdmaProfiles[tuner_.profile_ix]; }
  uint8_t profile_ix() const { return tuner_.profile_ix; }
  TuneState tune_state() const { return tuner_.tune_state; }
  MeasureState state() const { return state_; }
  uint8_t tired() const { return tuner_.tired; }  // always 0: RDMA DIM has no tired rule
  uint8_t steps_right() const { return tuner_.steps_right; }
  uint8_t steps_left() const { return tuner_.steps_left; }
  const Tuner& tuner() const { return tuner_; }
  const Stats& prev_stats() const { return prev_stats_; }
  const Sample& window_start() const { return start_; }
  // The running counters (u16 events, u32 completions) and the time of the last event.
  const Sample& measuring_sample() const { return measuring_; }
  std::optional<Verdict> last_verdict() const { return last_verdict_; }
  const std::optional<Stats>& last_stats() const { return last_stats_; }
  uint64_t windows_evaluated() const { return windows_evaluated_; }

 private:
  bool decide(const Stats& curr);

  MeasureState state_ = MeasureState::kStartMeasure;
  Tuner tuner_{};
  Stats prev_stats_{};
  Sample start_{};
  Sample measuring_{};
  std::optional<Verdict> last_verdict_;
  std::optional<Stats> last_stats_;
  uint64_t windows_evaluated_ = 0;
};

// rdma_dim_stats_compare(): completion rate first, then completions per event.
Verdict rdma_compare(const Stats& curr, const Stats& prev);

}  // namespace dim
