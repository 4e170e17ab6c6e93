#include "dim/saturation.h"

#include <algorithm>
#include <cmath>

namespace dim {
namespace {

constexpr int64_t kMaxDtNs = 1000LL * 1'000'000'000;

double per_queue_rate(double completions, double dt_ns, double queues) {
  return completions * 1e9 / dt_ns / (queues > 1 ? queues : 1.0);  // NaN queues count as 1
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
}

uint8_t SaturationPolicy::next_up(const ModelTable& t, const CostParams& cost, uint8_t from,
                                  double rate) const {
  const ModelParams& mp = t.params();
  auto s_of = [&](uint8_t i) {
    return predict(mp.timer, t.profile(i).usec, t.count(i), rate, cost).cpu_per_completion_ns;
  };
  const double limit = s_of(from) / (1 + p_.climb_gain);
  for (uint8_t j = from + 1; j <= t.max_ix() && j > from; ++j) {
    if (s_of(j) <= limit) return j;
  }
  return from;
}

bool SaturationPolicy::step_to(uint8_t j) {
  const bool changed = j != ix_;
  ix_ = j;
  phase_ = Phase::kSettle;
  count_ = 0;
  acc_completions_ = acc_ns_ = 0;
  return changed;
}

bool SaturationPolicy::update(const ModelTable& t, const CostParams& cost,
                              const SaturationInput& in) {
  if (in.dt_ns <= 0) return false;
  const auto dt = static_cast<double>(std::min(in.dt_ns, kMaxDtNs));
  const auto completions = static_cast<double>(in.completions);
  const double busy = static_cast<double>(in.busy_ns) / dt;
  const bool polls_known = in.polls >= p_.min_polls;
  const double exhausted = polls_known
                               ? static_cast<double>(std::min(in.exhausted_polls, in.polls)) /
                                     static_cast<double>(in.polls)
                               : 0;
  const uint8_t model_ix = std::clamp(in.model_ix, t.min_ix(), t.max_ix());

  if (!saturated_) {
    const bool pressure =
        busy >= p_.enter_busy || exhausted >= p_.enter_exhausted || in.backlog_growing;
    if (!pressure) {
      streak_ = 0;
      acc_completions_ = acc_ns_ = 0;
      return false;
    }
    if (streak_ == 0) acc_completions_ = acc_ns_ = 0;
    acc_completions_ += completions;
    acc_ns_ += dt;
    if (++streak_ < p_.enter_periods) return false;
    // Enter: the pressure periods measured the latency objective's profile.
    saturated_ = true;
    streak_ = 0;
    ++episodes_;
    best_ix_ = ix_ = model_ix;
    best_rate_ = acc_completions_ * 1e9 / acc_ns_;
    const uint8_t j = next_up(t, cost, ix_, per_queue_rate(acc_completions_, acc_ns_, in.queues));
    if (j == ix_) {
      phase_ = Phase::kHold;
      return true;  // the wish is the same index, but it is now held
    }
    step_to(j);
    return true;
  }

  // Saturated: leave at once when the core would have headroom at the latency objective's pick.
  double projected = busy;
  if (model_ix != ix_ && in.interrupts > 0 && completions > 0) {
    const double rate = per_queue_rate(completions, dt, in.queues);
    const Profile& m = t.profile(model_ix);
    const double b_model = predict(t.params().timer, m.usec, t.count(model_ix), rate, cost).batch;
    const double b_now = completions / static_cast<double>(in.interrupts);
    const double c_irq = std::max(0.0, cost.interrupt_cost_ns);
    projected += completions * c_irq * (1 / b_model - 1 / b_now) / dt;
  }
  const bool headroom =
      projected < p_.leave_busy && exhausted < p_.leave_exhausted && !in.backlog_growing;
  if (headroom) {
    saturated_ = false;
    phase_ = Phase::kHold;
    return true;
  }

  switch (phase_) {
    case Phase::kHold:
      return false;
    case Phase::kSettle:
      phase_ = Phase::kMeasure;
      count_ = 0;
      acc_completions_ = acc_ns_ = 0;
      return false;
    case Phase::kMeasure:
      acc_completions_ += completions;
      acc_ns_ += dt;
      if (++count_ < p_.measure_periods) return false;
      break;
  }
  const double rate = acc_completions_ * 1e9 / acc_ns_;
  if (rate > best_rate_ * (1 + p_.climb_gain)) {
    best_rate_ = rate;
    best_ix_ = ix_;
    const uint8_t j = next_up(t, cost, ix_, per_queue_rate(acc_completions_, acc_ns_, in.queues));
    if (j != ix_) return step_to(j);
    phase_ = Phase::kHold;
    return false;
  }
  // No decisive gain: back to the best and hold.
  phase_ = Phase::kHold;
  const bool changed = ix_ != best_ix_;
  ix_ = best_ix_;
  return changed;
}

}  // namespace dim
