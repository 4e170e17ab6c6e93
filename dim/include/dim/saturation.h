// SaturationPolicy: per core, knows when the core is saturated and, while it is, replaces
// ModelPolicy's latency objective with throughput (completions per CPU second).
//
// Why: ModelPolicy minimises the latency its Poisson model predicts. On a saturated core what is
// lost is throughput, and the profile that keeps it is the one that batches enough that interrupts
// stop eating the core, which the latency objective under-batches (issue 22: W3 at 8-10
// completions per interrupt where the best static profile has 19-21).
//
// Saturation, from one period's measurements on the core:
//   pressure = busy >= enter_busy (X)  or  exhausted polls >= enter_exhausted of >= min_polls
//              polls  or  backlog_growing
//   headroom = busy' < leave_busy (Y < X)  and  exhausted share < leave_exhausted  and  no
//              backlog growth
// The core enters after enter_periods (K) pressure periods in a row and leaves in the first
// period with headroom ("fast down stays fast"); between the two it keeps its state. busy is
// hard-IRQ + softirq (+ application, if the caller knows it) time over the period. busy' is busy
// projected to the latency objective's profile: batching is what freed the core, so handing back
// must not be judged at the batch that freed it. With the measured batch B = completions /
// interrupts and the batch B_m the cost model predicts for ModelPolicy's pick at this load,
//     busy' = busy + completions · C_irq · (1/B_m − 1/B) / Δt
// (no projection while the pick is the throughput profile). Without it a core freed by batching
// would hand back, saturate again, and cycle.
//
// The throughput objective, a decisive climb from the latency objective's profile m: a jump to
// where the cost model puts the CPU saving, confirmed by the measured rate, and a bisection back
// when the jump batched too much.
//  - entering records the completion rate r_m over the K pressure periods (at m) as the best;
//  - a jump from the best profile b goes to the lowest j in (b, hi) whose predicted CPU per
//    completion S = C_c + C_irq/B (cost model, at the measured per-queue rate) is within
//    climb_gain of the least S in (b, hi), provided that least S cuts S_b by more than climb_gain
//    (no profile predicted to pay: no jump). hi starts above the table's top;
//  - after a change, one period settles (the change applies mid-period), then measure_periods
//    periods measure the core's completion rate r_j:
//      r_j > best · (1 + climb_gain): j is the best (the old best bounds the search on its side);
//      r_j < best · (1 − climb_gain): j bounds the search on its side (above the best: it batched
//        too much, a closed loop whose moderation delay costs more than the CPU it saves). If the
//        core had headroom during the trial, the load may have left instead: back to the best for
//        two periods (one settles), where headroom ends the episode and saturation resumes the
//        search;
//      otherwise the rate does not answer to moderation (it is limited elsewhere): back to the
//        best, and hold;
//  - the next trial: a further jump while nothing above the best measured worse, else the
//    midpoint of (b, hi); then, once something above b measured worse (a sign that the jump
//    overshot a closed loop's best), the upper midpoint of (lo, b), lo being the latency
//    objective's profile or the highest below b that measured worse (a bisection on a unimodal
//    rate; without that sign a probe down would only cost throughput);
//  - no profile left in (lo, hi): hold the best. Holding lasts while the core stays saturated: no
//    probing.
// Every trial narrows (lo, hi), so one saturation episode changes the profile at most
// (table size + 1) times, each at least measure_periods + 1 periods apart, and never again until
// it ends; leaving hands the queue back to ModelPolicy at once (its pick, which was updated all
// along, is then the wish).
//
// The controller keeps one per core beside the queues' ModelPolicy instances, which it still
// updates every period: while saturated() the wish is profile_ix(), otherwise ModelPolicy's
// (bit-identical to before when the core never saturates). Pure, deterministic, no allocation,
// no clock (Δt is an input). One instance per core, driven by one thread.
#pragma once

#include <cstdint>

#include "dim/cost_model.h"
#include "dim/model_policy.h"

namespace dim {

struct SaturationParams {
  double enter_busy = 0.90;      // X: busy fraction of the period that is pressure
  double leave_busy = 0.75;      // Y (< X): projected busy fraction below which the core is free
  uint8_t enter_periods = 2;     // K: pressure periods in a row to enter (>= 1)
  double enter_exhausted = 0.5;  // share of polls that used their whole budget: pressure
  double leave_exhausted = 0.1;  // ... and below which the core may leave
  uint32_t min_polls = 16;       // fewer polls say nothing about exhaustion
  double climb_gain = 0.02;      // a step must be predicted, and measured, to gain more than this
  uint8_t measure_periods = 1;   // periods measured per profile, after one settling period (>= 1)
  // Completions per interrupt at or below which the queues do not batch (QD~1): no climb.
  double no_batch_ratio = 1.25;
};

// One period on one core.
struct SaturationInput {
  int64_t dt_ns = 0;             // <= 0 decides nothing
  uint64_t busy_ns = 0;          // hard-IRQ + softirq (+ application if known) time
  uint64_t interrupts = 0;       // hard-IRQ handler runs
  uint64_t completions = 0;      // packets / CQEs polled on the core, all its queues
  uint64_t polls = 0;            // softirq polls
  uint64_t exhausted_polls = 0;  // polls that used their whole budget
  bool backlog_growing = false;  // a backlog the caller measures grew (none measured: false)
  uint8_t model_ix = 0;          // ModelPolicy's current pick (the latency objective)
  double queues = 1;             // queues of this table sharing the core (per-queue rate)
};

class SaturationPolicy {
 public:
  explicit SaturationPolicy(const SaturationParams& params = {});

  // One period. `cost` is the core's costs (CostEstimator::costs(), with the sharers the model
  // uses). Returns true when saturated() or profile_ix() changed (entering, leaving, a climb step).
  bool update(const ModelTable& table, const CostParams& cost, const SaturationInput& in);

  bool saturated() const { return saturated_; }
  // The throughput profile while saturated() (undefined otherwise: use ModelPolicy's).
  uint8_t profile_ix() const { return ix_; }
  // The wish: profile_ix() while saturated, `model_ix` otherwise.
  uint8_t wish(uint8_t model_ix) const { return saturated_ ? ix_ : model_ix; }
  bool holding() const { return phase_ == Phase::kHold; }
  double best_rate() const { return best_rate_; }  // completions/s at the best profile
  uint32_t episodes() const { return episodes_; }  // saturation episodes since construction
  const SaturationParams& params() const { return p_; }

 private:
  // kSettle, kMeasure: a trial; kHold: at the best, for good; kCheck: back at the best after a
  // trial that was worse while the core had headroom, to tell a throttled loop from a load that
  // left (the first period settles, the second decides).
  enum class Phase : uint8_t { kSettle, kMeasure, kHold, kCheck };
  // The jump's profile above `from` (below hi_), or `from` when none is predicted to pay.
  uint8_t jump_from(const ModelTable& t, const CostParams& cost, uint8_t from, double rate) const;
  // The next profile to measure (the best when none is left).
  uint8_t next_trial(const ModelTable& t, const CostParams& cost, double rate) const;
  bool step_to(uint8_t j);
  bool hold_best();  // returns whether the wish changed
  // A period of a trial (settling or measuring), and the decision that ends it.
  bool climb(const ModelTable& t, const CostParams& cost, const SaturationInput& in,
             double completions, double dt);

  SaturationParams p_;
  double best_rate_ = 0;
  double acc_completions_ = 0;  // over the pressure streak, then the measuring periods
  double acc_ns_ = 0;
  double acc_interrupts_ = 0;  // over the pressure streak
  uint32_t episodes_ = 0;
  uint8_t streak_ = 0;
  uint8_t count_ = 0;  // periods in the phase
  uint8_t ix_ = 0;
  uint8_t best_ix_ = 0;
  // The search's bracket: the profiles between lo_ and hi_ (both excluded) may beat the best.
  uint16_t hi_ = 0;  // the lowest profile above the best that measured worse (or above the top)
  uint8_t lo_ = 0;   // the highest below it that measured worse (or the latency objective's)
  bool saturated_ = false;
  Phase phase_ = Phase::kHold;
};

}  // namespace dim
