// SaturationPolicy's verdicts while it holds its best (saturation.h): an overload that reopens
// the search, a passive episode judged again, the descent to the profile below and its verdict.
#include "dim/saturation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "saturation_math.h"

namespace dim {

using saturation::busy_at;
using saturation::per_queue_rate;

bool SaturationPolicy::reopen_if_overloaded(const ModelTable& t, const CostParams& cost,
                                            const SaturationInput& in, const Period& m) {
  // The best was measured with idle left, so the search judged its trials on their rate alone,
  // and now it leaves the core never idle: an open loop's backlog grows at a profile whose
  // trials above freed CPU the rate could not show (sweep-2-101 over 2 s: a trial at 6 measured
  // busy 0.79 at the best's rate within its noise, the best 4 held at busy 1.00 for 1.7 s, p99
  // 474x the oracle's). Measure the best again as an overload and search above it, once an
  // episode.
  const bool stale = !passive_ && !reopened_ && in.wish_in_force && best_busy_ < p_.overload_busy &&
                     m.busy >= p_.overload_busy && m.completions > 0;
  overload_streak_ = stale ? static_cast<uint8_t>(overload_streak_ + 1) : 0;
  if (overload_streak_ < p_.enter_periods) return false;
  reopened_ = true;
  overload_streak_ = 0;
  best_busy_ = m.busy;
  best_ipc_ = static_cast<double>(in.interrupts) / m.completions;
  best_rate_ = m.completions * 1e9 / m.dt;
  best_completions_ = m.completions;
  lo_ = best_ix_;
  hi_ = uint16_t{t.max_ix()} + 1;
  const uint8_t j = next_trial(t, cost, per_queue_rate(m.completions, m.dt, in.queues));
  return j != best_ix_ && step_to(j);
}

bool SaturationPolicy::rejudge_if_batching(const SaturationInput& in, const Period& m,
                                           uint8_t model_ix) {
  // A passive verdict holds as long as the core stays saturated, and it was taken on the load
  // of the entry: a closed loop of depth 1 per queue is QD~1, the same loop at depth 3 batches
  // (sweep-1-247: 53 queues on 3 cores, never idle in both phases; after the step the queues
  // batched 1.10 at profile 0 where the probe had measured 1.00, the core stayed passive for the
  // rest of the run at 77 % of the oracle's throughput). A batch that rose at the same pick says
  // the load changed; judged again, the entry's rules decide on it as it is now. Once per rise:
  // the new entry measures the batch the next rise is judged against. A rise within the counting
  // noise of the two batches (rejudge_sigmas standard deviations, as Poisson counts of the
  // interrupts behind each) is none: a core with a few dozen interrupts a period would otherwise
  // be judged again, and probed, every few periods.
  const auto n = static_cast<double>(in.interrupts);
  const bool rising =
      passive_ && p_.rejudge_batch_rise > 0 && judged_batch_ > 0 && judged_interrupts_ > 0 &&
      model_ix == judged_ix_ && in.interrupts >= p_.min_polls &&
      m.completions >
          n * judged_batch_ *
              (1 + std::max(p_.rejudge_batch_rise,
                            p_.rejudge_sigmas * std::sqrt(1 / n + 1 / judged_interrupts_)));
  rise_streak_ = rising ? static_cast<uint8_t>(rise_streak_ + 1) : 0;
  if (rise_streak_ < p_.enter_periods) return false;
  rise_streak_ = 0;
  ++rejudged_;
  saturated_ = false;  // no leave: the queues already run the latency objective's pick
  passive_ = false;
  left_overriding_ = false;
  streak_ = 0;
  qd1_wait_us_ = 0;  // the QD~1 verdict was on the old load
  return true;
}

bool SaturationPolicy::descend_if_idle(const ModelTable& t, const CostParams& cost,
                                       const SaturationInput& in, const Period& m,
                                       uint8_t model_ix) {
  const bool idle_left = p_.descend && !passive_ && in.wish_in_force && best_ix_ > model_ix &&
                         best_ix_ > lo_ + 1 && m.busy < p_.overload_busy && m.completions > 0;
  if (!idle_left) {
    idle_ = {};
    return false;
  }
  ++idle_.periods;
  idle_.completions += m.completions;
  idle_.ns += m.dt;
  idle_.busy_ns += m.busy * m.dt;
  idle_.interrupts += static_cast<double>(in.interrupts);
  if (idle_.periods < p_.enter_periods) return false;
  const IdleStreak at_best = idle_;
  idle_ = {};
  // Clear of pressure one profile down, as projected (busy_at(), as for leaving), the
  // interrupts it adds priced at descent_irq_margin times the core's cost: a descent into
  // overload grows a backlog for the period it is measured, which a short run's p99 shows
  // (unguarded, sweep-1-290, heavy-tailed service at 110 % of profile 0's capacity: p99 1.8x; at
  // the estimate's price, which the direct costs put low, sweep-2-126 from a batch of 6.9 to
  // about 1.3: p99 1.4x -> 19x).
  const auto below = static_cast<uint8_t>(best_ix_ - 1);
  const double busy = at_best.busy_ns / at_best.ns;
  const double projected = busy_at(t, cost, below, busy, at_best.completions,
                                   at_best.completions / std::max(at_best.interrupts, 1.0),
                                   at_best.ns, in.queues, p_.descent_irq_margin);
  if (!(busy < p_.enter_busy && projected < p_.enter_busy)) return false;
  best_rate_ = at_best.completions * 1e9 / at_best.ns;
  best_completions_ = at_best.completions;
  best_busy_ = busy;
  best_ipc_ = at_best.interrupts / at_best.completions;
  descent_ = true;
  return step_to(below);
}

bool SaturationPolicy::judge_descent(const ModelTable& t, const CostParams& cost,
                                     const SaturationInput& in) {
  descent_ = false;
  const double rate = acc_completions_ * 1e9 / acc_ns_;
  const double ipc = interrupts_per_completion();
  const double busy = acc_busy_ns_ / acc_ns_;
  const double q_rate = per_queue_rate(acc_completions_, acc_ns_, in.queues);
  // The latency objective with what the core measured: the cost model's delay, and the sojourn
  // at the measured busy and batch.
  auto latency = [&](uint8_t ix, double at_ipc, double at_busy) {
    const double delay =
        predict(t.params().timer, t.profile(ix).usec, t.count(ix), q_rate, cost).added_delay_ns;
    return delay + cpu_per_completion(cost, at_ipc) / (1 - std::min(at_busy, 0.999));
  };
  if (busy < p_.overload_busy && rate >= best_rate_ * (1 - gain_) &&
      latency(ix_, ipc, busy) < latency(best_ix_, best_ipc_, best_busy_)) {
    hi_ = best_ix_;
    best_ix_ = ix_;
    best_rate_ = rate;
    best_completions_ = acc_completions_;
    best_ipc_ = ipc;
    best_busy_ = busy;
    ++descents_.kept;
  } else {
    lo_ = ix_;
    ++descents_.back;
  }
  return hold_best();
}

}  // namespace dim
