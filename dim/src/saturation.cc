#include "dim/saturation.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dim {
namespace {

constexpr int64_t kMaxDtNs = 1000LL * 1'000'000'000;

double per_queue_rate(double completions, double dt_ns, double queues) {
  return completions * 1e9 / dt_ns / (queues > 1 ? queues : 1.0);  // NaN queues count as 1
}

// The core's busy fraction projected to profile ix: `busy` measured over `dt_ns` with
// `completions` at `batch_now` completions per interrupt, the interrupts ix would take instead
// (the cost model's batch there, at the measured per-queue rate) priced at `irq_factor` times the
// core's interrupt cost. Batching is what frees a core, so a profile's headroom is judged at its
// own batch, not at the one measured (the leave and the descent).
double busy_at(const ModelTable& t, const CostParams& cost, uint8_t ix, double busy,
               double completions, double batch_now, double dt_ns, double queues,
               double irq_factor) {
  const double rate = per_queue_rate(completions, dt_ns, queues);
  const double b_ix = predict(t.params().timer, t.profile(ix).usec, t.count(ix), rate, cost).batch;
  const double c_irq = std::max(0.0, cost.interrupt_cost_ns);
  return busy + completions * c_irq * irq_factor * (1 / b_ix - 1 / batch_now) / dt_ns;
}

}  // namespace

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

uint8_t SaturationPolicy::jump_from(const ModelTable& t, const CostParams& cost, uint8_t from,
                                    double rate) const {
  const ModelParams& mp = t.params();
  auto s_of = [&](uint8_t i) {
    return predict(mp.timer, t.profile(i).usec, t.count(i), rate, cost).cpu_per_completion_ns;
  };
  const uint16_t end = std::min<uint16_t>(hi_, uint16_t{t.max_ix()} + 1);
  double least = s_of(from);
  for (uint16_t j = from + 1; j < end; ++j) least = std::min(least, s_of(static_cast<uint8_t>(j)));
  if (!(least * (1 + p_.climb_gain) < s_of(from))) return from;
  for (uint16_t j = from + 1; j < end; ++j) {
    if (s_of(static_cast<uint8_t>(j)) <= least * (1 + p_.climb_gain)) {
      // The episode's first jump goes halfway: the cost model does not know a closed loop's
      // depth, and a jump past what it can batch costs the loop most of its rate while it is
      // measured. Each gain measured lets the next jump go twice as far.
      const auto reach =
          static_cast<uint16_t>(step_ != 0 ? step_ : std::max(1, (j - from + 1) / 2));
      return static_cast<uint8_t>(std::min<uint16_t>(j, from + reach));
    }
  }
  return from;
}

uint8_t SaturationPolicy::qd1_probe(const ModelTable& t, const CostParams& cost, uint8_t from,
                                    double rate) const {
  const ModelParams& mp = t.params();
  const double s_from =
      predict(mp.timer, t.profile(from).usec, t.count(from), rate, cost).cpu_per_completion_ns;
  for (uint16_t k = from + 1; k <= t.max_ix(); ++k) {
    const auto ix = static_cast<uint8_t>(k);
    const Prediction pr = predict(mp.timer, t.profile(ix).usec, t.count(ix), rate, cost);
    if (pr.batch < p_.qd1_judge_batch) continue;
    // The first profile whose batch can tell a QD~1 loop from a batching one; a QD~1 loop pays
    // its delay for the period measured, so only where the saving predicted is worth that. On a
    // core never idle any saving a trial can measure is: its backlog only grows.
    const double gain = best_busy_ >= p_.overload_busy ? p_.climb_gain : p_.qd1_probe_gain;
    return pr.cpu_per_completion_ns <= s_from * (1 - gain) ? ix : from;
  }
  return from;
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

bool SaturationPolicy::climb(const ModelTable& t, const CostParams& cost, const SaturationInput& in,
                             const Period& m) {
  switch (phase_) {
    case Phase::kHold:
    case Phase::kCheck:
      return false;
    case Phase::kSettle:
      if (++count_ < p_.settle_periods) return false;
      phase_ = Phase::kMeasure;
      start_measuring();
      return false;
    case Phase::kMeasure:
      acc_completions_ += m.completions;
      acc_busy_ns_ += m.busy * m.dt;
      acc_interrupts_ += static_cast<double>(in.interrupts);
      acc_probe_events_ += static_cast<double>(in.probe_events);
      acc_probe_completions_ += static_cast<double>(in.probe_completions);
      acc_ns_ += m.dt;
      if (++count_ < p_.measure_periods) return false;
      break;
  }
  if (descent_) return judge_descent(t, cost, in);
  if (probe_) {
    // The probe queue's batch at the probe's profile (the core's other queues stayed at the
    // latency objective's pick: the core's own rate says nothing about it).
    probe_ = false;
    const double q_rate = per_queue_rate(acc_completions_, acc_ns_, in.queues);
    const uint8_t j = jump_from(t, cost, best_ix_, q_rate);
    if (acc_probe_completions_ > p_.no_batch_ratio * acc_probe_events_ && j != best_ix_) {
      // It batches: the climb proper, every queue, from the entry's profile.
      ++probes_.batching;
      step_to(j);
      return true;
    }
    // One completion per interrupt at a timer the cost model predicts to batch (or nothing
    // measured): QD~1, which moderation only delays. Nothing to climb to, and no probe on this
    // core for a while.
    qd1_wait_us_ = p_.qd1_retry_ms * 1000;
    ++probes_.qd1;
    passive_ = true;
    ix_ = best_ix_;
    phase_ = Phase::kHold;
    return true;
  }
  const double rate = acc_completions_ * 1e9 / acc_ns_;
  const double ipc = interrupts_per_completion();
  const double busy = acc_busy_ns_ / acc_ns_;
  const bool up = ix_ > best_ix_;
  // A trial above a best that left the core never idle (an overload): its CPU per completion,
  // the measured batch priced at the core's costs, against the best's.
  const bool overloaded = up && best_busy_ >= p_.overload_busy && best_ipc_ > 0 && ipc > 0;
  const double cpu_ratio =
      overloaded ? cpu_per_completion(cost, ipc) / cpu_per_completion(cost, best_ipc_) : 1;
  const bool cpu_gain = overloaded && cpu_ratio < 1 - gain_;
  // On an overloaded core the rate is worse only beyond its counting noise (overload_sigmas):
  // a trial at 2 measured 3.3 % below a best at 0 whose two pressure periods had drawn 2 % above
  // the offered rate, and the core held 0, never idle, its application's backlog growing for
  // the rest of the run (sweep-1-003: p99 220x the oracle's).
  auto worse_for = [&](double completions) {
    return cpu_gain ? std::max(gain_,
                               p_.overload_sigmas * std::sqrt(1 / std::max(completions, 1.0) +
                                                              1 / std::max(best_completions_, 1.0)))
                    : gain_;
  };
  const double worse = worse_for(acc_completions_);
  // The two measures disagree on an overloaded core: less rate, less CPU per completion. One
  // period of a noisy load says little about the rate (sweep-2-224, cv 2.4: 4.7 % less in one
  // period, a core held at the livelocked profile for good); one more period decides.
  if (cpu_gain && !extended_ && rate < best_rate_ * (1 - worse) && m.busy >= p_.leave_busy) {
    extended_ = true;
    --count_;
    return false;
  }
  // The extra period alone, where it left the core idle time: raising the moderation of an open
  // loop holds back its rate times the added delay once, in the first period, and the extra
  // period polls the offered rate again with CPU to spare. A gain, not a loss (sweep-1-044: a
  // first period 9.5 % below, the next at the best's rate with the core 25 % idle; judged on
  // both, the core went back to 0, never idle, p99 166x the oracle's).
  const bool drained = extended_ && m.busy < p_.overload_busy &&
                       m.completions * 1e9 / m.dt >= best_rate_ * (1 - worse_for(m.completions));
  if (rate > best_rate_ * (1 + gain_)) {
    if (up) {
      lo_ = best_ix_;
    } else {
      hi_ = best_ix_;
    }
    take_best(rate, ipc, busy);
    if (up) step_ = static_cast<uint8_t>(std::min(2 * (ix_ - lo_), 128));
  } else if (rate < best_rate_ * (1 - worse) && !drained) {
    if (up) {
      hi_ = ix_;
    } else {
      lo_ = ix_;
    }
    // Worse, and the core has headroom: either the trial throttled a closed loop (back at the
    // best the core saturates again) or the load left. Back to the best to tell which: the
    // check periods judge leaving there, and resume the search if the core is still saturated.
    if (m.busy < p_.leave_busy) {
      const bool changed = hold_best();
      phase_ = Phase::kCheck;
      count_ = 0;
      return changed;
    }
    // Worse with the core still saturated: more batching cost completions on a core it should
    // have freed. Not a closed loop's overshoot (that idles the core), but an open loop whose
    // backlog the trial grew, or noise: another trial would only grow it more. Back and hold.
    if (up) return hold_best();
  } else if (overloaded && cpu_ratio < 1) {
    // The rate held (within the noise on an overloaded core, where both rates are the offered
    // rate) and the interrupts cost less per completion, by however little: the CPU freed went
    // to the work they starved (an open loop polled at its offered rate on a livelocked core). A
    // gain, and the climb goes on from it (sweep-2-021: a trial at 4 measured 1.7 % less rate,
    // the core went back to 0 and stayed never idle, p99 620x the oracle's; sweep-2-195 held 1
    // at 81 % of the oracle's throughput, climbing on reaches 102 %). The best rate stays the
    // highest measured, so a closed loop losing a little rate at each such step stops within g
    // of its best.
    lo_ = best_ix_;
    take_best(rate, ipc, busy);
    step_ = static_cast<uint8_t>(std::min(2 * (ix_ - lo_), 128));
  } else {
    // The rate does not answer to moderation by more than the noise: limited elsewhere, or the
    // gain is smaller than the verdict can tell. Hold whichever measured the higher rate: the
    // trial was predicted to save CPU, and within the noise it cost nothing (W3 4k: 0 -> 4 gained
    // 21 %, 4 -> 7 another 2.1 %, under a verdict needing 2.2 %; going back to 4 held 3 % below
    // the best static profile for good). On an overloaded core, a trial that costs no less CPU
    // per completion: the best.
    if (!overloaded && rate > best_rate_) take_best(rate, ipc, busy);
    return hold_best();
  }
  const uint8_t j = next_trial(t, cost, per_queue_rate(acc_completions_, acc_ns_, in.queues));
  return j != best_ix_ ? step_to(j) : hold_best();
}

uint8_t SaturationPolicy::next_trial(const ModelTable& t, const CostParams& cost, double rate) {
  // Above the best: the cost model's jump until a profile up there measured worse, then
  // bisection of what is left below it.
  if (hi_ > t.max_ix()) {
    const uint8_t j = jump_from(t, cost, best_ix_, rate);
    if (j != best_ix_) return j;
    // Nothing above is predicted to pay: the step above, once an episode. The Poisson model does
    // not see a closed loop's batches (W3 512B: 16 at (32 us, 16), 21.3 at (32 us, 32), predicted
    // alike; the climb held 7, 1 % below the best static profile and kernel DIM). Only a gain
    // leads here with nothing above measured worse (a trial up that did not gain set hi_ or held),
    // so batching has already paid on this core.
    if (p_.edge_step && !edge_tried_ && best_ix_ < t.max_ix()) {
      edge_tried_ = true;
      return static_cast<uint8_t>(best_ix_ + 1);
    }
  } else if (hi_ - best_ix_ >= 2) {
    return static_cast<uint8_t>(best_ix_ + (hi_ - best_ix_) / 2);
  }
  // Below it, once a profile above the best measured worse (the jump may have overshot a closed
  // loop's best; without that sign a probe down only costs throughput): bisection of what lies
  // above lo, the upper middle first (the jump overshoots by little more often than by much).
  if (hi_ <= t.max_ix() && best_ix_ - lo_ >= 2) {
    return static_cast<uint8_t>(best_ix_ - (best_ix_ - lo_) / 2);
  }
  return best_ix_;
}

void SaturationPolicy::take_best(double rate, double ipc, double busy) {
  best_ix_ = ix_;
  if (rate > best_rate_) {
    best_rate_ = rate;
    best_completions_ = acc_completions_;
  }
  best_ipc_ = ipc;
  best_busy_ = busy;
}

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

bool SaturationPolicy::hold_best() {
  phase_ = Phase::kHold;
  const bool changed = ix_ != best_ix_;
  ix_ = best_ix_;
  return changed;
}

}  // namespace dim
