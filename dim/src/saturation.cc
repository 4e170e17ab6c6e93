// SaturationPolicy's detector (saturation.h): one period's measures, the pressure streak,
// entering and leaving saturation, and the holding phase's bookkeeping.
#include "dim/saturation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "saturation_math.h"

namespace dim {

using saturation::busy_at;
using saturation::kMaxDtNs;
using saturation::per_queue_rate;

SaturationPolicy::SaturationPolicy(const SaturationParams& params) : p_(params) {
  p_.enter_busy = std::clamp(p_.enter_busy, 0.0, 10.0);
  p_.leave_busy = std::clamp(p_.leave_busy, 0.0, p_.enter_busy);
  p_.enter_periods = std::max<uint8_t>(p_.enter_periods, 1);
  p_.enter_exhausted = std::clamp(p_.enter_exhausted, 0.0, 1.0);
  p_.leave_exhausted = std::clamp(p_.leave_exhausted, 0.0, p_.enter_exhausted);
  p_.climb_gain = std::clamp(p_.climb_gain, 0.0, 10.0);
  p_.measure_periods = std::max<uint8_t>(p_.measure_periods, 1);
  p_.qd1_judge_batch = std::clamp(p_.qd1_judge_batch, 0.0, 1e6);  // NaN: never probes
  p_.qd1_retry_ms = std::min<uint32_t>(p_.qd1_retry_ms, 3'600'000);
  p_.qd1_probe_gain = std::clamp(p_.qd1_probe_gain, 0.0, 1.0);
  p_.overload_sigmas = std::clamp(p_.overload_sigmas, 0.0, 100.0);  // NaN: 0, the gain alone
  // NaN stays NaN: no projection passes, no descent.
  p_.descent_irq_margin = std::clamp(p_.descent_irq_margin, 0.0, 100.0);
  p_.rejudge_batch_rise = std::clamp(p_.rejudge_batch_rise, 0.0, 100.0);  // NaN: never
  p_.rejudge_sigmas = std::clamp(p_.rejudge_sigmas, 0.0, 100.0);          // NaN: the rise alone
}

double SaturationPolicy::interrupts_per_completion() const {
  return acc_completions_ > 0 && acc_interrupts_ > 0 ? acc_interrupts_ / acc_completions_ : 0;
}

double SaturationPolicy::cpu_per_completion(const CostParams& cost, double ipc) {
  return std::max(0.0, cost.completion_cost_ns) + std::max(0.0, cost.interrupt_cost_ns) * ipc;
}

bool SaturationPolicy::step_to(uint8_t j) {
  const bool changed = j != ix_;
  ix_ = j;
  phase_ = p_.settle_periods > 0 ? Phase::kSettle : Phase::kMeasure;
  extended_ = false;
  start_measuring();
  return changed;
}

void SaturationPolicy::start_measuring() {
  count_ = 0;
  acc_completions_ = acc_ns_ = acc_interrupts_ = acc_busy_ns_ = 0;
  acc_probe_events_ = acc_probe_completions_ = 0;
}

SaturationPolicy::Period SaturationPolicy::period_of(const SaturationInput& in) const {
  Period m;
  m.dt = static_cast<double>(std::min(in.dt_ns, kMaxDtNs));
  m.completions = static_cast<double>(in.completions);
  m.busy = static_cast<double>(in.busy_ns) / m.dt;
  // Exhausted polls say the poll loop falls behind only on a busy core: with idle time left they
  // say the batches outgrew the budget (a long timer, a burst), which a core that is a quarter
  // busy absorbs (sweep-2-254: 256-packet batches on a 64 budget read as saturation at busy 0.3,
  // and the rule held the batching it should have left).
  if (in.polls >= p_.min_polls && m.busy >= p_.leave_busy) {
    m.exhausted =
        static_cast<double>(std::min(in.exhausted_polls, in.polls)) / static_cast<double>(in.polls);
  }
  return m;
}

bool SaturationPolicy::count_pressure(const SaturationInput& in, const Period& m) {
  const bool pressure =
      m.busy >= p_.enter_busy || m.exhausted >= p_.enter_exhausted || in.backlog_growing;
  if (!pressure) {
    streak_ = 0;
    acc_completions_ = acc_ns_ = 0;
    return false;
  }
  if (streak_ == 0) {
    acc_completions_ = acc_ns_ = acc_interrupts_ = acc_busy_ns_ = 0;
    min_rate_ = std::numeric_limits<double>::infinity();
    max_rate_ = 0;
  }
  const double period_rate = m.completions * 1e9 / m.dt;
  min_rate_ = std::min(min_rate_, period_rate);
  max_rate_ = std::max(max_rate_, period_rate);
  acc_completions_ += m.completions;
  acc_interrupts_ += static_cast<double>(in.interrupts);
  acc_busy_ns_ += m.busy * m.dt;
  acc_ns_ += m.dt;
  return ++streak_ >= p_.enter_periods;
}

void SaturationPolicy::restart() {
  SaturationPolicy fresh(p_);
  fresh.episodes_ = episodes_;
  fresh.probes_ = probes_;
  fresh.descents_ = descents_;
  fresh.rejudged_ = rejudged_;
  *this = fresh;
}

void SaturationPolicy::pressure_without_objective(const SaturationInput& in) {
  if (saturated_ || in.dt_ns <= 0 || in.completions == 0) return;
  // Never enters here: entering needs the objective's table. The streak stops one short.
  if (count_pressure(in, period_of(in))) --streak_;
}

bool SaturationPolicy::update(const ModelTable& t, const CostParams& cost,
                              const SaturationInput& in) {
  if (in.dt_ns <= 0) return false;
  const Period m = period_of(in);
  const uint8_t model_ix = std::clamp(in.model_ix, t.min_ix(), t.max_ix());
  const auto dt_us = static_cast<uint64_t>(m.dt / 1000);
  qd1_wait_us_ = dt_us >= qd1_wait_us_ ? 0 : qd1_wait_us_ - static_cast<uint32_t>(dt_us);
  since_leave_us_ = since_leave_us_ > UINT64_MAX - dt_us ? UINT64_MAX : since_leave_us_ + dt_us;
  leave_hold_us_ = dt_us >= leave_hold_us_ ? 0 : leave_hold_us_ - dt_us;

  if (!saturated_) {
    if (!count_pressure(in, m)) return false;
    // Enter: the pressure periods measured the latency objective's profile.
    saturated_ = true;
    streak_ = 0;
    ++episodes_;
    // Entering again this soon after leaving, with no more load than the core left at (the
    // latency objective's profile may serve less of it): the leave was wrong. More load is a
    // new episode (a burst after a quiet spell).
    const uint64_t base_hold = uint64_t{p_.leave_hold_ms} * 1000;
    if (left_overriding_ && since_leave_us_ <= uint64_t{p_.refail_ms} * 1000 &&
        acc_completions_ * 1e9 / acc_ns_ <= left_rate_ * (1 + gain_)) {
      leave_hold_us_ = std::max(next_hold_us_, base_hold);
      next_hold_us_ = std::min(2 * leave_hold_us_, uint64_t{p_.leave_hold_max_ms} * 1000);
    } else {
      leave_hold_us_ = 0;
      next_hold_us_ = base_hold;
    }
    best_ix_ = ix_ = lo_ = model_ix;
    hi_ = uint16_t{t.max_ix()} + 1;
    edge_tried_ = false;
    reopened_ = false;
    descent_ = false;
    idle_ = {};
    overload_streak_ = 0;
    best_rate_ = acc_completions_ * 1e9 / acc_ns_;
    // Moderation can only save interrupts that happen, and only by batching. Few interrupts: the
    // queues stay in polling (their budget runs out, they never re-arm), nothing to moderate.
    // One completion per interrupt at the latency objective's profile: each queue has one
    // completion outstanding at a time (a QD~1 closed loop), which no moderation batches, only
    // delays. Either way saturated, but nothing to climb to (ModelPolicy's QD~1 rule, per core);
    // a trial would only lose rate, which an overloaded open loop never wins back.
    // At most no_batch_ratio at a profile the cost model predicts to batch less than
    // qd1_judge_batch says nothing (a Poisson stream of 25k/s batches 1.03 at a 1 us timer).
    const double rate = per_queue_rate(acc_completions_, acc_ns_, in.queues);
    const bool ratio_batches = acc_completions_ > p_.no_batch_ratio * acc_interrupts_;
    const bool qd1_unknown =
        !ratio_batches && qd1_wait_us_ == 0 &&
        predict(t.params().timer, t.profile(ix_).usec, t.count(ix_), rate, cost).batch <
            p_.qd1_judge_batch;
    const bool batches = acc_interrupts_ >= p_.min_polls && (ratio_batches || qd1_unknown);
    best_ipc_ = interrupts_per_completion();
    judged_batch_ = best_ipc_ > 0 ? 1 / best_ipc_ : 0;
    judged_interrupts_ = acc_interrupts_;
    judged_ix_ = model_ix;
    rise_streak_ = 0;
    best_busy_ = acc_busy_ns_ / acc_ns_;
    best_completions_ = acc_completions_;
    // A trial is judged on one period's rate against the best's: the rate must hold still
    // enough between periods for a gain of climb_gain to show (bursts, on/off sources and
    // closed loops whose depth moves do not). The spread of the pressure periods' rates says how
    // much it moves by itself; a verdict needs twice that.
    noise_ = max_rate_ > 0 ? (max_rate_ - min_rate_) / max_rate_ : 0;
    gain_ = std::max(p_.climb_gain, 2 * noise_);
    const bool steady = noise_ <= p_.max_noise;
    step_ = 0;  // the first jump: halfway
    // Where the ratio said nothing (the profile in force could not batch anyway), a probe on one
    // queue tells first (probing()).
    uint8_t j = ix_;
    if (batches && steady) {
      j = ratio_batches ? jump_from(t, cost, ix_, rate) : qd1_probe(t, cost, ix_, rate);
    }
    passive_ = j == ix_;
    probe_ = !passive_ && !ratio_batches;
    if (passive_) {
      phase_ = Phase::kHold;
      return true;  // saturated, with nothing to climb to: the latency objective's pick stands
    }
    step_to(j);
    return true;
  }
  // Nothing to climb to: the latency objective's pick, wherever it moves (a hold at its pick of
  // the entry kept a core at profile 0 while its on/off load called for 60-packet batches,
  // sweep-2-109).
  if (passive_) ix_ = best_ix_ = model_ix;

  // Saturated: leave at once when the core would have headroom at the latency objective's pick,
  // judged at the best profile only. A trial's periods say how the trial does, not whether the
  // load left: a trial that delays a closed loop idles the core by throttling it, and leaving
  // then would hand back to the profile that saturates, enter again and cycle. The trial ends
  // within settle_periods + measure_periods periods anyway.
  if (!in.wish_in_force && phase_ != Phase::kHold) {
    // The period ran at another profile than the trial's or the check's: it says nothing of it.
    start_measuring();
    if (phase_ == Phase::kMeasure && p_.settle_periods > 0) phase_ = Phase::kSettle;
    return false;
  }
  if (phase_ == Phase::kSettle || phase_ == Phase::kMeasure) {
    return climb(t, cost, in, m);
  }
  const double projected =
      model_ix != ix_ && in.interrupts > 0 && m.completions > 0
          ? busy_at(t, cost, model_ix, m.busy, m.completions,
                    m.completions / static_cast<double>(in.interrupts), m.dt, in.queues, 1)
          : m.busy;
  const bool headroom =
      projected < p_.leave_busy && m.exhausted < p_.leave_exhausted && !in.backlog_growing;
  const double rate_now = m.completions * 1e9 / m.dt;
  // A passive episode leaves freely: its queues already run the latency objective's pick.
  const bool held = leave_hold_us_ > 0 && !passive_ && rate_now >= left_rate_ * (1 - gain_);
  if (headroom && !held) {
    left_overriding_ = overrides();
    saturated_ = false;
    phase_ = Phase::kHold;
    since_leave_us_ = 0;
    left_rate_ = rate_now;
    leave_hold_us_ = 0;
    return true;
  }
  if (phase_ == Phase::kHold) {
    return rejudge_if_batching(in, m, model_ix) || reopen_if_overloaded(t, cost, in, m) ||
           descend_if_idle(t, cost, in, m, model_ix);
  }
  // kCheck: back at the best after a settling period and still saturated: the trial was worse
  // on its own account. The search goes on.
  if (++count_ < 2) return false;
  const uint8_t j = next_trial(t, cost, per_queue_rate(m.completions, m.dt, in.queues));
  return j != best_ix_ ? step_to(j) : hold_best();
}

bool SaturationPolicy::hold_best() {
  phase_ = Phase::kHold;
  const bool changed = ix_ != best_ix_;
  ix_ = best_ix_;
  return changed;
}

}  // namespace dim
