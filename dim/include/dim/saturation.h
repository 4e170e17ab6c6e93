// SaturationPolicy: per core, knows when the core is saturated and, while it is, replaces
// ModelPolicy's latency objective with throughput (completions per CPU second).
//
// Why: ModelPolicy minimises the latency its Poisson model predicts. On a saturated core what is
// lost is throughput, and the profile that keeps it is the one that batches enough that interrupts
// stop eating the core, which the latency objective under-batches (the simulator's W3: 8-10
// completions per interrupt where the best static profile has 19-21).
//
// Saturation, from one period's measurements on the core:
//   pressure = busy >= enter_busy (X)  or  exhausted polls >= enter_exhausted of >= min_polls
//              polls  or  backlog_growing
// (exhausted polls count only at busy >= leave_busy: on a core with idle time they say the
// batches outgrew the poll budget, not that the poll loop falls behind)
//   headroom = busy' < leave_busy (Y < X)  and  exhausted share < leave_exhausted  and  no
//              backlog growth
// The core enters after enter_periods (K) pressure periods in a row and leaves in the first
// period with headroom at its best profile ("fast down stays fast"; never during a trial, see
// below); between the two it keeps its state. busy is the core's non-idle time over the period
// (the caller's measure; hard-IRQ + softirq where idle is unknown). X is 0.97, not lower: a core
// at 0.9 under a Poisson load is busy by the load's own variance, and a trial there only adds
// delay. busy' is busy projected to the latency objective's profile: batching is what freed the
// core, so handing back must not be judged at the batch that freed it. With the measured batch
// B = completions / interrupts and the batch B_m the cost model predicts for ModelPolicy's pick
// at this load,
//     busy' = busy + completions · C_irq · (1/B_m − 1/B) / Δt
// (no projection while the pick is the throughput profile). Without it a core freed by batching
// would hand back, saturate again, and cycle.
//
// The throughput objective, a climb from the latency objective's profile m: jumps toward where
// the cost model puts the CPU saving, each confirmed by the measured rate, and a bisection back
// when one batched too much. The rules, each from a case that went wrong without it (the sweep,
// docs/benchmarks/sweep.md):
//  - no trial at all (saturated, each queue at its latency objective's pick: overrides() is
//    false) when moderation has nothing to save or the rate cannot judge it: fewer than
//    min_polls interrupts over the pressure periods (the queues stay in polling), at most
//    no_batch_ratio (1.25) completions per interrupt at a profile the cost model predicts to
//    batch at least qd1_judge_batch (1.5) (one completion outstanding per queue: QD~1, which
//    moderation only delays), or the pressure periods' rates spread by more than max_noise
//    (10 %: bursts, on/off, a moving closed loop, where one period's rate cannot show a 2 %
//    gain). Otherwise a verdict needs a change of g = max(climb_gain, 2 × spread);
//  - at most no_batch_ratio completions per interrupt at a profile predicted to batch less than
//    qd1_judge_batch says nothing: a Poisson stream of 25k/s per queue batches 1.03 at a 1 µs
//    timer and 4 at 128 µs, a QD~1 loop 1 at both (sweep-1-080: 30 queues on 4 cores, the core
//    livelocked at 1 completion per interrupt, p99 150 ms where kernel DIM's was 0.3 ms). A
//    probe tells, on one queue (probing(): the caller's busiest; a probe of every queue cost
//    QD~1 loops of 20-50 queues per core 1-3 % of their rate in the sweep's 0.5 s runs): for
//    one period that queue takes the lowest profile predicted to batch qd1_judge_batch, if that
//    profile is predicted to save qd1_probe_gain (10 %) of the CPU per completion, climb_gain
//    on a core never idle at entry (busy >= overload_busy: its backlog only grows; sweep-1-233
//    over 2 s held profile 0 at 76 % of the oracle's throughput), else no probe, no trial. At most
//    no_batch_ratio per interrupt there too is QD~1: no trial, and no probe on this core for
//    qd1_retry_ms. More: a batching load, and the climb starts, every queue, with the jump below
//    from the entry's profile;
//  - entering records the completion rate over the K pressure periods (at m) as the best b;
//  - a jump from b aims at the lowest j in (b, hi) whose predicted CPU per completion
//    S = C_c + C_irq/B (cost model, at the measured per-queue rate) is within climb_gain of the
//    least S in (b, hi), if that least S cuts S_b by more than climb_gain (no profile predicted
//    to pay: no jump); hi starts above the table's top. The episode's first jump goes halfway
//    there (the cost model knows no closed loop's depth, and a jump past what the loop can
//    batch costs most of its rate while measured); after a gain the next may go twice as far as
//    the last step;
//  - after a change, settle_periods periods settle (0: the controller writes a change in the step
//    that decides it, so the next period runs at it; a settling period cost W3 a period per
//    trial), then measure_periods periods measure the core's completion rate r_j:
//      r_j > b's · (1 + g): j is the new best (the old one bounds the search on its side);
//      r_j < b's · (1 − g), the core with headroom during the trial: either the trial throttled a
//        closed loop (its delay cost more than the CPU it saved) or the load left. j bounds the
//        search on its side, and the core goes back to b for two check periods (one settles):
//        headroom there ends the episode, saturation resumes the search;
//      r_j < b's · (1 − g), the core still saturated: more batching cost completions on a core
//        it should have freed, an open loop whose backlog the trial grew (or noise): back to b,
//        hold;
//      otherwise, on a core the best left no idle at all (busy >= overload_busy, 0.995: an
//        overload) with the trial's CPU per completion, its measured batch priced at the core's
//        costs (C_c + C_irq · interrupts / completions), below b's · (1 − g): j is the new
//        best, as for a rate gain. An open loop polled at its offered rate shows the gain only
//        there: the polled rate cannot rise, the CPU freed goes to the application the
//        interrupts starved, whose backlog the daemon does not see (sweep-1-080, sweep-1-084).
//        The measured time per completion is no verdict: sampled one run in 8, it moves by
//        10-20 % between periods where the batch moves by 1 %. Not on a core with idle left
//        (sweep-1-151, busy 0.98 at the best: the CPU freed went idle, and the batching cost
//        p99 7×). The best rate stays the highest measured, so a closed loop that loses a
//        little rate at each such step stops within g of its best. Where the two measures
//        disagree (the CPU per completion gains, the rate fell by more than g, the core still
//        saturated), the trial measures one period more and the rate over both decides: one
//        period of a heavy-tailed load (sweep-2-224) held a core at the livelocked profile.
//        Unless the extra period left the core idle time (busy < overload_busy) at a rate not
//        worse than b's: then it alone decides, a gain. Raising an open loop's moderation holds
//        back its rate times the added delay once, in the first period; the next polls the
//        offered rate again with CPU to spare (sweep-1-044: 9.5 % less, then b's rate at busy
//        0.75; judged on both, the core went back to 0, never idle, p99 166x the oracle's).
//        On such a core "the rate fell" means by more than max(g, overload_sigmas (2) standard
//        deviations of the difference of the two rates' completion counts, as Poisson counts:
//        sqrt(1/n_j + 1/n_b)): the polled rate of an overloaded open loop is its offered rate
//        whatever the profile, and 4,500 completions a period move it by 1.5 % by themselves
//        (sweep-1-003: a trial 3.3 % below a best whose pressure periods had drawn 2 % high held
//        a core at 0, never idle, for the rest of the run);
//      otherwise the rate does not answer to moderation by more than g (limited elsewhere, or
//        a gain below what the verdict can tell): hold whichever of b and j measured higher. On
//        a core b left no idle at all both rates are the offered rate within its noise, and the
//        CPU per completion decides: j costing less, by however little, is a gain as above (the
//        climb goes on), else back to b and hold (sweep-2-021: a trial 1.7 % below held a core
//        at 0, never idle, p99 620× the oracle's);
//  - the next trial: a further jump while nothing above b measured worse, else the midpoint of
//    (b, hi); then, once something above b measured worse (the sign of an overshoot), the upper
//    midpoint of (lo, b), lo being m or the highest profile below b that measured worse (a
//    bisection on a unimodal rate; without that sign a probe down would only cost throughput);
//  - where the cost model predicts no saving above b (no jump) after a gain (the only way there
//    with nothing above b measured worse): b + 1, once an episode (edge_step), judged as any trial.
//    The Poisson model does not see a closed loop's batches: W3 512B batches 16 at (32 us, 16) and
//    21.3 at (32 us, 32), predicted alike, and the climb held 7, 1 % below 8 and kernel DIM;
//  - nothing left in (lo, hi): hold b. Holding lasts while the core stays saturated: no probing
//    (but see the next rule).
//  - holding, a best measured with idle left (its trials judged on their rate alone, which an
//    open loop's cannot show) that leaves the core never idle for K periods is measured again
//    as an overload, and the search above it resumes with the overloaded core's CPU verdict,
//    once an episode (sweep-2-101 over 2 s: the best held the core at busy 1.00 for 1.7 s);
//  - holding a best of its own above the latency objective's pick m, on a core with idle left
//    (busy < enter_busy) for K periods in a row, whose busy projected one profile down (as for
//    leaving, with the cost model's batch there) stays below enter_busy: that profile is
//    measured once (descend). The best's rate, batch and busy are measured again over those K
//    periods. The profile below is kept if the rate holds within g, the core keeps idle time
//    (busy < overload_busy), and the latency objective priced with the measured busy and batch,
//        L = D + (C_c + C_irq · interrupts / completions) / (1 − busy)
//    (D from the cost model at the measured rate), is lower there than at the best; the next
//    descent may then follow. Else back to the best, and that profile bounds the search below
//    (lo): no more descents there. A best is taken on rate, and a best taken while a backlog
//    drained stays where only draining needed it: an open loop at 114 % of profile 0's
//    capacity kept 256 us of moderation, the core 25 % idle, p99 1.8x the oracle's over 2 s
//    (sweep-1-080); the leave projection, at profile 0, saw no headroom;
//  - a passive episode (nothing to climb to) is judged again when its load changes under it:
//    the core's batch at the latency objective's pick it was judged at rises by more than
//    rejudge_batch_rise (5 %) over the batch the entry measured there, K periods in a row. The
//    episode ends without a leave (the queues already run that pick), the QD~1 probe's wait is
//    cleared, and the next K pressure periods enter anew: a new episode, whose verdict the next
//    rise is measured against. A closed loop of depth 1 per queue is QD~1 and the same loop at
//    depth 3 batches, on a core never idle in both (sweep-1-247, sweep-2-089: held passive at
//    86-89 % of the oracle's throughput after the step; W2-closed@8q under told costs: 199k/s
//    where the oracle has 246k/s at QD4);
//  - a leave the load proves wrong is not repeated at once: the core left on a projection (the
//    costs it uses put the softirq's wake-up on the completions, so at a larger batch the
//    interrupt looks cheaper than it is), found the latency objective's profile saturated and
//    entered again within refail_ms at a rate not above the one it left at by more than g (more
//    is a new load: a burst after a quiet spell). The next episode then does not leave for
//    leave_hold_ms, doubled at each such failure in a row (at most leave_hold_max_ms), unless
//    the rate falls by more than g below the rate it left at: the load changed. A passive
//    episode leaves freely. Without it sweep-1-019's core cycled leave, overload, enter, climb
//    every ~100 ms for as long as the load lasted, each cycle a backlog and four changes;
//  - a period in which the caller says the rule's profile was not in force (its change budget
//    held the wish back: SaturationInput::wish_in_force) is no measurement of a trial or a
//    check: their periods count again from the next one. Judged as the trial's, the profile
//    the core ran (the one before) measured "no gain", and the rule held it for good: a core
//    never idle at the latency objective's profile, held there for seconds (sweep-1-019 run
//    for 5 s: p99 228 ms against the oracle's 78 us).
// Every trial narrows (lo, hi), so one saturation episode's climb changes the profile at most
// (table size + 2) times (the edge step's two included), each at least settle_periods +
// measure_periods periods apart; each descent lowers the best or raises lo, two changes at most,
// K hold periods apart; the reopen is once an episode; a re-judgment changes nothing itself and
// starts a new episode (bounded the same way) only on a batch risen since the last verdict; leaving
// hands the queue back to ModelPolicy at once (its pick, which was updated all along, is then the
// wish).
//
// The controller keeps one per core beside the queues' ModelPolicy instances, which it still
// updates every period: while overrides() the wish is profile_ix(), otherwise ModelPolicy's
// (bit-identical to before when the core never saturates). Pure, deterministic, no allocation,
// no clock (Δt is an input). One instance per core, driven by one thread.
#pragma once

#include <cstdint>

#include "dim/cost_model.h"
#include "dim/model_policy.h"

namespace dim {

struct SaturationParams {
  double enter_busy = 0.97;      // X: busy fraction of the period that is pressure
  double leave_busy = 0.75;      // Y (< X): projected busy fraction below which the core is free
  uint8_t enter_periods = 2;     // K: pressure periods in a row to enter (>= 1)
  double enter_exhausted = 0.5;  // share of polls that used their whole budget: pressure
  double leave_exhausted = 0.1;  // ... and below which the core may leave
  uint32_t min_polls = 16;       // fewer polls say nothing about exhaustion
  double climb_gain = 0.02;      // a step must be predicted, and measured, to gain more than this
  uint8_t settle_periods = 0;    // periods ignored after a change (a writer that applies late)
  uint8_t measure_periods = 1;   // periods measured per profile, after settle_periods (>= 1)
  // Completions per interrupt at or below which the queues do not batch (QD~1): no climb.
  double no_batch_ratio = 1.25;
  // Spread of the pressure periods' rates, (max − min) / max, above which the load moves too
  // much by itself for a trial to be judged: no climb. Below it a verdict needs a change of
  // max(climb_gain, 2 × spread).
  double max_noise = 0.10;
  // The batch the cost model must predict at the entry's profile (at the measured per-queue
  // rate) for at most no_batch_ratio completions per interrupt there to say QD~1; below it a
  // probe on one queue tells, at the lowest profile predicted to batch this much ...
  double qd1_judge_batch = 1.5;
  // ... if that profile is predicted to save at least this share of the CPU per completion: a
  // QD~1 loop pays the probe's delay for the period it is measured. On a core never idle at
  // entry (overload_busy) climb_gain is enough.
  double qd1_probe_gain = 0.10;
  // After a probe showed QD~1, no probe on this core for this long (the hold of a bounce).
  uint32_t qd1_retry_ms = 10'000;
  // Busy fraction at the best profile from which the core is overloaded (never idle): a trial
  // that measured the same rate with fewer interrupts per completion then gains (the polled
  // rate cannot show what the backlog gains).
  double overload_busy = 0.995;
  // On such a core, a trial that measured fewer interrupts per completion is worse on its rate
  // only if the rate fell by more than this many standard deviations of the difference of the
  // two rates' completion counts (as Poisson counts: sqrt(1/n_trial + 1/n_best)): the polled
  // rate of an overloaded open loop is its offered rate, whatever the profile, so its change
  // between periods is counting noise.
  double overload_sigmas = 2.0;
  // Once an episode, after a measured gain, the profile above the best where the cost model
  // predicts no saving is measured anyway (false: never).
  bool edge_step = true;
  // A core that enters again within refail_ms of leaving, at a rate not above the one it left at
  // by more than the episode's g, left on a projection the load proved wrong: its next episode
  // does not leave for leave_hold_ms, doubled after each such failure in a row up to
  // leave_hold_max_ms, unless its rate falls that far below the rate it left at (0: no hold).
  uint32_t refail_ms = 200;
  uint32_t leave_hold_ms = 1'000;
  uint32_t leave_hold_max_ms = 60'000;
  // Holding a best above the latency objective's pick with idle left, measure the profile below
  // (the descent; false: never) ...
  bool descend = true;
  // ... if the core's busy projected there, with the interrupts it adds priced at this many
  // times the cost given, stays below enter_busy.
  double descent_irq_margin = 2.0;
  // A passive episode (nothing to climb to) whose core batches, at the latency objective's pick
  // it was judged at, more than this share above the batch the entry measured there, for K
  // periods in a row, is judged again: the episode ends without a leave, the QD~1 probe's wait
  // is cleared, and the next K pressure periods enter anew (0: never) ...
  double rejudge_batch_rise = 0.05;
  // ... a rise within this many standard deviations of the two batches' counting noise (as
  // Poisson counts of the interrupts behind each: sqrt(1/n_now + 1/n_entry)) is none.
  double rejudge_sigmas = 2.0;
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
  // The rule's profile was in force on the core's queues during the period (the caller's change
  // budget or a writer may hold a wish back). While it overrides, a period that ran at another
  // profile is no measurement of the trial or check: it restarts their count.
  bool wish_in_force = true;
  // While probing(): the probe queue's interrupts and completions this period.
  uint64_t probe_events = 0;
  uint64_t probe_completions = 0;
};

class SaturationPolicy {
 public:
  explicit SaturationPolicy(const SaturationParams& params = {});

  // One period. `cost` is the core's costs (CostEstimator::costs(), with the sharers the model
  // uses). Returns true when saturated() or profile_ix() changed (entering, leaving, a climb step).
  bool update(const ModelTable& table, const CostParams& cost, const SaturationInput& in);
  // A period on a core whose latency objective is not known yet (the controller learns the
  // core's representative queue in the period that first shows it): counts toward the pressure
  // streak, never enters (one period short of K at most). A saturated core from the first
  // period then enters one period sooner. Periods without completions do not count.
  void pressure_without_objective(const SaturationInput& in);
  // Starts again as a new instance with the same parameters (no episode, no pressure streak, the
  // latency objective's pick), keeping the counters below: they count since construction.
  void restart();

  bool saturated() const { return saturated_; }
  // Saturated with a throughput profile of its own: the core's queues take profile_ix(). Not
  // when the episode found nothing to climb to (too few interrupts, QD~1, a rate too noisy to
  // judge): there each queue keeps its latency objective's pick.
  bool overrides() const { return saturated_ && !passive_ && !probe_; }
  // The QD~1 probe runs: one queue of the core (the caller's choice, its busiest) takes
  // profile_ix(), the others keep their latency objective's pick, and the caller reports that
  // queue's counts (SaturationInput::probe_*).
  bool probing() const { return saturated_ && probe_; }
  // The throughput profile while saturated() (undefined otherwise: use ModelPolicy's).
  uint8_t profile_ix() const { return ix_; }
  // The wish: profile_ix() while it overrides(), `model_ix` otherwise.
  uint8_t wish(uint8_t model_ix) const { return overrides() ? ix_ : model_ix; }
  bool holding() const { return phase_ == Phase::kHold; }
  // The best profile measured this episode (the entry's until a trial gains): profile_ix() is a
  // trial while it differs.
  uint8_t best_ix() const { return best_ix_; }
  double best_rate() const { return best_rate_; }  // completions/s at the best profile
  uint32_t episodes() const { return episodes_; }  // saturation episodes since construction
  // QD~1 probes since construction, by verdict.
  struct Probes {
    uint32_t qd1 = 0;       // one completion per interrupt there too: no climb
    uint32_t batching = 0;  // the probe queue batched: the climb started
  };
  const Probes& probes() const { return probes_; }
  // Descents since construction (one profile below a best held with idle left), by verdict.
  struct Descents {
    uint32_t kept = 0;  // the profile below became the best
    uint32_t back = 0;  // back to the best: that profile bounds the search below
  };
  const Descents& descents() const { return descents_; }
  // Passive episodes ended to be judged again (rejudge_batch_rise) since construction.
  uint32_t rejudged() const { return rejudged_; }
  const SaturationParams& params() const { return p_; }

 private:
  // kSettle, kMeasure: a trial; kHold: at the best, for good; kCheck: back at the best after a
  // trial that was worse while the core had headroom, to tell a throttled loop from a load that
  // left (the first period settles, the second decides).
  enum class Phase : uint8_t { kSettle, kMeasure, kHold, kCheck };
  // The jump's profile above `from` (below hi_), or `from` when none is predicted to pay.
  uint8_t jump_from(const ModelTable& t, const CostParams& cost, uint8_t from, double rate) const;
  // The QD~1 probe's profile above `from`, or `from` when none can tell or is worth it.
  uint8_t qd1_probe(const ModelTable& t, const CostParams& cost, uint8_t from, double rate) const;
  // The next profile to measure (the best when none is left). Marks the episode's edge step.
  uint8_t next_trial(const ModelTable& t, const CostParams& cost, double rate);
  bool step_to(uint8_t j);
  // The trial in force becomes the best, with its measures; the best rate stays the highest
  // measured (a CPU gain at a lower rate keeps it), with the completions behind it.
  void take_best(double rate, double ipc, double busy);
  void start_measuring();  // a trial's counts from zero
  // One period's measures, derived from the input once (in.dt_ns > 0).
  struct Period {
    double dt = 0;  // ns, bounded
    double completions = 0;
    double busy = 0;       // fraction of dt
    double exhausted = 0;  // share of polls that used their budget, 0 where it says nothing
  };
  Period period_of(const SaturationInput& in) const;
  // The pressure streak: true when this period makes it K long.
  bool count_pressure(const SaturationInput& in, const Period& m);
  bool hold_best();  // returns whether the wish changed
  // Holding: a best measured with idle left that has left the core never idle for K periods is
  // measured again as an overload, and the search above it resumes (once an episode).
  bool reopen_if_overloaded(const ModelTable& t, const CostParams& cost, const SaturationInput& in,
                            const Period& m);
  // Holding: a best above the latency objective's pick `model_ix` with idle left for K periods
  // is measured again, and the profile below is tried (the descent).
  bool descend_if_idle(const ModelTable& t, const CostParams& cost, const SaturationInput& in,
                       const Period& m, uint8_t model_ix);
  // The descent's verdict on the profile below the best (climb()).
  bool judge_descent(const ModelTable& t, const CostParams& cost, const SaturationInput& in);
  // Passive: a batch at the judged pick risen by rejudge_batch_rise for K periods ends the
  // episode, to be judged again on the load as it is now.
  bool rejudge_if_batching(const SaturationInput& in, const Period& m, uint8_t model_ix);
  // Interrupts per completion over the accumulated periods (0: none), and the CPU per completion
  // they cost at `cost`: C_c + C_irq · ipc (the measured batch, priced at the core's costs).
  double interrupts_per_completion() const;
  static double cpu_per_completion(const CostParams& cost, double ipc);
  // A period of a trial (settling or measuring), and the decision that ends it.
  bool climb(const ModelTable& t, const CostParams& cost, const SaturationInput& in,
             const Period& m);

  SaturationParams p_;
  double best_rate_ = 0;
  double acc_completions_ = 0;  // over the pressure streak, then the measuring periods
  double acc_ns_ = 0;
  double acc_interrupts_ = 0;    // over the pressure streak, then the measuring periods
  double best_ipc_ = 0;          // interrupts per completion measured at the best (0: none)
  double acc_busy_ns_ = 0;       // busy time over the pressure streak, then the measuring periods
  double best_busy_ = 0;         // the busy fraction measured at the best
  double best_completions_ = 0;  // the completions behind best_rate_ (its counting noise)
  double acc_probe_events_ = 0, acc_probe_completions_ = 0;  // the probe queue's
  double min_rate_ = 0, max_rate_ = 0;                       // the streak's period rates
  double noise_ = 0;                                         // their spread at entry
  double gain_ = 0;   // what a trial's verdict needs this episode
  uint8_t step_ = 1;  // how far the next jump may go (doubles on each gain)
  uint32_t episodes_ = 0;
  Probes probes_;
  Descents descents_;
  uint8_t streak_ = 0;
  uint8_t count_ = 0;  // periods in the phase
  uint8_t ix_ = 0;
  uint8_t best_ix_ = 0;
  // The search's bracket: the profiles between lo_ and hi_ (both excluded) may beat the best.
  uint16_t hi_ = 0;  // the lowest profile above the best that measured worse (or above the top)
  uint8_t lo_ = 0;   // the highest below it that measured worse (or the latency objective's)
  bool saturated_ = false;
  bool edge_tried_ = false;      // this episode measured the step above where the model saw nothing
  bool reopened_ = false;        // this episode measured its best again as an overload
  uint8_t overload_streak_ = 0;  // holding periods never idle at a best measured with idle left
  bool descent_ = false;         // the running trial is a descent
  // Holding periods in a row with idle left at the best, and their sums (the descent's
  // measure of the best).
  struct IdleStreak {
    uint8_t periods = 0;
    double completions = 0, ns = 0, busy_ns = 0, interrupts = 0;
  };
  IdleStreak idle_;
  bool passive_ = false;  // this episode found nothing to climb to
  // The batch the entry measured at the latency objective's pick (completions per interrupt over
  // the pressure periods; 0: none), that pick, and the passive periods in a row batching more.
  double judged_batch_ = 0;
  double judged_interrupts_ = 0;  // the interrupts behind it
  uint8_t judged_ix_ = 0;
  uint8_t rise_streak_ = 0;
  uint32_t rejudged_ = 0;
  bool extended_ = false;     // the running trial measures one period more
  bool probe_ = false;        // the running trial is the QD~1 probe (one queue)
  uint32_t qd1_wait_us_ = 0;  // time left without a QD~1 probe
  // The failed-leave hold: time since the last leave (saturating), the rate the core left at,
  // the hold left in this episode and the one the next failure gets.
  uint64_t since_leave_us_ = UINT64_MAX;
  double left_rate_ = 0;
  uint64_t leave_hold_us_ = 0;
  uint64_t next_hold_us_ = 0;
  bool left_overriding_ = false;  // the last leave handed the queues back from a profile of its own
  Phase phase_ = Phase::kHold;
};

}  // namespace dim
